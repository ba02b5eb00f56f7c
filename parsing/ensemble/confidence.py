"""Confidence and disagreement for annotators: which arcs and sentences to check first.

For each word: every member's head and label, the ensemble's choice, its *vote share* (the
fraction of member weight behind the chosen head), the entropy of the members' weighted head
distribution, and whether the members agree. For each sentence: a disagreement score (mean
``1 - vote share`` over its words) to rank sentences for annotation; Martins et al. (2008,
digest 004 §4.5) show accuracy falls steeply as members disagree more. And a calibration
report: the ensemble's arc accuracy per vote-share bucket on dev.

Pure functions on arrays; results are frozen dataclasses with ``to_dict()`` (JSON-ready).
Conventions (see :mod:`parsing`): ``member_heads`` has shape ``(M, n+1)`` with column 0
``-1``; ``weights`` has shape ``(M,)`` or ``(M, n+1)``; per-word arrays have shape ``(n+1,)``
with entry 0 (ROOT) ``nan`` or ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.ensemble.base import FloatArray, MemberParses, stack_heads, token_weights
from parsing.ensemble.voting import vote_share
from parsing.types import Parse, Sentence

DEFAULT_EDGES: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
"""Vote-share bucket edges: ``[0, .2]``, ``(.2, .4]``, ..., ``(.8, 1]``."""


@dataclass(frozen=True, slots=True)
class TokenConfidence:
    """One word: what each member said, what the ensemble chose, how sure it is."""

    position: int
    form: str
    member_heads: tuple[int, ...]
    member_deprels: tuple[str, ...]
    head: int
    deprel: str
    vote_share: float
    entropy: float
    heads_agree: bool
    labels_agree: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        return {
            "position": self.position, "form": self.form,
            "member_heads": list(self.member_heads), "member_deprels": list(self.member_deprels),
            "head": self.head, "deprel": self.deprel, "vote_share": self.vote_share,
            "entropy": self.entropy, "heads_agree": self.heads_agree,
            "labels_agree": self.labels_agree,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class SentenceConfidence:
    """One sentence's words and its disagreement score (higher = check first).

    Attributes:
        disagreement: mean of ``1 - vote share`` over the words (0 = unanimous).
        expected_errors: sum of ``1 - vote share`` (favours long sentences).
        disagreeing_words: words whose members do not all propose the same head.
    """

    index: int
    sent_id: str | None
    tokens: tuple[TokenConfidence, ...]
    disagreement: float
    expected_errors: float
    disagreeing_words: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "index": self.index, "sent_id": self.sent_id,
            "tokens": [token.to_dict() for token in self.tokens],
            "disagreement": self.disagreement, "expected_errors": self.expected_errors,
            "disagreeing_words": self.disagreeing_words,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class CalibrationBucket:
    """Words whose vote share lies in ``(lower, upper]`` (the first bucket includes ``lower``)."""

    lower: float
    upper: float
    words: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        """``correct / words``, ``None`` for an empty bucket."""
        return self.correct / self.words if self.words else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with ``accuracy``."""
        return {"lower": self.lower, "upper": self.upper, "words": self.words,
                "correct": self.correct, "accuracy": self.accuracy}


def head_entropy(member_heads: ArrayLike, weights: ArrayLike) -> FloatArray:
    """Entropy in bits of each word's weighted distribution over the members' heads.

    Returns:
        shape ``(n+1,)``, entry 0 ``nan``; 0 when the members agree, ``log2 M`` when ``M``
        equally weighted members all differ.

    Examples:
        >>> head_entropy([[-1, 0, 1], [-1, 2, 1]], [1.0, 1.0]).tolist()
        [nan, 1.0, 0.0]
    """
    heads = np.asarray(member_heads, dtype=np.intp)
    n_members, size = heads.shape
    weight = token_weights(weights, n_members, size)
    outcome = np.where((heads >= 0) & (heads < size), heads, size)  # invalid heads: one outcome
    mass = np.zeros((size, size + 1))
    np.add.at(mass, (np.broadcast_to(np.arange(size), heads.shape), outcome), weight)
    total = mass.sum(axis=1, keepdims=True)
    p = np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    entropy: FloatArray = np.maximum(-(p * logs).sum(axis=1), 0.0)
    entropy[0] = np.nan
    return entropy


def heads_agree(member_heads: ArrayLike) -> NDArray[np.bool_]:
    """Whether every member proposes the same head for each word, shape ``(n+1,)``.

    Examples:
        >>> heads_agree([[-1, 0, 1], [-1, 2, 1]]).tolist()
        [True, False, True]
    """
    heads = np.asarray(member_heads, dtype=np.intp)
    agree: NDArray[np.bool_] = np.all(heads == heads[:1], axis=0)
    return agree


def labels_agree(member_heads: ArrayLike, member_deprels: Sequence[Sequence[str]]) -> NDArray[np.bool_]:
    """Whether every member proposes the same head *and* label for each word, shape ``(n+1,)``."""
    labels = np.array([list(row) for row in member_deprels], dtype=np.str_)
    same_label: NDArray[np.bool_] = np.all(labels == labels[:1], axis=0)
    return heads_agree(member_heads) & same_label


def sentence_confidence(
    member_heads: ArrayLike,
    member_deprels: Sequence[Sequence[str]],
    weights: ArrayLike,
    heads: ArrayLike,
    deprels: Sequence[str],
    *,
    forms: Sequence[str] | None = None,
    sent_id: str | None = None,
    index: int = 0,
) -> SentenceConfidence:
    """Per-word confidence and the sentence's disagreement score.

    Args:
        member_heads: shape ``(M, n+1)``.
        member_deprels: ``M`` lists of ``n+1`` labels.
        weights: member weights, shape ``(M,)`` or ``(M, n+1)`` (ones for an unweighted view).
        heads, deprels: the ensemble's choice, ``n+1`` each.
        forms: the words (``n+1``, ROOT first), for display.
        sent_id, index: identify the sentence in its corpus.
    """
    member = np.asarray(member_heads, dtype=np.intp)
    chosen = np.asarray(heads, dtype=np.intp)
    share = vote_share(member, weights, chosen)
    entropy = head_entropy(member, weights)
    agree = heads_agree(member)
    label_agree = labels_agree(member, member_deprels)
    size = chosen.shape[0]
    words = forms if forms is not None else [""] * size
    tokens = tuple(
        TokenConfidence(
            position=d, form=words[d],
            member_heads=tuple(int(h) for h in member[:, d]),
            member_deprels=tuple(row[d] for row in member_deprels),
            head=int(chosen[d]), deprel=deprels[d], vote_share=float(share[d]),
            entropy=float(entropy[d]), heads_agree=bool(agree[d]), labels_agree=bool(label_agree[d]),
        )  # fmt: skip
        for d in range(1, size)
    )
    doubt = 1.0 - share[1:]
    return SentenceConfidence(
        index=index, sent_id=sent_id, tokens=tokens,
        disagreement=round(float(doubt.mean()), 12) if doubt.size else 0.0,  # exact ties rank stably
        expected_errors=round(float(doubt.sum()), 12), disagreeing_words=int((~agree[1:]).sum()),
    )  # fmt: skip


def corpus_confidence(
    sentences: Sequence[Sentence],
    ensemble_parses: Sequence[Parse],
    member_parses: MemberParses,
    weights: ArrayLike | None = None,
) -> list[SentenceConfidence]:
    """:func:`sentence_confidence` of every sentence (uniform weights when ``None``)."""
    result = []
    for i, (sentence, parse) in enumerate(zip(sentences, ensemble_parses, strict=True)):
        parses = [member[i] for member in member_parses]
        weight = np.ones(len(parses)) if weights is None else weights
        result.append(sentence_confidence(
            stack_heads(parses), [p.deprels for p in parses], weight, parse.heads, parse.deprels,
            forms=sentence.forms, sent_id=sentence.sent_id, index=i,
        ))  # fmt: skip
    return result


def rank_for_annotation(confidences: Sequence[SentenceConfidence]) -> list[int]:
    """Positions in ``confidences``, most doubtful sentence first.

    Order: higher ``disagreement``, then higher ``expected_errors``, then corpus order.
    """
    return sorted(
        range(len(confidences)),
        key=lambda i: (-confidences[i].disagreement, -confidences[i].expected_errors, i),
    )


def calibration(
    shares: ArrayLike, correct: ArrayLike, *, edges: Sequence[float] = DEFAULT_EDGES
) -> list[CalibrationBucket]:
    """Arc accuracy per vote-share bucket.

    Args:
        shares: vote share of each scored word, shape ``(W,)``.
        correct: whether the ensemble's head of each word is right, shape ``(W,)``.
        edges: increasing bucket edges; bucket ``i`` is ``(edges[i], edges[i+1]]``, the
            first one closed on the left.

    Examples:
        >>> [b.words for b in calibration([0.1, 0.5, 1.0, 1.0], [0, 1, 1, 0])]
        [1, 0, 1, 0, 2]
    """
    share = np.round(np.asarray(shares, dtype=np.float64), 9)
    right = np.asarray(correct, dtype=bool)
    bounds = np.asarray(edges, dtype=np.float64)
    if bounds.ndim != 1 or bounds.size < 2 or np.any(np.diff(bounds) <= 0):
        raise ValueError("edges must be at least two increasing numbers")
    bucket = np.clip(np.searchsorted(bounds, share, side="left") - 1, 0, bounds.size - 2)
    count = np.bincount(bucket, minlength=bounds.size - 1)
    hits = np.bincount(bucket, weights=right, minlength=bounds.size - 1)
    return [
        CalibrationBucket(float(bounds[i]), float(bounds[i + 1]), int(count[i]), int(hits[i]))
        for i in range(bounds.size - 1)
    ]


def calibration_report(
    gold: Sequence[Sentence],
    ensemble_parses: Sequence[Parse],
    member_parses: MemberParses,
    weights: ArrayLike | None = None,
    *,
    edges: Sequence[float] = DEFAULT_EDGES,
) -> list[CalibrationBucket]:
    """The ensemble's arc accuracy on ``gold`` (dev) per vote-share bucket (:func:`calibration`)."""
    shares, correct = [], []
    for i, (sentence, parse) in enumerate(zip(gold, ensemble_parses, strict=True)):
        parses = [member[i] for member in member_parses]
        weight = np.ones(len(parses)) if weights is None else weights
        shares.append(vote_share(stack_heads(parses), weight, parse.heads)[1:])
        correct.append(np.asarray(parse.heads[1:]) == sentence.heads[1:])
    if not shares:
        return calibration(np.zeros(0), np.zeros(0, dtype=bool), edges=edges)
    return calibration(np.concatenate(shares), np.concatenate(correct), edges=edges)
