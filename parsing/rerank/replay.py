"""Replaying derivations through the neural member's network: per step the last hidden layer,
the action distribution and the action taken, from which :mod:`parsing.rerank.features`
derives the reranking features.

The derivations of a batch of sentences are moved together (one row of
:class:`~parsing.neural.batch.Configurations` per derivation), with the same feature
extraction, action masks and precomputed first-layer tables as the parser's beam search, so a
replayed derivation's ``sum_t log p_t[a_t]`` is the beam's score of it (up to float32
rounding of the first-layer tables).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.neural import NeuralTransitionParser, network
from parsing.neural.batch import Configurations
from parsing.neural.features import NULL_ROW, featurise
from parsing.types import Sentence

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Steps:
    """One derivation replayed: ``T`` steps (``T = 2n``), ``H`` hidden units, ``A`` actions.

    Attributes:
        hidden: ``(T, H)`` the last hidden layer (ReLU outputs) before each action.
        log_probs: ``(T, A)`` the masked log-softmax (``-inf`` on invalid actions).
        actions: ``(T,)`` the actions taken.
        positions: ``(T, 18)`` the sentence position (0 = ROOT) of the token in each token
            slot of the network's input, ``-1`` for an empty slot (for the adaptation word
            slots). An ISBN replay (:mod:`parsing.rerank.isbn_replay`) has rows of decisions
            instead of ``2n`` actions and ``positions`` ``(T, 1)`` all ``-1``: no word slots.
    """

    hidden: FloatArray
    log_probs: FloatArray
    actions: IntArray
    positions: IntArray

    @property
    def log_prob(self) -> float:
        """``log P(derivation) = sum_t log p_t[a_t]``."""
        return float(self.log_probs[np.arange(len(self.actions)), self.actions].sum())


def replay(
    parser: NeuralTransitionParser, sentences: Sequence[Sentence], derivations: Sequence[Sequence[IntArray]]
) -> list[list[Steps]]:
    """Replay ``derivations[i]`` (action sequences ``(2n_i,)``) of ``sentences[i]``.

    Returns:
        Per sentence, per derivation, its :class:`Steps`.

    Raises:
        ValueError: a derivation has the wrong length or takes an action that is not valid.
    """
    params = parser.params_
    space = parser.space_
    ids, offsets = parser._encode(sentences)
    tokens = network.token_table(params, ids)
    labels_by_slot = network.label_table(params)
    owner = np.array([s for s, listed in enumerate(derivations) for _ in listed], dtype=np.int64)
    actions = [np.asarray(actions, dtype=np.int64) for listed in derivations for actions in listed]
    lengths = np.array([len(sentences[s]) for s in owner.tolist()], dtype=np.int64)
    for number, sequence in enumerate(actions):
        if len(sequence) != 2 * lengths[number]:
            raise ValueError(f"a derivation of a {lengths[number]}-word sentence has {len(sequence)} "
                             f"actions, expected {2 * lengths[number]}")
    if not len(owner):
        return [[] for _ in sentences]
    padded = np.zeros((len(actions), max(1, int(2 * lengths.max()))), dtype=np.int64)
    for number, sequence in enumerate(actions):
        padded[number, : len(sequence)] = sequence
    alive = np.flatnonzero(lengths > 0)
    rows = Configurations.start(lengths.tolist()).take(alive)
    hidden_size, n_actions = params["W2"].shape
    parts: list[tuple[IntArray, FloatArray, FloatArray, IntArray]] = [
        (np.zeros(0, dtype=np.int64), np.zeros((0, hidden_size)), np.zeros((0, n_actions)),
         np.zeros((0, 18), dtype=np.int64))
    ]
    step = 0
    while len(alive):
        top = rows.stack_top()
        row_offsets = offsets[owner[alive]]
        token_rows, label_ids = featurise(
            top, rows.buffer_front(), rows.heads, rows.leftmost, rows.rightmost, rows.labels, row_offsets
        )
        valid = space.mask(rows.valid_moves(top), top[:, 1] == 0)
        hidden = network.hidden_from_tables(params, tokens, labels_by_slot, token_rows, label_ids)
        log_probs = network.output_log_probs(params, hidden, valid)
        taken = padded[alive, step]
        if not valid[np.arange(len(alive)), taken].all():
            raise ValueError(f"a derivation takes an invalid action at step {step}")
        positions = np.where(token_rows == NULL_ROW, -1, token_rows - row_offsets[:, None])
        parts.append((alive, hidden.astype(np.float64), log_probs.astype(np.float64), positions))
        rows.apply(*space.decode_all(taken))
        step += 1
        going = 2 * lengths[alive] > step
        rows, alive = rows.take(np.flatnonzero(going)), alive[going]
    which = np.concatenate([part[0] for part in parts])
    order = np.argsort(which, kind="stable")  # grouped by derivation, steps in order
    bounds = np.cumsum(2 * lengths)[:-1]
    hidden_all, log_probs_all, positions_all = (
        np.split(np.concatenate([part[c] for part in parts])[order], bounds) for c in (1, 2, 3)
    )
    replayed: list[list[Steps]] = [[] for _ in sentences]
    for number, sentence in enumerate(owner.tolist()):
        replayed[sentence].append(Steps(hidden_all[number], log_probs_all[number], actions[number],
                                        positions_all[number]))
    return replayed
