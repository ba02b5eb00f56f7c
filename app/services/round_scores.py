"""A round's scores: every member's and the ensemble's UAS and LAS on the round's evaluation
trees, with 95% bootstrap intervals, and whether two rounds' scores differ beyond noise.

A round scored on 30 held-out sentences moves by a point or two with the sentences drawn, so the
rounds page and the scoreboard show each score's interval, and a plain note when the change
from the previous round lies within the paired bootstrap's interval of the difference
(:mod:`parsing.scorer.intervals`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parsing.pipeline import ModelBundle
from parsing.scorer.intervals import Difference, bootstrap_interval, difference, sentence_counts
from parsing.scorer.metrics import evaluate
from parsing.types import Parse
from parsing.types import Sentence as ParsingSentence


def evaluation_scores(
    bundle: ModelBundle, gold: Sequence[ParsingSentence], sentence_ids: Sequence[int] = ()
) -> tuple[dict[str, Any] | None, dict[str, list[Parse]]]:
    """UAS and LAS in percent (CoNLL 2018 scorer) of every member and the ensemble on ``gold``,
    each with its 95% bootstrap interval over sentences (:mod:`parsing.scorer.intervals`) and its
    per-sentence counts: ``{"members": {NAME: SCORE}, "ensemble": SCORE, "sentence_ids": [...]}``
    with ``SCORE = {"uas", "las", "uas_ci": [low, high], "las_ci": [low, high], "per_sentence":
    {"words", "uas", "las"}}`` (no ``ensemble`` key when the bundle has none; ``sentence_ids``, the
    database ids of ``gold``, pair two rounds' counts); and the members' parses. ``(None, {})``
    without gold trees."""
    if not gold:
        return None, {}
    if bundle.ensemble is not None:
        member_parses, combined = bundle.parse_with_ensemble(gold)
    else:
        member_parses, combined = bundle.parse(gold), None

    def percent(parses: Sequence[Parse]) -> dict[str, Any]:
        result = evaluate(gold, parses)
        counts = sentence_counts(gold, parses)
        score: dict[str, Any] = {"uas": round(100 * result.uas.f1, 2), "las": round(100 * result.las.f1, 2)}
        if counts.words.sum() > 0:
            for metric in ("uas", "las"):
                low, high = bootstrap_interval(getattr(counts, metric), counts.words)
                score[f"{metric}_ci"] = [round(100 * low, 2), round(100 * high, 2)]
        score["per_sentence"] = counts.as_lists()
        return score

    scores: dict[str, Any] = {"members": {name: percent(parses) for name, parses in member_parses.items()}}
    if combined is not None:
        scores["ensemble"] = percent(combined)
    if len(sentence_ids) == len(gold):
        scores["sentence_ids"] = [int(sid) for sid in sentence_ids]
    return scores, dict(member_parses)


MIN_PAIRED_SENTENCES = 5
"""Fewer common sentences than this: two rounds' scores are not compared."""


@dataclass(frozen=True)
class RoundChange:
    """How ``name``'s LAS moved from round ``previous`` to round ``number``: ``points``, the paired
    difference (new − old, in LAS points) with its 95% interval on the sentences both were scored on."""

    number: int
    previous: int
    name: str
    points: Difference


def score_interval(scores: Mapping[str, Any] | None, name: str, metric: str) -> tuple[float, float] | None:
    """The stored 95% interval (percent) of ``metric`` of member ``name`` or ``"ensemble"``; None
    for rounds scored before intervals were kept."""
    entry = _entry(scores, name)
    interval = (entry or {}).get(f"{metric}_ci")
    return None if not interval else (float(interval[0]), float(interval[1]))


def round_change(number: int, previous: int, before: Mapping[str, Any] | None,
                 after: Mapping[str, Any] | None, name: str = "ensemble") -> RoundChange | None:
    """The LAS change of ``name`` between two rounds' stored scores (:func:`evaluation_scores`),
    paired on the sentences both were scored on; None when they kept no per-sentence counts or
    share fewer than :data:`MIN_PAIRED_SENTENCES` sentences."""
    counts = [_per_sentence(scores, name) for scores in (before, after)]
    if counts[0] is None or counts[1] is None:
        return None
    common = [sid for sid in counts[0] if sid in counts[1]]
    if len(common) < MIN_PAIRED_SENTENCES:
        return None
    words = np.array([counts[1][sid][0] for sid in common])
    if words.sum() <= 0:
        return None
    new = np.array([counts[1][sid][1] for sid in common])
    old = np.array([counts[0][sid][1] for sid in common])
    result = difference(new, old, words)
    points = Difference(round(100 * result.delta, 2), round(100 * result.low, 2), round(100 * result.high, 2),
                        result.sentences)
    return RoundChange(number, previous, name, points)


def _entry(scores: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
    scores = scores or {}
    entry = scores.get("ensemble") if name == "ensemble" else (scores.get("members") or {}).get(name)
    return entry if isinstance(entry, Mapping) else None


def _per_sentence(scores: Mapping[str, Any] | None, name: str) -> dict[int, tuple[int, int]] | None:
    """``{sentence id: (words, LAS-correct words)}`` of ``name`` in a round's stored scores."""
    entry, ids = _entry(scores, name), (scores or {}).get("sentence_ids")
    counts = (entry or {}).get("per_sentence")
    if not counts or not ids or len(ids) != len(counts.get("words", ())):
        return None
    return {int(sid): (int(w), int(c)) for sid, w, c in zip(ids, counts["words"], counts["las"], strict=True)}
