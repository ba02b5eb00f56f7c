"""A thin wrapper of the arc-hybrid system of :mod:`parsing.transition` for the neural parser.

Why arc-hybrid (Kuhlmann et al. 2011) with pseudo-projective lifting (Nivre & Nilsson 2005):
every derivation of an ``n``-word sentence takes exactly ``2n`` transitions (``n`` shifts,
``n`` arcs), so all hypotheses of a beam have made the same number of decisions and their
summed log-probabilities compare fairly (the role of Titov's synchronisation on Shift);
arc-eager's derivations vary in length and swap's are up to quadratic. Its static oracle is
simple and its configurations fit Chen & Manning's stack/buffer features. Non-projective
trees are lifted before training and restored after parsing, as in Titov's CoNLL 2007
system.

On top of the system's own validity, :func:`valid_moves` adds the single-root constraint:
ROOT (at the bottom of the stack) takes its one dependent only as the very last transition,
so every output is a tree with exactly one word attached to ROOT.

Moves are the unlabelled transitions ``SHIFT, LEFT, RIGHT`` (indices ``0, 1, 2``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.transition.arc_hybrid import ArcHybrid
from parsing.transition.pseudo_projective import deprojectivize, projectivize
from parsing.transition.state import Action, State

__all__ = ["deprojectivize", "projectivize"]

SHIFT, LEFT, RIGHT = 0, 1, 2
MOVES = (Action.SHIFT, Action.LEFT_ARC, Action.RIGHT_ARC)
N_MOVES = len(MOVES)

_SYSTEM = ArcHybrid()


def start(n: int) -> State:
    """The initial configuration of an ``n``-word sentence: ROOT on the stack."""
    return _SYSTEM.initial(n)


def is_final(state: State) -> bool:
    """True when the buffer is empty and only ROOT is left on the stack."""
    return _SYSTEM.is_terminal(state)


def stack_top(state: State) -> list[int]:
    """Positions of s0, s1, s2 (``-1`` when absent); the buffer is ``state.buffer..n`` (arc-hybrid
    never puts words back)."""
    stack = state.stack
    return [stack[-1 - i] if i < len(stack) else -1 for i in range(3)]


def valid_moves(state: State) -> list[bool]:
    """Validity of each move, with ROOT's single dependent attached last."""
    valid = [_SYSTEM.is_valid(state, move) for move in MOVES]
    stack = state.stack
    if len(stack) >= 2 and stack[-2] == 0 and not state.buffer_empty:
        valid[RIGHT] = False
    if stack[-1] == 0:
        valid[LEFT] = valid[RIGHT] = False
    return valid


def dependent(state: State, move: int) -> int:
    """The word an arc move attaches, ``-1`` for SHIFT."""
    return _SYSTEM.dependent(state, MOVES[move])


def advance(state: State, move: int, label: int) -> State:
    """A new configuration: ``state`` after ``move`` (``state`` is left unchanged)."""
    new = state.copy()
    _SYSTEM.apply(new, MOVES[move], label)
    return new


def oracle_move(state: State, gold_heads: NDArray[np.intp]) -> int:
    """The static oracle's move: the first zero-cost valid move in the order LEFT, RIGHT, SHIFT."""
    valid = valid_moves(state)
    for move in (LEFT, RIGHT, SHIFT):
        if valid[move] and _SYSTEM.cost(state, MOVES[move], gold_heads) == 0:
            return move
    raise ValueError("no zero-cost move: the gold tree is not projective or not single-rooted")


def move_costs(state: State, gold_heads: NDArray[np.intp]) -> list[int | None]:
    """The dynamic oracle's cost of each move (gold arcs it makes unreachable; Goldberg & Nivre
    2013), ``None`` where the move is not valid (:func:`valid_moves`)."""
    return [_SYSTEM.cost(state, MOVES[move], gold_heads) if ok else None
            for move, ok in enumerate(valid_moves(state))]
