"""Arc-eager (Nivre 2003) with the exact dynamic oracle of Goldberg & Nivre (2012).

Configuration: stack ``σ`` (ROOT at the bottom, never popped), buffer ``β = buffer..n``,
arcs. The parse ends when the buffer is empty; words left on the stack without a head
are roots for the parser's post-processing (see :mod:`parsing.transition.parser`).

Arc-eager is arc-decomposable for projective trees (Goldberg & Nivre 2013): a gold arc
``h → d`` (``d`` still headless) stays reachable unless ``h`` or ``d`` has been popped or
both are on the stack. The cost of an action is therefore the number of gold arcs that
are reachable before it and not after it, which each move computes directly.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from parsing.transition.state import NONE, Action, Move, State, TransitionSystem


def _dependents_in_buffer(state: State, word: int, gold_heads: NDArray[np.intp]) -> int:
    return int(np.count_nonzero(gold_heads[state.buffer :] == word))


class Shift(Move):
    """SHIFT: push the front of the buffer ``b`` onto the stack.

    Validity:
        The buffer is not empty.
    Cost:
        ``b``'s gold head if it is on the stack, plus ``b``'s gold dependents on the stack
        that are still headless: once ``b`` is on the stack too, no arc can join them.
    Effect:
        ``σ, b|β → σ|b, β``.
    """

    def is_valid(self, state: State) -> bool:
        return not state.buffer_empty

    def apply(self, state: State, label: int) -> None:
        state.stack.append(state.pop_buffer())

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        b = state.buffer
        # b's head on the stack: shifting b makes that right arc impossible.
        cost = int(gold_heads[b] in state.stack)
        # b's headless dependents on the stack: the left arcs from b become impossible.
        return cost + sum(1 for k in state.stack if gold_heads[k] == b and state.heads[k] == NONE)


class Reduce(Move):
    """REDUCE: pop the top of the stack ``s``, which already has a head.

    Validity:
        ``s`` is a word (not ROOT) with a head.
    Cost:
        ``s``'s gold dependents still in the buffer (they can no longer attach to ``s``).
    Effect:
        ``σ|s, β → σ, β``.
    """

    def is_valid(self, state: State) -> bool:
        s = state.stack[-1]
        return s != 0 and state.heads[s] != NONE

    def apply(self, state: State, label: int) -> None:
        state.stack.pop()

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        return _dependents_in_buffer(state, state.stack[-1], gold_heads)


class LeftArc(Move):
    """LEFT_ARC(l): attach the top of the stack ``s`` to the front of the buffer ``b``, pop ``s``.

    Validity:
        The buffer is not empty; ``s`` is a word (not ROOT) without a head.
    Cost:
        ``s``'s gold head if it is in the buffer but is not ``b``, plus ``s``'s gold
        dependents in the buffer (``s`` leaves the stack for good).
    Effect:
        ``σ|s, b|β → σ, b|β`` and the arc ``b →l s``.
    """

    def is_valid(self, state: State) -> bool:
        s = state.stack[-1]
        return not state.buffer_empty and s != 0 and state.heads[s] == NONE

    def apply(self, state: State, label: int) -> None:
        state.add_arc(state.buffer, state.stack.pop(), label)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        s, b = state.stack[-1], state.buffer
        # s's real head further in the buffer: lost.
        cost = int(gold_heads[s] > b)
        # s's dependents in the buffer: lost.
        return cost + _dependents_in_buffer(state, s, gold_heads)

    def dependent(self, state: State) -> int:
        return state.stack[-1]


class RightArc(Move):
    """RIGHT_ARC(l): attach the front of the buffer ``b`` to the top of the stack ``s``, push ``b``.

    Validity:
        The buffer is not empty (``s`` may be ROOT).
    Cost:
        ``b``'s gold head if it is anywhere on the stack or in the buffer but is not ``s``,
        plus ``b``'s gold dependents on the stack that are still headless.
    Effect:
        ``σ|s, b|β → σ|s|b, β`` and the arc ``s →l b``.
    """

    def is_valid(self, state: State) -> bool:
        return not state.buffer_empty

    def apply(self, state: State, label: int) -> None:
        s, b = state.stack[-1], state.pop_buffer()
        state.add_arc(s, b, label)
        state.stack.append(b)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        s, b = state.stack[-1], state.buffer
        head = int(gold_heads[b])
        # b's real head elsewhere on the stack or later in the buffer: lost.
        cost = int(head != s and (head > b or head in state.stack))
        # b's headless dependents on the stack: lost (b will sit above them).
        return cost + sum(1 for k in state.stack if gold_heads[k] == b and state.heads[k] == NONE)

    def dependent(self, state: State) -> int:
        return state.buffer


class ArcEager(TransitionSystem):
    """Arc-eager: SHIFT, REDUCE, LEFT_ARC, RIGHT_ARC; ends when the buffer is empty."""

    name: ClassVar[str] = "arc-eager"
    moves: ClassVar[dict[Action, Move]] = {
        Action.SHIFT: Shift(),
        Action.REDUCE: Reduce(),
        Action.LEFT_ARC: LeftArc(),
        Action.RIGHT_ARC: RightArc(),
    }

    def is_terminal(self, state: State) -> bool:
        return state.buffer_empty
