"""Adapting the reranker to a small set of reviewed sentences (Titov 2008 ch. 7, "transferring").

The thesis re-parameterises the trained model before building the kernel: every target-set
word seen at least twice that the model treats as unknown gets its own copy of the unknown
word's parameters, so the model's distribution is unchanged but the features gain slots
specific to those words; the reranker is then trained on the small target set only.

In the neural member words are inputs, not predicted decisions, so the copied parameters are
the unknown word's embedding row, and a word's slots are ``d log P / d E[word]`` (the
gradient with respect to its copy; :func:`parsing.rerank.features.word_block`), ``E`` values
per word, transformed like the output-layer block (Fisher, TOP or frozen-normaliser TOP).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from parsing.features import UNKNOWN
from parsing.neural import NeuralTransitionParser
from parsing.rerank.candidates import Candidates, beam_candidates
from parsing.rerank.reranker import Reranker
from parsing.rerank.scoring import Scorable
from parsing.types import Sentence


def adaptation_words(
    parser: NeuralTransitionParser, reviewed: Sequence[Sentence], min_count: int = 2
) -> list[str]:
    """Lower-cased words seen at least ``min_count`` times in ``reviewed`` that ``parser``
    treats as unknown, most frequent first (then alphabetical)."""
    counts = Counter(form.lower() for sentence in reviewed for form in sentence.forms[1:])
    frequent = [word for word, count in counts.items() if count >= min_count]
    if not frequent:
        return []
    unknown = parser.words_.ids(frequent) == UNKNOWN
    kept = [word for word, is_unknown in zip(frequent, unknown.tolist(), strict=True) if is_unknown]
    return sorted(kept, key=lambda word: (-counts[word], word))


def adapt(
    parser: Scorable, reviewed: Sequence[Sentence], *, k: int = 16, kind: str = "top_eff",
    min_count: int = 2, word_slots: bool = True, candidates: Sequence[Candidates] | None = None,
    rate: float = 1.0, rates: Sequence[float] | None = None, epochs: int = 5, random_state: int = 0,
) -> Reranker:
    """A reranker (re)trained on the reviewed sentences (gold trees) only.

    Args:
        parser: the fitted model whose network defines the features (the neural member or
            the ISBN parser, :mod:`parsing.rerank.scoring`).
        reviewed: reviewed sentences with their gold trees.
        k: k-best list length (ignored when ``candidates`` are given).
        kind: feature kind (``"fisher"``, ``"top"``, ``"top_eff"``).
        min_count: a word needs this many occurrences in ``reviewed`` for its own slots.
        word_slots: add the re-parameterised word slots (``False``: plain retraining); the
            neural member only.
        candidates: the parser's k-best lists of ``reviewed`` if already computed.
        rate, rates, epochs, random_state: as :class:`~parsing.rerank.reranker.Reranker`.

    Raises:
        ValueError: no reviewed sentence, ``k < 1``, no list with two candidates, or word slots
            for a model other than the neural member.
    """
    if not reviewed:
        raise ValueError("no reviewed sentences to adapt to")
    words: list[str] = []
    if word_slots:
        if not isinstance(parser, NeuralTransitionParser):
            raise ValueError("adaptation word slots need the neural member (word_slots=False for others)")
        words = adaptation_words(parser, reviewed, min_count)
    lists = list(candidates) if candidates is not None else beam_candidates(parser, reviewed, k)
    reranker = Reranker(kind, rate=rate, rates=rates, epochs=epochs, words=words, random_state=random_state)
    return reranker.fit(parser, reviewed, lists)
