"""Confidence intervals for attachment scores, and whether two scores differ beyond noise.

A LAS on 30 held-out sentences moves by a point or two with the sentences drawn, so a round's
score is shown with its 95% percentile bootstrap interval over sentences (Efron & Tibshirani
1993; sentences, not words, are resampled: the words of one sentence are not independent), and
a difference between two rounds scored on the same sentences with the paired bootstrap's
interval of the difference (:func:`parsing.scorer.significance.paired_bootstrap`).

Shapes: per-sentence counts are ``(S,)`` integer arrays (``words`` scored words, ``uas`` and
``las`` correct words of each sentence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.scorer.metrics import arc_table
from parsing.scorer.significance import paired_bootstrap, resample_counts
from parsing.types import Parse, Sentence

__all__ = ["SentenceCounts", "bootstrap_interval", "bootstrap_intervals", "difference", "sentence_counts"]

RESAMPLES = 2000
"""Bootstrap resamples: the interval's ends move by well under 0.1 point between seeds."""

_CHUNK = 250
"""Resamples drawn at a time (a ``(_CHUNK, S)`` array of counts)."""


@dataclass(frozen=True, slots=True)
class SentenceCounts:
    """Per-sentence scored words and correct heads (UAS) and heads + labels (LAS), each ``(S,)``."""

    words: NDArray[np.int64]
    uas: NDArray[np.int64]
    las: NDArray[np.int64]

    def as_lists(self) -> dict[str, list[int]]:
        """JSON-ready: ``{"words": [...], "uas": [...], "las": [...]}``."""
        return {"words": self.words.tolist(), "uas": self.uas.tolist(), "las": self.las.tolist()}


def sentence_counts(gold: Sequence[Sentence], system: Sequence[Sentence | Parse]) -> SentenceCounts:
    """Scored words and correct arcs of every sentence (CoNLL 2018 conventions, as
    :func:`parsing.scorer.metrics.evaluate`).

    Examples:
        >>> gold = [Sentence.from_words(["She", "runs"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> sentence_counts(gold, gold).as_lists()
        {'words': [2], 'uas': [2], 'las': [2]}
    """
    table = arc_table(gold, system)
    sentences = len(gold)

    def per_sentence(mask: NDArray[np.bool_] | None) -> NDArray[np.int64]:
        chosen = table.sentence if mask is None else table.sentence[mask]
        return np.bincount(chosen, minlength=sentences).astype(np.int64)

    return SentenceCounts(per_sentence(None), per_sentence(table.head_correct),
                          per_sentence(table.label_correct))


def bootstrap_interval(correct: ArrayLike, words: ArrayLike, *, resamples: int = RESAMPLES, seed: int = 0,
                       confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval over sentences of ``sum(correct) / sum(words)`` (fractions).

    Args:
        correct, words: shape ``(S,)``, correct and scored words per sentence.

    Raises:
        ValueError: no words, or arrays of different shapes.

    Examples:
        >>> low, high = bootstrap_interval([9, 5, 10, 2], [10, 10, 10, 10])
        >>> 0.3 < low < 0.65 < high < 1.0
        True
        >>> bootstrap_interval([4, 4], [4, 4])
        (1.0, 1.0)
    """
    right = np.asarray(correct, dtype=np.int64)
    if right.ndim != 1 or right.shape != np.shape(words):
        raise ValueError("correct and words must be 1-D arrays of one length")
    return bootstrap_intervals(right[None, :], words, resamples=resamples, seed=seed,
                               confidence=confidence)[0]


def bootstrap_intervals(correct: ArrayLike, words: ArrayLike, *, resamples: int = RESAMPLES, seed: int = 0,
                        confidence: float = 0.95) -> list[tuple[float, float]]:
    """:func:`bootstrap_interval` of each row of ``correct`` (shape ``(K, S)``: K scores of the
    same ``S`` sentences, e.g. UAS and LAS of several parsers) over the same ``words`` (``(S,)``).

    Each row's interval is exactly the one :func:`bootstrap_interval` gives it (same seed, same
    resamples): the resamples are drawn once for all rows, in chunks of :data:`_CHUNK` so memory
    stays ``O(_CHUNK * S)`` however many sentences there are.

    Raises:
        ValueError: no words, or shapes that do not line up.

    Examples:
        >>> [(round(low, 3), round(high, 3)) for low, high in
        ...  bootstrap_intervals([[9, 5, 10, 2], [4, 4, 4, 4]], [10, 10, 10, 10])]
        [(0.35, 0.95), (0.4, 0.4)]
    """
    right = np.asarray(correct, dtype=np.int64)
    total = np.asarray(words, dtype=np.int64)
    if right.ndim != 2 or total.ndim != 1 or right.shape[1] != total.shape[0]:
        raise ValueError("correct must have shape (K, S) and words (S,)")
    if total.sum() <= 0:
        raise ValueError("there are no words to score")
    rng = np.random.default_rng(seed)
    count = len(total)
    scores = np.empty((right.shape[0], resamples))
    right_f, total_f = right.astype(np.float64), total.astype(np.float64)  # exact: counts < 2**53
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        draws = resample_counts(rng, count, size)  # (size, S)
        scores[:, start:start + size] = (right_f @ draws.T) / np.maximum(draws @ total_f, 1)
    tail = (1.0 - confidence) / 2.0
    ends = np.quantile(scores, [tail, 1.0 - tail], axis=1)  # (2, K)
    return [(float(low), float(high)) for low, high in ends.T]


@dataclass(frozen=True, slots=True)
class Difference:
    """``score_a - score_b`` (fractions) with the paired bootstrap's 95% interval of it."""

    delta: float
    low: float
    high: float
    sentences: int

    @property
    def within_noise(self) -> bool:
        """The interval contains 0: the data do not tell the two scores apart."""
        return self.low <= 0.0 <= self.high


def difference(correct_a: ArrayLike, correct_b: ArrayLike, words: ArrayLike, *,
               resamples: int = RESAMPLES, seed: int = 0) -> Difference:
    """The paired difference of two systems' scores on the same sentences (shapes ``(S,)``).

    Examples:
        >>> difference([5, 5, 5], [5, 5, 4], [5, 5, 5]).within_noise
        True
    """
    result = paired_bootstrap(correct_a, correct_b, words, resamples=resamples, seed=seed)
    return Difference(result.delta, result.ci_low, result.ci_high, len(np.asarray(words)))
