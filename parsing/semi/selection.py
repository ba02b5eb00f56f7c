"""Which pool sentences an annotator should correct first: selection strategies.

Every strategy gives each sentence a *priority* (higher = more useful to annotate now) from
the members' parses and the ensemble's tree. A word's *vote share* is the weighted fraction
of members whose head equals the ensemble's head (:func:`parsing.ensemble.voting.vote_share`);
its *vote entropy* is the entropy of the members' weighted head distribution
(:func:`parsing.ensemble.confidence.head_entropy`). Per sentence:

* ``random``: a seeded random order (the baseline every other strategy must beat);
* ``longest``: the number of words (most words first);
* ``disagreement``: the mean of ``1 - vote share`` over the words (the app's queue order);
* ``expected-errors``: the sum of ``1 - vote share``, the expected number of wrong heads when
  vote share estimates correctness (the calibration table says it does);
* ``entropy``: the sum of the words' vote entropies (bits);
* ``detector``: the sum of the words' ``p_wrong`` by the arc error detector
  (:mod:`parsing.detect`): its expected number of wrong arcs in the ensemble's tree. The caller
  scores the trees and passes ``p_wrong`` (one array per sentence); the app's queue order of the
  same name sorts by the same sum, stored when a round parses.

:func:`rank_sentences` orders the sentences; :func:`select_batch` takes the first ``k``,
optionally skipping near-duplicates of sentences already in the batch.

Conventions (see :mod:`parsing`): ``member_parses[m][s]`` is member ``m``'s parse of sentence
``s`` (``M`` lists of ``S`` parses); ``weights`` has shape ``(M,)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.ensemble.confidence import corpus_confidence
from parsing.types import Parse, Sentence

__all__ = ["ALL_STRATEGIES", "STRATEGIES", "diverse_batch", "jaccard", "rank_sentences", "select_batch",
           "sentence_priorities"]

STRATEGIES: tuple[str, ...] = ("random", "longest", "disagreement", "expected-errors", "entropy")
"""The selection strategies computed from the parses alone, by name."""
ALL_STRATEGIES: tuple[str, ...] = (*STRATEGIES, "detector")
"""Every strategy (the ``--strategy`` choices of ``simulate``): ``detector`` also needs the arc
error detector's scores (``p_wrong``)."""

_NEEDS_PARSES = frozenset({"disagreement", "expected-errors", "entropy", "detector"})


def _check_strategy(strategy: str) -> None:
    if strategy not in ALL_STRATEGIES:
        raise ValueError(f"unknown selection strategy {strategy!r}; known: {', '.join(ALL_STRATEGIES)}")


def _scores(
    strategy: str,
    sentences: Sequence[Sentence],
    member_parses: Sequence[Sequence[Parse]],
    ensemble_parses: Sequence[Parse],
    weights: ArrayLike | None,
    random_state: int,
    p_wrong: Sequence[ArrayLike] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each sentence's priority and a secondary key for ties, both shape ``(S,)``."""
    _check_strategy(strategy)
    size = len(sentences)
    if strategy == "detector":
        if p_wrong is None or len(p_wrong) != size:
            raise ValueError("strategy 'detector' needs the detector's p_wrong of every sentence's words "
                             f"({size} sentences, got {'none' if p_wrong is None else len(p_wrong)})")
        expected = np.array([float(np.sum(p)) for p in p_wrong])
        return np.round(expected, 12), np.zeros(size)
    lengths = np.array([len(sentence) for sentence in sentences], dtype=np.float64)
    if strategy == "random":
        return np.random.default_rng(random_state).random(size), np.zeros(size)
    if strategy == "longest":
        return lengths, np.zeros(size)
    if not member_parses:
        raise ValueError(f"strategy {strategy!r} needs the members' parses")
    if len(ensemble_parses) != size or any(len(member) != size for member in member_parses):
        raise ValueError(
            f"strategy {strategy!r}: {size} sentences but {len(ensemble_parses)} ensemble parses and "
            f"member parses of {sorted({len(member) for member in member_parses})} sentences"
        )
    confidences = corpus_confidence(sentences, ensemble_parses, member_parses, weights)
    if strategy == "disagreement":  # the app's order: ties go to the sentence with more doubt
        return (
            np.array([c.disagreement for c in confidences]),
            np.array([c.expected_errors for c in confidences]),
        )
    if strategy == "expected-errors":
        return np.array([c.expected_errors for c in confidences]), np.zeros(size)
    entropy = np.array([sum(token.entropy for token in c.tokens) for c in confidences])
    return np.round(entropy, 12), np.zeros(size)


def sentence_priorities(
    strategy: str,
    sentences: Sequence[Sentence],
    member_parses: Sequence[Sequence[Parse]],
    ensemble_parses: Sequence[Parse],
    *,
    weights: ArrayLike | None = None,
    random_state: int = 0,
    p_wrong: Sequence[ArrayLike] | None = None,
) -> NDArray[np.float64]:
    """Each sentence's priority under ``strategy`` (higher = annotate sooner), shape ``(S,)``.

    Args:
        strategy: one of :data:`STRATEGIES`.
        sentences: the ``S`` pool sentences (their trees, if any, are ignored).
        member_parses: ``M`` lists of ``S`` parses (unused, may be empty, for ``random`` and
            ``longest``).
        ensemble_parses: the ensemble's parse of each sentence.
        weights: member weights, shape ``(M,)`` (uniform when ``None``); use the voting
            ensemble's own weights so a share is what the ensemble saw.
        random_state: seed of ``random``.
        p_wrong: ``detector`` only: the detector's ``p_wrong`` of each sentence's words.

    Raises:
        ValueError: unknown strategy, or parses that do not match the sentences.

    Examples:
        >>> s = [Sentence.from_words(["a"]), Sentence.from_words(["b", "c", "d"])]
        >>> sentence_priorities("longest", s, [], []).tolist()
        [1.0, 3.0]
    """
    priority, _ = _scores(strategy, sentences, member_parses, ensemble_parses, weights, random_state, p_wrong)
    return priority


def rank_sentences(
    strategy: str,
    sentences: Sequence[Sentence],
    member_parses: Sequence[Sequence[Parse]],
    ensemble_parses: Sequence[Parse],
    *,
    weights: ArrayLike | None = None,
    random_state: int = 0,
    p_wrong: Sequence[ArrayLike] | None = None,
) -> list[int]:
    """Indices of ``sentences``, most useful to annotate first (see :func:`sentence_priorities`).

    Ties: ``disagreement`` puts the sentence with more expected errors first (as the app's
    queue does); then every strategy keeps corpus order, so the ranking is deterministic.

    Examples:
        >>> s = [Sentence.from_words(["a", "b"]), Sentence.from_words(["c"]), Sentence.from_words(["d", "e"])]
        >>> rank_sentences("longest", s, [], [])
        [0, 2, 1]
    """
    priority, secondary = _scores(strategy, sentences, member_parses, ensemble_parses, weights, random_state,
                                  p_wrong)
    return sorted(range(len(sentences)), key=lambda i: (-priority[i], -secondary[i], i))


def _token_set(sentence: Sentence) -> frozenset[str]:
    return frozenset(form.lower() for form in sentence.forms[1:])


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a & b| / |a | b|`` (1.0 for two empty sets).

    Examples:
        >>> jaccard(frozenset("abc"), frozenset("bcd"))
        0.5
    """
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def select_batch(
    ranked: Sequence[int],
    sentences: Sequence[Sentence],
    k: int,
    *,
    diversity: bool = False,
    max_similarity: float = 0.7,
) -> list[int]:
    """The first ``k`` indices of ``ranked`` (a batch for the annotator).

    With ``diversity``, a sentence is skipped when its set of lowercased forms is a
    near-duplicate of a sentence already in the batch (Jaccard similarity
    ``> max_similarity``). Only when ``ranked`` runs out before ``k`` sentences are chosen
    are the skipped ones used, in rank order, so a batch is never smaller than it can be.

    Args:
        ranked: sentence indices, most useful first (:func:`rank_sentences`).
        sentences: the sentences the indices point into.
        k: batch size (``>= 0``).
        diversity, max_similarity: see above; ``max_similarity`` in ``[0, 1]``.

    Raises:
        ValueError: negative ``k`` or ``max_similarity`` outside ``[0, 1]``.

    Examples:
        >>> s = [Sentence.from_words(["The", "cat"]), Sentence.from_words(["the", "cat"]),
        ...      Sentence.from_words(["A", "dog"])]
        >>> select_batch([0, 1, 2], s, 2), select_batch([0, 1, 2], s, 2, diversity=True)
        ([0, 1], [0, 2])
    """
    if not diversity:
        _check_batch(k, max_similarity)
        return list(ranked[:k])
    return diverse_batch(ranked, [_token_set(sentence) for sentence in sentences], k,
                         max_similarity=max_similarity)


def _check_batch(k: int, max_similarity: float) -> None:
    if k < 0:
        raise ValueError(f"batch size must be >= 0, got {k}")
    if not 0.0 <= max_similarity <= 1.0:
        raise ValueError(f"max_similarity must lie in [0, 1], got {max_similarity}")


def diverse_batch(ranked: Sequence[int], token_sets: Sequence[frozenset[str]], k: int, *,
                  max_similarity: float = 0.7) -> list[int]:
    """The first ``k`` of ``ranked`` that are not near-duplicates (Jaccard similarity of their
    token sets ``> max_similarity``) of one chosen before them; skipped ones fill the batch last,
    in rank order, only when ``ranked`` runs out.

    ``token_sets[i]`` is sentence ``i``'s set of lowercased words (the app builds it from a
    sentence's text). With ``k = len(ranked)`` this reorders a whole queue: near-duplicates move
    behind every other sentence.

    Examples:
        >>> sets = [frozenset({"the", "cat"}), frozenset({"the", "cat"}), frozenset({"a", "dog"})]
        >>> diverse_batch([0, 1, 2], sets, 3)
        [0, 2, 1]
    """
    _check_batch(k, max_similarity)
    chosen: list[int] = []
    chosen_sets: list[frozenset[str]] = []
    skipped: list[int] = []
    for index in ranked:
        if len(chosen) == k:
            break
        tokens = token_sets[index]
        if any(jaccard(tokens, other) > max_similarity for other in chosen_sets):
            skipped.append(index)
            continue
        chosen.append(index)
        chosen_sets.append(tokens)
    return chosen + skipped[: k - len(chosen)]
