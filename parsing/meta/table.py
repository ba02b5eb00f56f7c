"""The meta-feature table: hashed base feature → frequency class (Chen et al. 2013, §3.1).

For each base template, the features seen on auto-parsed arcs are counted, those seen fewer
than ``min_count`` times are pruned, and the rest are sorted by decreasing count. With
``R(f)`` the 1-based position of ``f`` in that list of ``m`` features:

* High (:data:`HIGH`) when ``R(f) <= TOP10``, ``TOP10 = ceil(10% of m)``;
* Middle (:data:`MIDDLE`) when ``TOP10 < R(f) <= TOP30``, ``TOP30 = ceil(30% of m)``;
* Low (:data:`LOW`) for the rest of the list;
* Other (:data:`OTHER`) for any feature not in the list (unseen or pruned).

The paper states the 10%/30% positions but not their rounding (the digest reads them as
ceilings over the number of *distinct* features) nor how equal counts are ordered: here ties
are broken by the feature's key, ascending, so the split is exactly positional and the same in
every process. Percentages are integers, so the cut positions are computed without floats.

A feature is identified by its 63-bit key (:func:`parsing.meta.templates.arc_keys`), which
already mixes in the template, so one sorted key array serves every template. The table is a
dataclass of two arrays and a list of words: it saves without pickle (:mod:`parsing.persist`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from parsing.persist import load_model, save_model

OTHER, HIGH, MIDDLE, LOW = 0, 1, 2, 3
"""Class codes (Other is 0: what an unknown feature looks up to)."""

CLASS_NAMES = ("O", "H", "M", "L")
"""Display names by class code."""


def cut_positions(m: int, top_high: int = 10, top_middle: int = 30) -> tuple[int, int]:
    """``(TOP10, TOP30)`` for a list of ``m`` features: the ceilings of ``top_high``% and
    ``top_middle``% of ``m``.

    Examples:
        >>> cut_positions(10), cut_positions(11), cut_positions(0)
        ((1, 3), (2, 4), (0, 0))
    """
    return (m * top_high + 99) // 100, (m * top_middle + 99) // 100


def rank_classes(keys: NDArray[np.int64], counts: NDArray[np.int64], *, min_count: int = 1,
                 top_high: int = 10, top_middle: int = 30) -> tuple[NDArray[np.int64], NDArray[np.int8]]:
    """Classes of one template's distinct features from their counts (module docstring).

    Args:
        keys: distinct feature keys, shape ``(m,)``.
        counts: their counts on the auto-parsed arcs, shape ``(m,)``.
        min_count: features counted fewer times are pruned (they will be Other).

    Returns:
        ``(kept keys, classes)``, in rank order (most frequent first), shape ``(m',)`` each.

    Examples:
        >>> keys = np.arange(10, dtype=np.int64)
        >>> rank_classes(keys, 10 - keys)[1].tolist()
        [1, 2, 2, 3, 3, 3, 3, 3, 3, 3]
    """
    kept = counts >= min_count
    keys, counts = keys[kept], counts[kept]
    order = np.lexsort((keys, -counts))
    top10, top30 = cut_positions(len(order), top_high, top_middle)
    position = np.arange(1, len(order) + 1)
    classes = np.where(position <= top10, HIGH, np.where(position <= top30, MIDDLE, LOW))
    return keys[order], classes.astype(np.int8)


@dataclass(slots=True)
class MetaTable:
    """Hashed base feature → class, plus the head words the WithWORD meta features may name.

    Attributes:
        keys: feature keys, sorted ascending, shape ``(N,)``, ``int64``.
        classes: their classes (:data:`HIGH`, :data:`MIDDLE`, :data:`LOW`), shape ``(N,)``.
        head_words: keys of the words a WithWORD meta feature may name (the ``top_words``
            most frequent lowercased words of the labelled training data), sorted, ``int64``.
        min_count, top_high, top_middle: the settings the table was built with (for display).
        n_sentences, n_words: size of the auto-parsed text the counts come from.

    Examples:
        >>> table = MetaTable.build([(np.array([5, 7, 9]), np.array([3, 1, 2]))],
        ...                         head_words=np.array([], dtype=np.int64))
        >>> table.classify(np.array([[5, 9], [7, 8]])).tolist()
        [[1, 3], [3, 0]]
    """

    keys: NDArray[np.int64]
    classes: NDArray[np.int8]
    head_words: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    min_count: int = 1
    top_high: int = 10
    top_middle: int = 30
    n_sentences: int = 0
    n_words: int = 0

    @classmethod
    def build(cls, counted: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]], *,
              head_words: NDArray[np.int64], min_count: int = 1, top_high: int = 10,
              top_middle: int = 30, n_sentences: int = 0, n_words: int = 0) -> MetaTable:
        """The table of per-template ``(distinct keys, counts)`` pairs (:func:`rank_classes`
        on each template separately, then merged and sorted by key)."""
        ranked = [rank_classes(keys, counts, min_count=min_count, top_high=top_high,
                               top_middle=top_middle) for keys, counts in counted]
        keys = np.concatenate([np.zeros(0, np.int64), *(k for k, _ in ranked)]).astype(np.int64)
        classes = np.concatenate([np.zeros(0, np.int8), *(c for _, c in ranked)]).astype(np.int8)
        order = np.argsort(keys, kind="stable")
        return cls(keys[order], classes[order], np.unique(head_words).astype(np.int64),
                   min_count, top_high, top_middle, n_sentences, n_words)

    def __len__(self) -> int:
        """Number of classified (non-Other) features."""
        return len(self.keys)

    def classify(self, keys: NDArray[np.int64]) -> NDArray[np.int8]:
        """The class of every key (any shape): its table class, or :data:`OTHER`."""
        if len(self.keys) == 0:
            return np.zeros(np.shape(keys), np.int8)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        found = self.keys[at] == keys
        return np.where(found, self.classes[at], OTHER).astype(np.int8)

    def is_head_word(self, word_keys: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each word key is among :attr:`head_words` (any shape)."""
        return np.isin(word_keys, self.head_words)

    def class_counts(self) -> dict[str, int]:
        """How many features each class holds (Other: none, it is the rest)."""
        return {CLASS_NAMES[c]: int(np.count_nonzero(self.classes == c)) for c in (HIGH, MIDDLE, LOW)}

    def save(self, path: str | Path) -> None:
        """Write the table to ``path`` (arrays plus JSON, :mod:`parsing.persist`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path) -> MetaTable:
        """Read a table written by :meth:`save`."""
        table: MetaTable = load_model(path, cls)
        return table
