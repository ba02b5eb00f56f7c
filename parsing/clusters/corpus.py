"""Unlabelled text as the clusterings read it: word ids, their counts and bigram counts.

Sentences are lists of word forms (a treebank's forms with the trees hidden, or lines of raw
text split on white space). Forms are normalised (:func:`~parsing.clusters.lexicon.normalize_word`);
words seen fewer than ``min_count`` times all become :data:`~parsing.clusters.lexicon.UNKNOWN_WORD`.
Word ids are numbered by decreasing frequency (ties in a seeded random order), so id ``i`` is
the ``i``-th word a frequency-ordered algorithm (Brown) meets. Bigrams are counted inside
sentences only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from parsing.clusters.lexicon import UNKNOWN_WORD, normalize_word
from parsing.types import Sentence


@dataclass(frozen=True, slots=True)
class Corpus:
    """Word ids and counts of a text.

    Attributes:
        words: the vocabulary, most frequent first, shape ``(V,)`` as a list.
        counts: token count of each word, shape ``(V,)``.
        bigrams: ``bigrams[u, v]`` = times ``v`` directly follows ``u`` in a sentence,
            a ``(V, V)`` CSR matrix.
        sentences: each sentence as an array of word ids.
    """

    words: list[str]
    counts: NDArray[np.int64]
    bigrams: sp.csr_matrix
    sentences: list[NDArray[np.int64]]

    @property
    def n_tokens(self) -> int:
        """Number of tokens."""
        return int(self.counts.sum())

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], *, min_count: int = 2, seed: int = 0) -> Corpus:
        """The corpus of ``sentences`` (lists of forms).

        Args:
            min_count: words seen fewer times become :data:`UNKNOWN_WORD`.
            seed: orders words of equal frequency.
        """
        normalised = [[normalize_word(form) for form in sentence] for sentence in sentences]
        raw = Counter(word for sentence in normalised for word in sentence)
        counts = Counter({w: c for w, c in raw.items() if c >= min_count and w != UNKNOWN_WORD})
        rare = sum(c for w, c in raw.items() if w not in counts)
        if rare:
            counts[UNKNOWN_WORD] = rare
        tie = np.random.default_rng(seed).permutation(len(counts))
        alphabetical = sorted(counts)
        order = sorted(range(len(alphabetical)), key=lambda i: (-counts[alphabetical[i]], tie[i]))
        words = [alphabetical[i] for i in order]
        index = {word: i for i, word in enumerate(words)}
        unknown = index.get(UNKNOWN_WORD, -1)
        ids = [np.array([index.get(w, unknown) for w in sentence], dtype=np.int64) for sentence in normalised]
        frequencies = np.array([counts[w] for w in words], dtype=np.int64)
        return cls(words, frequencies, _bigrams(ids, len(words)), ids)


def _bigrams(sentences: list[NDArray[np.int64]], size: int) -> sp.csr_matrix:
    left = np.concatenate([s[:-1] for s in sentences]) if sentences else np.zeros(0, np.int64)
    right = np.concatenate([s[1:] for s in sentences]) if sentences else np.zeros(0, np.int64)
    matrix = sp.coo_matrix((np.ones(len(left), dtype=np.int64), (left, right)), shape=(size, size))
    return matrix.tocsr()


def sentence_words(sentences: Iterable[Sentence]) -> list[list[str]]:
    """The forms of treebank sentences (ROOT left out): their text with the trees hidden."""
    return [list(sentence.forms[1:]) for sentence in sentences]


def read_text(path: str | Path) -> list[list[str]]:
    """A raw text file as sentences: one per non-empty line, split on white space."""
    with Path(path).open(encoding="utf-8") as handle:
        return [line.split() for line in handle if line.strip()]
