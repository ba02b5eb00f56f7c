"""The static oracle's training examples for the ``lstm-hybrid`` member: its labelled action
space and each projective tree's configurations with their valid and gold actions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from parsing.neural import system
from parsing.neural.search import ActionSpace, step_inputs
from parsing.transition.state import State
from parsing.types import Heads, Sentence

IntArray = NDArray[np.int64]


def action_space(lifted: Sequence[tuple[Sentence, Heads, list[str]]], labels: Sequence[str]) -> ActionSpace:
    """The labelled actions, with the labels seen on ROOT's dependent and on other arcs."""
    ids = {label: number for number, label in enumerate(labels, start=1)}
    root = np.zeros(len(labels) + 1, dtype=bool)
    other = np.zeros_like(root)
    for _, heads, names in lifted:
        numbers = [ids[name] for name in names[1:]]
        np.logical_or.at(root, numbers, heads[1:] == 0)
        np.logical_or.at(other, numbers, heads[1:] != 0)
    return ActionSpace(root, other)


def oracle_examples(heads: Heads, labels: Sequence[str], space: ActionSpace, label_ids: dict[str, int]
                    ) -> tuple[IntArray, NDArray[np.bool_], IntArray]:
    """The static oracle's configurations of one projective, single-rooted tree: the slots'
    positions plus one (0: empty) ``(2n, SLOTS)``, the valid actions ``(2n, A)`` and the gold
    action ``(2n,)``.

    Raises:
        ValueError: the tree is not projective or not single-rooted (lift it first).
    """
    from parsing.lstm_transition.network import SLOTS

    states: list[State] = []
    actions: list[int] = []
    state = system.start(len(heads) - 1)
    while not system.is_final(state):
        move = system.oracle_move(state, heads)
        label = label_ids[labels[system.dependent(state, move)]] if move != system.SHIFT else -1
        states.append(state)
        actions.append(space.encode(move, label))
        state = system.advance(state, move, label)
    rows, _, valid = step_inputs(states, space, np.ones(len(states), dtype=np.int64))
    gold = np.array(actions, dtype=np.int64)
    return rows[:, :SLOTS].astype(np.int64), valid, gold
