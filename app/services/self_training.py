"""Self-training in a round: automatic trees from the pool's stored parses (Green 2013 §3.3).

A round with self-training adds pool sentences that nobody annotated to every member's
training data, labelled by the previous pre-annotation: each member's own tree (``own``,
Green's scenario A) or the ensemble's (``ensemble``, scenario B), chosen by
:func:`parsing.semi.self_training.select_candidates` (random, whole-tree agreement, or mean
vote share) and bounded by a number of sentences. The stored parses are the previous round's,
so self-training costs no extra parse. Human trees are always kept; the ensemble and the
round's scores never see automatic trees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sqlalchemy import select

from app.models import Treebank, TreeVersion
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.parsing_adapter import load_sentences
from app.services.trees import latest_versions
from parsing.semi.self_training import LABEL_SOURCES, SELECTIONS, SelfTrainingConfig, select_automatic
from parsing.types import NO_HEAD, Parse
from parsing.types import Sentence as ParsingSentence

MAX_AUTOMATIC = 100_000
"""The largest number of automatic sentences a round accepts."""


class SettingsError(ValueError):
    """Self-training settings that cannot be used; ``field`` names the offending one."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"self_training.{field}: {problem}")
        self.field, self.problem = field, problem


def parse_settings(value: Any) -> dict[str, Any] | None:
    """Validated self-training settings from a request body, or None when off.

    Accepts ``None``/missing/``{"source": "none"}`` (off) or an object with ``source``
    (``own``/``ensemble``), optional ``select`` (default ``confidence``) and ``sentences``
    (at most this many automatic trees; default: as many as human trees).

    Raises:
        SettingsError: a wrong type or value, naming the field.

    Examples:
        >>> parse_settings({"source": "ensemble", "sentences": 50})
        {'source': 'ensemble', 'select': 'confidence', 'sentences': 50}
        >>> parse_settings(None) is None
        True
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SettingsError("", "must be an object or null")
    unknown = sorted(set(value) - {"source", "select", "sentences"})
    if unknown:
        raise SettingsError(unknown[0], "unknown setting")
    source = value.get("source", "none")
    if source in (None, "", "none"):
        return None
    if source not in LABEL_SOURCES:
        raise SettingsError("source", f"must be none, {' or '.join(LABEL_SOURCES)}")
    chosen = value.get("select") or "confidence"
    if chosen not in SELECTIONS:
        raise SettingsError("select", f"must be one of {', '.join(SELECTIONS)}")
    sentences = value.get("sentences")
    if sentences in (None, ""):
        sentences = None
    elif isinstance(sentences, str) and sentences.isascii() and sentences.isdigit() and len(sentences) < 7:
        sentences = int(sentences)
    if sentences is not None and (isinstance(sentences, bool) or not isinstance(sentences, int)
                                  or not 0 <= sentences <= MAX_AUTOMATIC):
        raise SettingsError("sentences", f"must be a whole number from 0 to {MAX_AUTOMATIC:,}")
    return {"source": source, "select": chosen, "sentences": sentences}


def config_of(settings: Mapping[str, Any], *, random_state: int = 0) -> SelfTrainingConfig:
    """The library's configuration for validated ``settings`` (:func:`parse_settings`)."""
    return SelfTrainingConfig(source=settings["source"], select=settings["select"],
                              max_automatic=settings.get("sentences"),
                              max_share=1.0 if settings.get("sentences") is None else float(MAX_AUTOMATIC),
                              random_state=random_state)


def _parse_of(tree: TreeVersion) -> Parse:
    heads = np.array([NO_HEAD, *(int(h) for h in tree.heads)], dtype=np.intp)
    return Parse(heads=heads, deprels=["", *(str(label) for label in tree.deprels)])


def previous_weights(session: DbSession, treebank: Treebank, before: int) -> dict[str, float]:
    """Member vote weights of the newest round numbered below ``before`` (empty without one)."""
    previous = session.scalar(select(TrainingRound).where(
        TrainingRound.treebank_id == treebank.id, TrainingRound.number < before)
        .order_by(TrainingRound.number.desc()).limit(1))
    if previous is None or len(previous.weights or []) != len(previous.parsers):
        return {}
    return {str(name): float(weight) for name, weight in zip(previous.parsers, previous.weights, strict=True)}


def automatic_training_trees(
    session: DbSession, treebank: Treebank, pool_ids: Sequence[int], names: Sequence[str],
    settings: Mapping[str, Any], *, n_human: int, round_number: int,
) -> dict[str, list[ParsingSentence]]:
    """Every member's automatic trees for this round, by member name (module docstring).

    Args:
        pool_ids: pool sentences nobody annotated (:func:`app.services.preannotate.pool_targets`);
            only those with a stored ensemble tree take part.
        names: the round's members; a member without a stored parse of a sentence (new in
            this round) gets the ensemble's tree with ``own``.
        n_human: human trees the round trains on (the default bound).
    """
    ensemble = latest_versions(session, list(pool_ids), "ensemble")
    usable = [sid for sid in pool_ids if sid in ensemble]
    if not usable:
        return {name: [] for name in names}
    sentences = load_sentences(session, usable)
    member_parses: dict[str, list[Parse]] = {}
    for name in names:
        stored = latest_versions(session, usable, name)
        member_parses[name] = [_parse_of(stored.get(sid) or ensemble[sid]) for sid in usable]
    ensemble_parses = [_parse_of(ensemble[sid]) for sid in usable]
    config = config_of(settings, random_state=round_number)
    weights = previous_weights(session, treebank, round_number)
    return select_automatic(config, sentences, member_parses, ensemble_parses, n_human,
                            weights={name: weights.get(name, 1.0) for name in names})
