"""Many arc-hybrid configurations as arrays: one row per hypothesis, for decoding.

:mod:`parsing.neural.system` moves one :class:`~parsing.transition.state.State` at a time,
which training's oracle needs; decoding moves every hypothesis of every sentence of a chunk
at each step, and a Python loop over states cost more than the network. Here a step is a
few array operations over all rows. The moves are those of :mod:`parsing.neural.system`:
arc-hybrid (SHIFT pushes the front of the buffer; LEFT attaches ``s0`` to it; RIGHT attaches
``s0`` to ``s1``; both pop ``s0``) with ROOT's single dependent attached last. The tests
check that decoding with these rows gives the same k-best lists as decoding with states.

Conventions: index 0 is ROOT; ``-1`` marks no word, no head, no label, and pads every
``(H, N)`` array past a row's sentence (``N`` is the longest sentence plus ROOT).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from parsing.neural import system
from parsing.transition.state import NONE, State

IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]


@dataclass(slots=True)
class Configurations:
    """``H`` configurations, row by row.

    Attributes:
        size: ``(H,)`` each row's sentence length plus ROOT.
        buffer: ``(H,)`` the next unread word (``size`` once all are read).
        depth: ``(H,)`` how many items are on the stack (ROOT included).
        stack: ``(H, N)`` the stack, bottom (ROOT) first; ``-1`` above ``depth``.
        heads, labels: ``(H, N)`` the arcs built so far (label ids), ``-1`` where none.
        leftmost, rightmost: ``(H, N)`` each word's leftmost left / rightmost right child.
    """

    size: IntArray
    buffer: IntArray
    depth: IntArray
    stack: IntArray
    heads: IntArray
    labels: IntArray
    leftmost: IntArray
    rightmost: IntArray

    @classmethod
    def start(cls, lengths: Sequence[int]) -> Configurations:
        """One initial configuration per sentence: ROOT on the stack, every word unread."""
        size = np.asarray(lengths, dtype=np.intp) + 1
        blank = np.full((len(size), int(size.max(initial=1))), NONE, dtype=np.intp)
        stack = blank.copy()
        stack[:, 0] = 0
        return cls(size, np.ones_like(size), np.ones_like(size), stack, blank.copy(), blank.copy(),
                   blank.copy(), blank.copy())

    def take(self, rows: IntArray) -> Configurations:
        """Copies of the configurations ``rows`` (repeats allowed), in that order."""
        return Configurations(*(getattr(self, field.name)[rows] for field in fields(self)))

    def stack_top(self) -> IntArray:
        """``(H, 3)``: ``s0, s1, s2`` (``-1`` below the bottom)."""
        below = self.depth[:, None] - 1 - np.arange(3)
        picked = self.stack[np.arange(len(self.depth))[:, None], np.maximum(below, 0)]
        return np.where(below >= 0, picked, NONE)

    def buffer_front(self) -> IntArray:
        """``(H, 3)``: ``b0, b1, b2`` (``-1`` past the end)."""
        front = self.buffer[:, None] + np.arange(3)
        return np.where(front < self.size[:, None], front, NONE)

    def valid_moves(self, top: IntArray) -> BoolArray:
        """``(H, 3)`` validity of SHIFT, LEFT, RIGHT given ``top`` from :meth:`stack_top`,
        as :func:`parsing.neural.system.valid_moves`."""
        unread = self.buffer < self.size
        s0_word = top[:, 0] != 0
        left = unread & s0_word
        right = (self.depth > 1) & s0_word & ~((top[:, 1] == 0) & unread)
        return np.stack([unread, left, right], axis=1)

    def apply(self, moves: IntArray, labels: IntArray) -> None:
        """Apply one move per row in place (labels are ignored for SHIFT)."""
        rows = np.arange(len(moves))
        top = self.stack_top()
        shift = moves == system.SHIFT
        at = rows[shift]
        self.stack[at, self.depth[at]] = self.buffer[at]
        self.depth[at] += 1
        self.buffer[at] += 1
        arc = ~shift
        at = rows[arc]
        dep = top[arc, 0]
        head = np.where(moves[arc] == system.LEFT, self.buffer[at], top[arc, 1])
        self.depth[at] -= 1
        self.stack[at, self.depth[at]] = NONE
        self.heads[at, dep] = head
        self.labels[at, dep] = labels[arc]
        is_left = dep < head
        lefts, rights = at[is_left], at[~is_left]
        self._extend(self.leftmost, lefts, head[is_left], dep[is_left], np.minimum)
        self._extend(self.rightmost, rights, head[~is_left], dep[~is_left], np.maximum)

    @staticmethod
    def _extend(outer: IntArray, rows: IntArray, head: IntArray, dep: IntArray, pick: np.ufunc) -> None:
        """``outer[row, head]``: ``dep`` when unset, else the outermost of the two."""
        current = outer[rows, head]
        outer[rows, head] = np.where(current == NONE, dep, pick(current, dep))

    def is_final(self) -> BoolArray:
        """``(H,)``: every word read and only ROOT left on the stack."""
        final: BoolArray = (self.buffer >= self.size) & (self.depth == 1)
        return final

    def state(self, row: int) -> State:
        """Row ``row`` as a :class:`State` (its arcs; stack and buffer as they are)."""
        size = int(self.size[row])
        return State(self.stack[row, : self.depth[row]].tolist(), int(self.buffer[row]),
                     self.heads[row, :size].copy(), self.labels[row, :size].copy())
