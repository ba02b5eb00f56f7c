"""The data types of :mod:`parsing.scorer.metrics`: counts, scores and the arc table.

Shared by :mod:`parsing.scorer.metrics` (which builds an :class:`ArcTable` and scores it) and
:mod:`parsing.scorer.breakdowns` (which splits the scores by group); they import from here, so
neither imports the other's internals.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
Arrays below with a leading ``W`` are over all words of all sentences concatenated
(ROOT excluded), in corpus order; ``S`` is the number of sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]
StrArray = NDArray[np.str_]


@dataclass(frozen=True, slots=True)
class Score:
    """Counts behind one metric, with the official script's precision/recall/F1.

    For UAS, LAS and UPOS ``gold == system`` (the same words), so the three coincide.

    Examples:
        >>> score = Score(correct=3, gold=4, system=6)
        >>> score.precision, score.recall, score.f1
        (0.5, 0.75, 0.6)
    """

    correct: int
    gold: int
    system: int

    @property
    def precision(self) -> float:
        """``correct / system`` (0 when there is nothing to score)."""
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        """``correct / gold`` (0 when there is nothing to score)."""
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        """``2 * correct / (gold + system)``: the number the official script reports."""
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Attachment:
    """Unlabelled and labelled attachment counts over a group of words."""

    words: int
    uas_correct: int
    las_correct: int

    @property
    def uas(self) -> float:
        """Fraction of the group's words with the correct head (0 for an empty group)."""
        return self.uas_correct / self.words if self.words else 0.0

    @property
    def las(self) -> float:
        """Fraction with the correct head and universal label (0 for an empty group)."""
        return self.las_correct / self.words if self.words else 0.0


@dataclass(frozen=True, slots=True)
class SentenceBucket:
    """Attachment over the sentences of one length bucket, with their exact matches."""

    sentences: int
    attachment: Attachment
    exact_unlabelled: int
    exact_labelled: int


@dataclass(frozen=True, slots=True)
class ExactMatch:
    """Sentences whose every scored word is correct (unlabelled: heads; labelled: both)."""

    sentences: int
    unlabelled: int
    labelled: int

    @property
    def unlabelled_rate(self) -> float:
        """Fraction of sentences with every head right."""
        return self.unlabelled / self.sentences if self.sentences else 0.0

    @property
    def labelled_rate(self) -> float:
        """Fraction of sentences with every head and universal label right."""
        return self.labelled / self.sentences if self.sentences else 0.0


@dataclass(frozen=True, slots=True)
class ArcTable:
    """Gold and system annotations of every scored word, concatenated (``W`` words).

    Built once by :func:`arc_table`; every score and breakdown is a function of it.

    Attributes:
        sentence: shape ``(W,)``, index of each word's sentence.
        position: shape ``(W,)``, the word's index ``1..n`` in its sentence.
        sentence_lengths: shape ``(S,)``, words per sentence (all words, even unscored).
        gold_heads, system_heads: shape ``(W,)``; ``-1`` for an unknown system head.
        gold_deprels, system_deprels: shape ``(W,)``, universal labels (subtypes cut).
        gold_upos: shape ``(W,)``.
        system_upos: shape ``(W,)``, or None when the system did not tag.
    """

    sentence: IntArray
    position: IntArray
    sentence_lengths: IntArray
    gold_heads: IntArray
    system_heads: IntArray
    gold_deprels: StrArray
    system_deprels: StrArray
    gold_upos: StrArray
    system_upos: StrArray | None
    _correct: dict[str, BoolArray] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The two masks below, made on first use (the table never changes)."""

    def __len__(self) -> int:
        """Number of scored words ``W``."""
        return len(self.gold_heads)

    @property
    def head_correct(self) -> BoolArray:
        """Shape ``(W,)``: the system head equals the gold head."""
        if "head" not in self._correct:
            self._correct["head"] = self.gold_heads == self.system_heads
        return self._correct["head"]

    @property
    def label_correct(self) -> BoolArray:
        """Shape ``(W,)``: head and universal label both correct (LAS)."""
        if "label" not in self._correct:
            self._correct["label"] = self.head_correct & (self.gold_deprels == self.system_deprels)
        return self._correct["label"]

