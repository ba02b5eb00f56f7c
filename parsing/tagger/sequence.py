"""Learned state and decoders of :mod:`parsing.tagger.model`.

* :class:`Averaged`: a weight array with the running sum giving its average.
* :class:`SequenceModel`: one tag column (UPOS or XPOS): static feature weights plus
  tag-history tables, decoded greedily (two previous tags) or with first-order Viterbi.
* :class:`FeatsModel`: FEATS, one classifier per feature category over shared ids.
* :func:`update_sequence`: the structured perceptron update of a :class:`SequenceModel`.

Conventions: position 0 (ROOT) is never tagged, so every array here covers the ``n``
words of a sentence, ROOT excluded. ``ids`` has shape ``(n, F)`` (feature row ids, 0 for
unseen features); ``static`` scores ``W[ids].sum(axis=1)`` have shape ``(n, T)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from parsing.tagger.features import Ids

Decoder = Literal["greedy", "viterbi"]

class Averaged:
    """A weight array with the running sum that gives its average (Daume 2006, ch. 2).

    Examples:
        >>> bias = Averaged((1,))
        >>> bias.add((np.array([0]),), np.array([4.0]), step=1)
        >>> bias.current.tolist(), bias.average(4).tolist()  # 4 - 1 * 4 / 4
        ([4.0], [3.0])
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.current = np.zeros(shape)
        self._weighted = np.zeros(shape)

    def add(self, index: tuple[NDArray[np.intp], ...], delta: NDArray[np.float64],
            step: int) -> None:
        if self.current.ndim == 2:  # feature weights: row 0 (unseen features) stays zero
            keep = index[0] != 0
            index = tuple(part[keep] for part in index)
            delta = delta[keep]
        np.add.at(self.current, index, delta)
        np.add.at(self._weighted, index, step * delta)

    def average(self, step: int) -> NDArray[np.float64]:
        return self.current - self._weighted / step


@dataclass(slots=True)
class SequenceModel:
    """Learned state for one tag column: static weights and tag-history tables.

    ``weights`` has shape ``(n_ids, T)``; ``bigram[prev, tag]`` shape ``(T+1, T)`` and
    ``trigram[prev2, prev, tag]`` shape ``(T+1, T+1, T)``; index ``T`` is the sentence start.
    """

    labels: list[str]
    weights: NDArray[np.float64]
    bigram: NDArray[np.float64]
    trigram: NDArray[np.float64]

    def decode(self, static: NDArray[np.float64], fixed: Ids, decoder: Decoder) -> Ids:
        """Best tag indices for one sentence's ``static`` scores ``W[ids].sum(axis=1)``,
        shape ``(n, T)``; ``fixed[i] >= 0`` forces tag ``fixed[i]``."""
        static = static.copy()
        forced = fixed >= 0
        if forced.any():
            static[forced] = -np.inf
            static[forced, fixed[forced]] = 0.0
        if decoder == "viterbi":
            return _viterbi(static, self.bigram)
        return _greedy(static, self.bigram, self.trigram)


def _greedy(static: NDArray[np.float64], bigram: NDArray[np.float64],
            trigram: NDArray[np.float64]) -> Ids:
    """Left-to-right: tag ``i`` maximises ``static[i] + bigram[t1] + trigram[t2, t1]``."""
    start = bigram.shape[0] - 1
    prev2 = prev1 = start
    tags = np.empty(len(static), dtype=np.intp)
    for i, row in enumerate(static):
        tag = int(np.argmax(row + bigram[prev1] + trigram[prev2, prev1]))
        tags[i] = tag
        prev2, prev1 = prev1, tag
    return tags


def _viterbi(static: NDArray[np.float64], bigram: NDArray[np.float64]) -> Ids:
    """Exact first-order decoding: ``max sum_i static[i, t_i] + bigram[t_{i-1}, t_i]``."""
    n, size = static.shape
    tags = np.empty(n, dtype=np.intp)
    if n == 0:
        return tags
    best = static[0] + bigram[size]  # best[t]: best path score ending in t
    back = np.empty((n, size), dtype=np.intp)
    for i in range(1, n):
        # candidates[p, t] = best[p] + bigram[p, t] + static[i, t]
        candidates = best[:, None] + bigram[:size] + static[i]
        back[i] = candidates.argmax(axis=0)
        best = candidates[back[i], np.arange(size)]
    tags[-1] = int(best.argmax())
    for i in range(n - 1, 0, -1):
        tags[i - 1] = back[i, tags[i]]
    return tags


@dataclass(slots=True)
class FeatsModel:
    """Learned state for FEATS: one classifier per feature category over shared ids.

    ``weights`` has shape ``(n_ids, n_columns)``; ``columns[g, v]`` is the weight column of
    value ``v`` of category ``g`` (value 0 is "absent"; ``-1`` pads short categories).
    """

    categories: list[str]
    values: list[list[str]]
    weights: NDArray[np.float64]

    @property
    def columns(self) -> Ids:
        width = max(len(values) for values in self.values)
        columns = np.full((len(self.values), width), -1, dtype=np.intp)
        start = 0
        for group, values in enumerate(self.values):
            columns[group, :len(values)] = np.arange(start, start + len(values))
            start += len(values)
        return columns

    def decode(self, ids: Ids, columns: Ids) -> Ids:
        """Value index per word and category, shape ``(n, n_categories)``."""
        scores = self.weights[ids].sum(axis=1)[:, columns]
        scores[:, columns < 0] = -np.inf
        best: Ids = scores.argmax(axis=2).astype(np.intp)
        return best

    def encode(self, feats: str) -> list[int]:
        """Value index per category of a FEATS string (unknown values count as absent)."""
        pairs = dict(item.split("=", 1) for item in feats.split("|") if "=" in item)
        return [
            values.index(pairs[name]) if pairs.get(name) in values else 0
            for name, values in zip(self.categories, self.values, strict=True)
        ]

    def render(self, row: Ids) -> str:
        items = [f"{name}={values[v]}" for name, values, v in
                 zip(self.categories, self.values, row.tolist(), strict=True) if v]
        return "|".join(sorted(items, key=str.lower)) or "_"


def update_sequence(weights: Averaged, bigram: Averaged, trigram: Averaged, ids: Ids,
                    gold: Ids, predicted: Ids, wrong: NDArray[np.bool_], step: int) -> None:
    """Structured perceptron update: + gold path features, - predicted path features."""
    rows = ids[wrong]  # (m, F)
    width = rows.shape[1]
    flat = rows.ravel()
    weights.add(
        (np.concatenate([flat, flat]),
         np.concatenate([np.repeat(gold[wrong], width), np.repeat(predicted[wrong], width)])),
        np.repeat([1.0, -1.0], flat.size), step)
    start = bigram.current.shape[0] - 1
    for path, sign in ((gold, 1.0), (predicted, -1.0)):
        prev1 = np.concatenate([[start], path[:-1]])
        prev2 = np.concatenate([[start, start], path[:-2]])[:len(path)]
        delta = np.full(len(path), sign)
        bigram.add((prev1, path), delta, step)
        trigram.add((prev2, prev1, path), delta, step)
