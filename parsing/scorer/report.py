"""JSON-ready dicts of an :class:`~parsing.scorer.metrics.Evaluation`.

Scores become percentages rounded to 4 decimals; counts stay integers.

Conventions (of :mod:`parsing.scorer.metrics`): index 0 is ROOT and is never scored; words are
the syntactic words of the sentences, punctuation included unless ``exclude_punct``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parsing.scorer.metrics import Evaluation
from parsing.scorer.types import Attachment, Score


def _percent(fraction: float) -> float:
    return round(100.0 * fraction, 4)


def _attachment_dict(counts: Attachment) -> dict[str, float | int]:
    return {"words": counts.words, "UAS": _percent(counts.uas), "LAS": _percent(counts.las)}


def _score_dict(score: Score) -> dict[str, float | int]:
    return {
        "correct": score.correct, "gold": score.gold, "system": score.system,
        "precision": _percent(score.precision), "recall": _percent(score.recall),
        "f1": _percent(score.f1),
    }  # fmt: skip


BREAKDOWNS = ("by_upos", "by_deprel", "by_arc_length", "by_sentence_length")
"""Keys of the breakdowns in :func:`evaluation_to_dict`."""


def evaluation_to_dict(
    evaluation: Evaluation, *, breakdowns: Sequence[str] = BREAKDOWNS
) -> dict[str, Any]:
    """A JSON-ready dict: ``UAS``, ``LAS``, ``CLAS``, ``UPOS`` as percentages (F1).

    Args:
        evaluation: what :func:`evaluate` returned.
        breakdowns: which of :data:`BREAKDOWNS` to include.

    Returns:
        ``{"UAS": float, "LAS": float, "CLAS": float, "UPOS": float | None, "words": int,
        "sentences": int, "exclude_punct": bool, "counts": {...}, "exact_match": {...},
        "by_upos": {...}, ...}``; percentages are rounded to 4 decimals.

    Examples:
        >>> from parsing.scorer.metrics import evaluate
        >>> from parsing.types import Sentence
        >>> gold = [Sentence.from_words(["She", "runs"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> result = evaluation_to_dict(evaluate(gold, gold), breakdowns=())
        >>> result["LAS"], result["words"], "by_upos" in result
        (100.0, 2, False)
    """
    scores: Mapping[str, Score | None] = {
        "UAS": evaluation.uas, "LAS": evaluation.las,
        "CLAS": evaluation.clas, "UPOS": evaluation.upos,
    }  # fmt: skip
    result: dict[str, Any] = {
        name: None if score is None else _percent(score.f1) for name, score in scores.items()
    }
    result["words"] = evaluation.words
    result["sentences"] = evaluation.sentences
    result["exclude_punct"] = evaluation.exclude_punct
    result["counts"] = {
        name: _score_dict(score) for name, score in scores.items() if score is not None
    }
    match = evaluation.exact_match
    result["exact_match"] = {
        "sentences": match.sentences,
        "unlabelled": _percent(match.unlabelled_rate),
        "labelled": _percent(match.labelled_rate),
    }
    if "by_upos" in breakdowns:
        result["by_upos"] = {k: _attachment_dict(v) for k, v in evaluation.by_upos.items()}
    if "by_deprel" in breakdowns:
        result["by_deprel"] = {k: _score_dict(v) for k, v in evaluation.by_deprel.items()}
    if "by_arc_length" in breakdowns:
        result["by_arc_length"] = {
            k: _attachment_dict(v) for k, v in evaluation.by_arc_length.items()
        }
    if "by_sentence_length" in breakdowns:
        result["by_sentence_length"] = {
            key: {
                "sentences": bucket.sentences,
                **_attachment_dict(bucket.attachment),
                "exact_unlabelled": bucket.exact_unlabelled,
                "exact_labelled": bucket.exact_labelled,
            }
            for key, bucket in evaluation.by_sentence_length.items()
        }
    return result
