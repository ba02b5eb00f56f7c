"""Arc-eager for the ISBN parser: a thin wrapper of :mod:`parsing.transition.arc_eager`.

Titov (2008, ch. 5.1) parses in Nivre's arc-eager order with ROOT at the bottom of the stack.
The moves are those of the repository's :class:`~parsing.transition.arc_eager.ArcEager` (its
RIGHT_ARC pushes the dependent, i.e. it also shifts; Titov's split RIGHT_ARC + SHIFT is the same
derivation with one decision fewer). Moves are indexed ``SHIFT, REDUCE, LEFT, RIGHT`` (0-3).

On top of the system's validity, :func:`valid_moves` allows ROOT one dependent only (UD trees
have one ROOT child). A derivation ends when the buffer is empty; words left on the stack
without a head are attached by :func:`attach_leftovers` (Titov's CoNLL 2007 post-processing).

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.transition.arc_eager import ArcEager
from parsing.transition.pseudo_projective import deprojectivize, projectivize
from parsing.transition.state import NONE, Action, State

__all__ = ["deprojectivize", "projectivize"]

SHIFT, REDUCE, LEFT, RIGHT = 0, 1, 2, 3
MOVES = (Action.SHIFT, Action.REDUCE, Action.LEFT_ARC, Action.RIGHT_ARC)
N_MOVES = len(MOVES)
CONSUMES = (True, False, False, True)
"""Whether a move takes a word from the buffer (the beam is pruned after these: §2.7)."""

SYSTEM = ArcEager()

IntArray = NDArray[np.int64]


def decision_codes(moves: IntArray, labels: IntArray, n_labels: int) -> IntArray:
    """One code per step, the column of its last decision in the ``4 + 2L`` decision space
    (columns ``0..3`` the moves, then the ``L`` LEFT labels, then the ``L`` RIGHT labels):
    SHIFT and REDUCE give their move, an arc ``4 + label`` (LEFT) or ``4 + L + label`` (RIGHT).
    ``moves``, ``labels`` (label ids, ignored for SHIFT and REDUCE): shape ``(T,)``.

    Examples:
        >>> decision_codes(np.array([SHIFT, LEFT, RIGHT, REDUCE]), np.array([-1, 2, 0, -1]), 3).tolist()
        [0, 6, 7, 1]
    """
    arcs = np.where(moves == LEFT, N_MOVES + labels, N_MOVES + n_labels + labels)
    codes: IntArray = np.where((moves == LEFT) | (moves == RIGHT), arcs, moves).astype(np.int64)
    return codes


def split_codes(codes: IntArray, n_labels: int) -> tuple[IntArray, IntArray]:
    """The moves and label ids (``-1`` for SHIFT and REDUCE) of :func:`decision_codes`' codes,
    shape ``(T,)`` each; a code outside ``0, 1, 4..4+2L-1`` gives move ``-1``.

    Examples:
        >>> [part.tolist() for part in split_codes(np.array([0, 6, 7, 1, 2]), 3)]
        [[0, 2, 3, 1, -1], [-1, 2, 0, -1, -1]]
    """
    left = (codes >= N_MOVES) & (codes < N_MOVES + n_labels)
    right = (codes >= N_MOVES + n_labels) & (codes < N_MOVES + 2 * n_labels)
    plain = (codes == SHIFT) | (codes == REDUCE)
    moves = np.select([left, right, plain], [LEFT, RIGHT, codes], -1)
    labels = np.select([left, right], [codes - N_MOVES, codes - N_MOVES - n_labels], -1)
    return moves.astype(np.int64), labels.astype(np.int64)


def start(n: int) -> State:
    """The initial configuration of an ``n``-word sentence: ROOT on the stack."""
    return SYSTEM.initial(n)


def is_final(state: State) -> bool:
    """True when the buffer is empty."""
    return SYSTEM.is_terminal(state)


def valid_moves(state: State) -> NDArray[np.bool_]:
    """Validity of each move, shape ``(4,)``; ROOT takes at most one dependent."""
    valid = np.array([SYSTEM.is_valid(state, move) for move in MOVES], dtype=bool)
    if state.stack[-1] == 0 and state.rightmost[0] != NONE:
        valid[RIGHT] = False
    return valid


def dependent(state: State, move: int) -> int:
    """The word an arc move attaches, ``-1`` otherwise."""
    return SYSTEM.dependent(state, MOVES[move])


def apply(state: State, move: int, label: int) -> None:
    """Apply ``move`` (with label id ``label`` for arcs) to ``state`` in place."""
    SYSTEM.apply(state, MOVES[move], label)


def oracle_move(state: State, gold_heads: NDArray[np.intp]) -> int:
    """The static oracle: the first zero-cost valid move in the order LEFT, RIGHT, REDUCE, SHIFT
    (exact for projective single-rooted trees, followed from the initial configuration)."""
    valid = valid_moves(state)
    for move in (LEFT, RIGHT, REDUCE, SHIFT):
        if valid[move] and SYSTEM.cost(state, MOVES[move], gold_heads) == 0:
            return move
    raise ValueError("no zero-cost move: the gold tree is not projective or not single-rooted")


def attach_leftovers(heads: NDArray[np.intp], labels: NDArray[np.intp], root_label: int,
                     fallback_label: NDArray[np.intp], upos_ids: NDArray[np.intp]) -> None:
    """Give every headless word a head, in place (Titov 2008 §5 post-processing, simplified).

    Without a ROOT child, the first headless word becomes it (label ``root_label``); every other
    headless word attaches to the ROOT child with ``fallback_label[upos_ids[word]]`` (the most
    frequent non-root label of its UPOS). The ROOT child has head 0, so no cycle appears.
    """
    headless = [w for w in range(1, len(heads)) if heads[w] == NONE]
    if not headless:
        return
    children = np.flatnonzero(heads[1:] == 0) + 1
    if len(children) == 0:
        top = headless.pop(0)
        heads[top], labels[top] = 0, root_label
    else:
        top = int(children[0])
    for word in headless:
        heads[word], labels[word] = top, int(fallback_label[upos_ids[word]])
