"""Training with exploration (Goldberg & Nivre 2012; Kiperwasser & Goldberg 2016, §5): the
network parses its training sentences itself and learns, at every configuration it reaches, the
moves of least dynamic-oracle cost (:func:`parsing.neural.system.move_costs`), so it also learns to
recover from its own mistakes, which the static oracle never shows it.

At each step every live sentence of the batch is scored at once; the loss is the negative log of
the probability mass on the best actions (the least-cost moves, an arc move with the dependent's
gold label). The next configuration follows the network's own best action when it is among them,
else that wrong action with probability ``explore`` (else the best of the right ones).

Shapes: ``table`` ``(1 + sum(n_b + 1), 2H)`` and ``offsets`` ``(B,)`` as
:meth:`parsing.lstm_transition.network.TransitionNetwork.table` gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor

from parsing.lstm_transition.network import SLOTS, TransitionNetwork
from parsing.neural import system
from parsing.neural.search import ActionSpace, step_inputs
from parsing.transition.state import State
from parsing.types import Heads


def best_actions(costs: Sequence[int | None], space: ActionSpace, valid: NDArray[np.bool_],
                 gold_label: int | None) -> NDArray[np.bool_]:
    """The labelled actions ``(A,)`` of least cost among the ``valid`` ones: the least-cost moves,
    an arc move only with ``gold_label`` (the dependent's gold label id; any when ``None``).

    Examples:
        >>> space = ActionSpace(np.ones(3, dtype=bool), np.ones(3, dtype=bool))
        >>> best_actions([1, 0, None], space, np.array([True, True, True, False, False]), 2).tolist()
        [False, False, True, False, False]
    """
    least = min(cost for cost in costs if cost is not None)
    best = np.zeros(space.n_actions, dtype=bool)
    for move, cost in enumerate(costs):
        if cost != least:
            continue
        if move == system.SHIFT:
            best[0] = True
            continue
        for label in range(1, space.n_labels + 1):
            if gold_label is None or label == gold_label:
                best[space.encode(move, label)] = True
    best &= valid
    if not best.any():  # the gold label is not allowed here (e.g. never seen on ROOT's dependent)
        for move, cost in enumerate(costs):
            if cost == least:
                best |= _move_actions(space, move) & valid
    return best


def _move_actions(space: ActionSpace, move: int) -> NDArray[np.bool_]:
    actions = np.zeros(space.n_actions, dtype=bool)
    if move == system.SHIFT:
        actions[0] = True
    else:
        actions[[space.encode(move, label) for label in range(1, space.n_labels + 1)]] = True
    return actions


def exploration_loss(network: TransitionNetwork, table: Tensor, offsets: Sequence[int],
                     trees: Sequence[tuple[Heads, list[int]]], space: ActionSpace, explore: float,
                     rng: np.random.Generator) -> Tensor:
    """The mean loss over every configuration the batch's sentences reach (module docstring).

    Args:
        trees: each sentence's lifted gold heads ``(n+1,)`` and label ids (``n+1``, ROOT's 0).
        explore: the probability of following a wrong best action.
    """
    states = [system.start(len(heads) - 1) for heads, _ in trees]
    start = np.asarray(offsets, dtype=np.int64)
    terms: list[Tensor] = []
    while live := [i for i, state in enumerate(states) if not system.is_final(state)]:
        rows, _, valid = step_inputs([states[i] for i in live], space, start[live])
        logits = network.action_scores(table, torch.from_numpy(np.ascontiguousarray(rows[:, :SLOTS])))
        scores = logits.masked_fill(~torch.from_numpy(valid), float("-inf"))
        best = np.stack([
            best_actions(system.move_costs(states[i], trees[i][0]), space, valid[j],
                         _gold_label(states[i], trees[i]))
            for j, i in enumerate(live)])
        right = scores.masked_fill(~torch.from_numpy(best), float("-inf"))
        terms.append(torch.logsumexp(scores, dim=-1) - torch.logsumexp(right, dim=-1))
        chosen = scores.detach().argmax(-1).numpy()
        fallback = right.detach().argmax(-1).numpy()
        for j, i in enumerate(live):
            action = int(chosen[j])
            if not best[j, action] and rng.random() >= explore:
                action = int(fallback[j])
            move, label = space.decode(action)
            states[i] = system.advance(states[i], move, label)
    return torch.cat(terms).mean()


def _gold_label(state: State, tree: tuple[Heads, list[int]]) -> int | None:
    """The gold label id of the word an arc move would attach now (``s0``), or None at ROOT."""
    top = state.stack[-1]
    return tree[1][top] if top > 0 else None
