"""Arc-hybrid (Kuhlmann, Gómez-Rodríguez & Satta 2011) with the dynamic oracle of
Goldberg & Nivre (2013).

Configuration: stack ``σ`` (ROOT at the bottom, never popped), buffer ``β = buffer..n``,
arcs. LEFT_ARC attaches the stack top to the buffer front, RIGHT_ARC attaches the stack
top to the word below it; both pop the dependent, so a word is headless until it leaves
the stack. The parse ends with an empty buffer and only ROOT on the stack.

Arc-hybrid is arc-decomposable: a gold arc ``h → d`` (both still on the stack or in the
buffer) stays reachable unless both are on the stack and ``h`` is not directly below
``d``. Costs count the gold arcs that an action makes unreachable.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from parsing.transition.state import Action, Move, State, TransitionSystem


def _dependents_in_buffer(state: State, word: int, gold_heads: NDArray[np.intp]) -> int:
    return int(np.count_nonzero(gold_heads[state.buffer :] == word))


class Shift(Move):
    """SHIFT: push the front of the buffer ``b`` onto the stack.

    Validity:
        The buffer is not empty.
    Cost:
        ``b``'s gold head if it is on the stack below the top (only the top can still
        take ``b`` by RIGHT_ARC), plus ``b``'s gold dependents on the stack (they could
        only attach to ``b`` by LEFT_ARC while ``b`` was in the buffer).
    Effect:
        ``σ, b|β → σ|b, β``.
    """

    def is_valid(self, state: State) -> bool:
        return not state.buffer_empty

    def apply(self, state: State, label: int) -> None:
        state.stack.append(state.pop_buffer())

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        b = state.buffer
        head = int(gold_heads[b])
        cost = int(head != state.stack[-1] and head in state.stack)
        return cost + sum(1 for k in state.stack if gold_heads[k] == b)


class LeftArc(Move):
    """LEFT_ARC(l): attach the top of the stack ``s0`` to the front of the buffer ``b``, pop ``s0``.

    Validity:
        The buffer is not empty; ``s0`` is a word (not ROOT).
    Cost:
        ``s0``'s gold head if it is ``s1`` or in the buffer after ``b``, plus ``s0``'s gold
        dependents in the buffer.
    Effect:
        ``σ|s0, b|β → σ, b|β`` and the arc ``b →l s0``.
    """

    def is_valid(self, state: State) -> bool:
        return not state.buffer_empty and state.stack[-1] != 0

    def apply(self, state: State, label: int) -> None:
        state.add_arc(state.buffer, state.stack.pop(), label)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        s0, b = state.stack[-1], state.buffer
        head = int(gold_heads[s0])
        cost = int(head > b or (len(state.stack) > 1 and head == state.stack[-2]))
        return cost + _dependents_in_buffer(state, s0, gold_heads)

    def dependent(self, state: State) -> int:
        return state.stack[-1]


class RightArc(Move):
    """RIGHT_ARC(l): attach the top of the stack ``s0`` to the word below it ``s1``, pop ``s0``.

    Validity:
        The stack holds at least two items (``s1`` may be ROOT).
    Cost:
        ``s0``'s gold head if it is in the buffer, plus ``s0``'s gold dependents in the
        buffer.
    Effect:
        ``σ|s1|s0, β → σ|s1, β`` and the arc ``s1 →l s0``.
    """

    def is_valid(self, state: State) -> bool:
        return len(state.stack) > 1

    def apply(self, state: State, label: int) -> None:
        s0 = state.stack.pop()
        state.add_arc(state.stack[-1], s0, label)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        s0 = state.stack[-1]
        cost = int(gold_heads[s0] >= state.buffer)
        return cost + _dependents_in_buffer(state, s0, gold_heads)

    def dependent(self, state: State) -> int:
        return state.stack[-1]


class ArcHybrid(TransitionSystem):
    """Arc-hybrid: SHIFT, LEFT_ARC, RIGHT_ARC; ends with an empty buffer and ROOT alone."""

    name: ClassVar[str] = "arc-hybrid"
    moves: ClassVar[dict[Action, Move]] = {
        Action.SHIFT: Shift(),
        Action.LEFT_ARC: LeftArc(),
        Action.RIGHT_ARC: RightArc(),
    }

    def is_terminal(self, state: State) -> bool:
        return state.buffer_empty and len(state.stack) == 1
