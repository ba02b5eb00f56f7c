"""What every transition system shares: the actions, the parser state, the system contract.

A configuration is a stack, a buffer and the arcs built so far. Index 0 is ROOT, which
starts (and, in every system here, stays) at the bottom of the stack; the buffer holds
words ``buffer..n`` in order, preceded by any words SWAP moved back (``returned``).

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``, and
``-1`` marks a word that has no head yet.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import IntEnum
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

NONE = -1
"""A missing word (an empty stack or buffer slot, no child) or a missing head or label."""


class Action(IntEnum):
    """The unlabelled actions; LEFT_ARC and RIGHT_ARC carry a label when applied."""

    SHIFT = 0
    REDUCE = 1
    SWAP = 2
    LEFT_ARC = 3
    RIGHT_ARC = 4


ARC_ACTIONS = (Action.LEFT_ARC, Action.RIGHT_ARC)


@dataclass(slots=True)
class State:
    """A parser configuration.

    Attributes:
        stack: word indices, top last; ``stack[0] == 0`` (ROOT).
        buffer: the next unread word; words ``buffer..n`` are unread.
        heads: shape ``(n+1,)``; ``-1`` until the word is attached.
        labels: shape ``(n+1,)``; label ids, ``-1`` until the word is attached.
        returned: words SWAP put back in front of the buffer, the front last (empty for
            the systems without SWAP).
        leftmost, rightmost: each word's leftmost / rightmost child so far (``-1``: none);
            kept up to date by :meth:`add_arc` because features read them at every step.
        n_left, n_right: how many left / right children each word has so far.
    """

    stack: list[int]
    buffer: int
    heads: NDArray[np.intp]
    labels: NDArray[np.intp]
    returned: list[int] = field(default_factory=list)
    leftmost: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    rightmost: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    n_left: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    n_right: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))

    @classmethod
    def initial(cls, n: int) -> State:
        """ROOT on the stack, all ``n`` words in the buffer, no arcs."""
        blank = np.full(n + 1, NONE, dtype=np.intp)
        zeros = np.zeros(n + 1, dtype=np.intp)
        return cls([0], 1, blank.copy(), blank.copy(), [], blank.copy(), blank.copy(), zeros, zeros.copy())

    @property
    def n(self) -> int:
        """Number of words (ROOT excluded)."""
        return len(self.heads) - 1

    def b(self, i: int) -> int:
        """The ``i``-th word of the buffer (0 = front), or ``-1`` past its end."""
        if i < len(self.returned):
            return self.returned[-1 - i]
        word = self.buffer + i - len(self.returned)
        return word if word <= len(self.heads) - 1 else NONE

    def s(self, i: int) -> int:
        """The ``i``-th word of the stack (0 = top), or ``-1`` past its bottom."""
        return self.stack[-1 - i] if i < len(self.stack) else NONE

    @property
    def buffer_empty(self) -> bool:
        """True when every word has been read (and none was put back)."""
        return not self.returned and self.buffer >= len(self.heads)

    def pop_buffer(self) -> int:
        """Remove and return the front of the buffer (which must not be empty)."""
        if self.returned:
            return self.returned.pop()
        self.buffer += 1
        return self.buffer - 1

    def add_arc(self, head: int, dep: int, label: int) -> None:
        """Attach ``dep`` to ``head`` with label id ``label``."""
        self.heads[dep] = head
        self.labels[dep] = label
        if dep < head:
            self.n_left[head] += 1
            if self.leftmost[head] == NONE or dep < self.leftmost[head]:
                self.leftmost[head] = dep
        else:
            self.n_right[head] += 1
            if self.rightmost[head] == NONE or dep > self.rightmost[head]:
                self.rightmost[head] = dep

    def copy(self) -> State:
        """An independent copy."""
        return State(
            list(self.stack),
            self.buffer,
            self.heads.copy(),
            self.labels.copy(),
            list(self.returned),
            self.leftmost.copy(),
            self.rightmost.copy(),
            self.n_left.copy(),
            self.n_right.copy(),
        )


class Move(ABC):
    """One action of one system; its docstring has Validity / Cost / Effect sections."""

    @abstractmethod
    def is_valid(self, state: State) -> bool:
        """Whether the action may be applied to ``state``."""

    @abstractmethod
    def apply(self, state: State, label: int) -> None:
        """Apply the action in place (``label`` is used by arc actions only)."""

    @abstractmethod
    def cost(self, state: State, gold_heads: NDArray[np.intp]) -> int:
        """Gold arcs that become unreachable if the action is applied (valid states only)."""

    def dependent(self, state: State) -> int:
        """The word an arc action attaches (``-1`` for actions that build no arc)."""
        return NONE


class TransitionSystem(ABC):
    """A transition system: its moves, its initial and terminal configurations.

    ``cost`` is the oracle: zero-cost actions form the gold set (:meth:`gold_actions`).
    """

    name: ClassVar[str] = ""
    moves: ClassVar[dict[Action, Move]] = {}
    dynamic: ClassVar[bool] = True
    """Whether ``cost`` is an exact dynamic oracle (valid in any configuration)."""

    @property
    def actions(self) -> tuple[Action, ...]:
        """The system's actions, in :class:`Action` order."""
        return tuple(self.moves)

    def initial(self, n: int) -> State:
        """The initial configuration of an ``n``-word sentence."""
        return State.initial(n)

    @abstractmethod
    def is_terminal(self, state: State) -> bool:
        """Whether parsing is over."""

    def is_valid(self, state: State, action: Action) -> bool:
        """Whether ``action`` may be applied to ``state``."""
        return self.moves[action].is_valid(state)

    def apply(self, state: State, action: Action, label: int = NONE) -> None:
        """Apply ``action`` (with ``label`` if it builds an arc) to ``state`` in place."""
        self.moves[action].apply(state, label)

    def cost(self, state: State, action: Action, gold_heads: NDArray[np.intp]) -> int:
        """How many gold arcs (``gold_heads``) applying ``action`` makes unreachable."""
        return self.moves[action].cost(state, gold_heads)

    def dependent(self, state: State, action: Action) -> int:
        """The word ``action`` would attach, ``-1`` if it builds no arc."""
        return self.moves[action].dependent(state)

    def valid_actions(self, state: State) -> list[Action]:
        """The actions valid in ``state``."""
        return [action for action, move in self.moves.items() if move.is_valid(state)]

    def gold_actions(self, state: State, gold_heads: NDArray[np.intp]) -> list[Action]:
        """The valid actions of least cost (zero cost whenever the oracle is exact)."""
        valid = self.valid_actions(state)
        costs = [self.cost(state, action, gold_heads) for action in valid]
        best = min(costs)
        return [action for action, c in zip(valid, costs, strict=True) if c == best]
