"""Arc-standard with SWAP (Nivre 2009): non-projective parsing in expected linear time.

Configuration: stack ``σ`` (ROOT at the bottom), buffer (words SWAP moved back, then the
unread words), arcs. LEFT_ARC and RIGHT_ARC join the two top items of the stack; SWAP puts
``s1`` back in front of the buffer, which reorders the words so that any tree becomes
projective in the new order. The parse ends with an empty buffer and only ROOT on the
stack, and ROOT takes a dependent only as the last action, so the output has exactly one
word attached to ROOT.

Oracle: the static oracle of Nivre (2009) with the *lazy* swap strategy of Nivre,
Kuhlmann & Hall (2009). Words are swapped into the projective order (the inorder
traversal of the gold tree), but only when ``s0`` and the buffer front belong to
different maximal projective components (the subtrees a swap-free arc-standard parser
can build), which keeps the number of swaps low. There is no exact dynamic oracle here:
:meth:`ArcSwap.cost` is 0 for the static oracle's action and 1 for any other, and is
meaningful only on configurations the static oracle reaches.

Constrained parsing (the ``swap`` member under a human's arcs,
:mod:`parsing.transition.constrained`): *guided*, not repair-only. The guided re-parse (only
moves that keep the forced arcs buildable; the repair only when a forced arc is stranded)
does change right arcs, but it fixes more wrong ones than it breaks, and repair-only (the
member's own tree with the forced arcs repaired in) fixes almost none. Measured on UD Wolof
dev (gold tags, train with 6 epochs; an oracle annotator fixing the leftmost wrong arc and
confirming the words before it, 449 sentences): swap alone, guided 1,946 edits (re-parses
fixed 507 arcs, broke 356) against repair-only 2,102 (fixed 0, broke 5) of 2,097 wrong arcs;
in the graph1+hybrid+swap ensemble, guided 1,685 edits against repair-only 1,739 (of 1,930).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from parsing.transition.state import NONE, Action, Move, State, TransitionSystem


@dataclass(frozen=True, slots=True)
class SwapGold:
    """What the static oracle precomputes from a gold tree.

    Attributes:
        heads: the gold heads.
        order: each word's position in the projective order (inorder traversal).
        component: the root of each word's maximal projective component.
        n_children: each word's number of gold dependents.
    """

    heads: NDArray[np.intp]
    order: NDArray[np.intp]
    component: NDArray[np.intp]
    n_children: NDArray[np.intp]

    @classmethod
    def build(cls, gold_heads: NDArray[np.intp]) -> SwapGold:
        """Precompute the projective order and the maximal projective components."""
        n = len(gold_heads) - 1
        children: list[list[int]] = [[] for _ in range(n + 1)]
        for dep in range(1, n + 1):
            children[int(gold_heads[dep])].append(dep)
        order = np.zeros(n + 1, dtype=np.intp)
        position = 0
        todo: list[tuple[int, bool]] = [(0, False)]
        while todo:  # iterative inorder traversal: left children, the node, right children
            node, expanded = todo.pop()
            if expanded:
                order[node] = position
                position += 1
                continue
            todo.extend((c, False) for c in reversed(children[node]) if c > node)
            todo.append((node, True))
            todo.extend((c, False) for c in reversed(children[node]) if c < node)
        n_children = np.array([len(c) for c in children], dtype=np.intp)
        return cls(gold_heads, order, _components(gold_heads, n_children), n_children)


def _components(gold_heads: NDArray[np.intp], n_children: NDArray[np.intp]) -> NDArray[np.intp]:
    """Run the swap-free arc-standard oracle; the subtrees it builds are the components."""
    n = len(gold_heads) - 1
    built = np.full(n + 1, NONE, dtype=np.intp)
    attached = np.zeros(n + 1, dtype=np.intp)
    stack, word = [0], 1
    while True:
        if len(stack) > 1:
            s0, s1 = stack[-1], stack[-2]
            if s1 != 0 and gold_heads[s1] == s0 and attached[s1] == n_children[s1]:
                built[s1] = s0
                attached[s0] += 1
                del stack[-2]
                continue
            if gold_heads[s0] == s1 and attached[s0] == n_children[s0]:
                built[s0] = s1
                attached[s1] += 1
                stack.pop()
                continue
        if word > n:
            break
        stack.append(word)
        word += 1
    component = np.arange(n + 1, dtype=np.intp)
    for dep in range(1, n + 1):
        top = dep
        while built[top] not in (NONE, 0):
            top = int(built[top])
        component[dep] = top
    return component


def _complete(state: State, word: int, gold: SwapGold) -> bool:
    return bool(state.n_left[word] + state.n_right[word] == gold.n_children[word])


def static_oracle(state: State, gold: SwapGold) -> Action:
    """The static oracle's action in ``state`` (a configuration on the oracle's path)."""
    if len(state.stack) > 1:
        s0, s1 = state.stack[-1], state.stack[-2]
        if s1 != 0 and gold.heads[s1] == s0 and _complete(state, s1, gold):
            return Action.LEFT_ARC
        if gold.heads[s0] == s1 and _complete(state, s0, gold):
            return Action.RIGHT_ARC
        if s1 != 0 and gold.order[s0] < gold.order[s1]:
            b0 = state.b(0)
            if b0 == NONE or gold.component[s0] != gold.component[b0]:
                return Action.SWAP
    return Action.SHIFT


_GOLD_CACHE: OrderedDict[bytes, SwapGold] = OrderedDict()


def _cached_gold(gold_heads: NDArray[np.intp]) -> SwapGold:
    key = np.asarray(gold_heads, dtype=np.intp).tobytes()
    gold = _GOLD_CACHE.get(key)
    if gold is None:
        gold = _GOLD_CACHE[key] = SwapGold.build(np.asarray(gold_heads, dtype=np.intp))
        if len(_GOLD_CACHE) > 64:
            _GOLD_CACHE.popitem(last=False)
    return gold


class Shift(Move):
    """SHIFT: push the front of the buffer ``b`` onto the stack.

    Validity:
        The buffer is not empty.
    Cost:
        Static: 0 when the static oracle shifts, else 1.
    Effect:
        ``σ, b|β → σ|b, β``.
    """

    def is_valid(self, state: State) -> bool:
        return not state.buffer_empty

    def apply(self, state: State, label: int) -> None:
        state.stack.append(state.pop_buffer())

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        return int(static_oracle(state, _cached_gold(gold_heads)) != Action.SHIFT)


class Swap(Move):
    """SWAP: move ``s1`` back to the front of the buffer.

    Validity:
        ``s0`` and ``s1`` are words (not ROOT) and ``s1`` precedes ``s0`` in the sentence
        (so no pair is swapped twice and parsing ends in O(n²) steps).
    Cost:
        Static: 0 when the static oracle swaps, else 1.
    Effect:
        ``σ|s1|s0, β → σ|s0, s1|β``.
    """

    def is_valid(self, state: State) -> bool:
        return len(state.stack) > 2 and 0 < state.stack[-2] < state.stack[-1]

    def apply(self, state: State, label: int) -> None:
        state.returned.append(state.stack.pop(-2))

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        return int(static_oracle(state, _cached_gold(gold_heads)) != Action.SWAP)


class LeftArc(Move):
    """LEFT_ARC(l): attach ``s1`` to ``s0`` and remove ``s1``.

    Validity:
        ``s1`` is a word (not ROOT).
    Cost:
        Static: 0 when the static oracle does it, else 1.
    Effect:
        ``σ|s1|s0, β → σ|s0, β`` and the arc ``s0 →l s1``.
    """

    def is_valid(self, state: State) -> bool:
        return len(state.stack) > 2

    def apply(self, state: State, label: int) -> None:
        state.add_arc(state.stack[-1], state.stack.pop(-2), label)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        return int(static_oracle(state, _cached_gold(gold_heads)) != Action.LEFT_ARC)

    def dependent(self, state: State) -> int:
        return state.stack[-2]


class RightArc(Move):
    """RIGHT_ARC(l): attach ``s0`` to ``s1`` and remove ``s0``.

    Validity:
        The stack holds two items; if ``s1`` is ROOT the buffer is empty (ROOT takes its
        single dependent last).
    Cost:
        Static: 0 when the static oracle does it, else 1.
    Effect:
        ``σ|s1|s0, β → σ|s1, β`` and the arc ``s1 →l s0``.
    """

    def is_valid(self, state: State) -> bool:
        return len(state.stack) > 2 or (len(state.stack) == 2 and state.buffer_empty)

    def apply(self, state: State, label: int) -> None:
        s0 = state.stack.pop()
        state.add_arc(state.stack[-1], s0, label)

    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        return int(static_oracle(state, _cached_gold(gold_heads)) != Action.RIGHT_ARC)

    def dependent(self, state: State) -> int:
        return state.stack[-1]


class ArcSwap(TransitionSystem):
    """Arc-standard with SWAP: SHIFT, SWAP, LEFT_ARC, RIGHT_ARC; static (lazy-swap) oracle."""

    name: ClassVar[str] = "arc-standard-swap"
    dynamic: ClassVar[bool] = False
    moves: ClassVar[dict[Action, Move]] = {
        Action.SHIFT: Shift(),
        Action.SWAP: Swap(),
        Action.LEFT_ARC: LeftArc(),
        Action.RIGHT_ARC: RightArc(),
    }

    def is_terminal(self, state: State) -> bool:
        return state.buffer_empty and len(state.stack) == 1

    def oracle(self, state: State, gold: SwapGold) -> Action:
        """The static oracle's action (faster than :meth:`gold_actions` in training)."""
        return static_oracle(state, gold)
