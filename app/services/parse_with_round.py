"""Parse without training: pool text imported since the last round, parsed with an earlier
round's models as that round would have parsed it (the ``preannotate`` job with ``with_round``,
:func:`app.jobs.tasks.preannotate`; the queue page offers it through :func:`quick_parse`).

A round's members, ensemble, vote weights and detector are loaded from its model directory
(:func:`trained_from_disk`) and parse with :func:`app.services.preannotate.parse_batch`; no round
is registered, so the trees count as that round's (:mod:`app.services.sources` dates them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from app.models import Treebank
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.detector import round_detector
from app.services.preannotate import TrainedRound, pool_targets, vote_weights
from app.services.tag_checks import require_tags
from parsing.pipeline import load_models


def unparsed_pool_targets(session: DbSession, treebank: Treebank) -> list[int]:
    """Pool sentences nobody has annotated and no round has pre-annotated yet (text imported since
    the last round), in document order: what a parse-only job parses by default."""
    return pool_targets(session, treebank, unparsed=True)


def newest_round_with_models(session: DbSession, treebank: Treebank) -> TrainingRound | None:
    """The newest round of ``treebank`` whose models are on disk (what a parse-only job parses
    with), or None."""
    rounds = session.scalars(select(TrainingRound).where(TrainingRound.treebank_id == treebank.id)
                             .order_by(TrainingRound.number.desc()))
    return next((r for r in rounds if (Path(r.model_dir) / "manifest.json").is_file()), None)


def reusable_round(session: DbSession, treebank: Treebank, number: int) -> TrainingRound:
    """Round ``number`` of ``treebank``, checked for a parse-only job: its models are on disk and it
    combined no external parser (their votes are not kept with the models).

    Raises:
        ValueError: no such round, no models on disk, or external voters, in words a user reads.
    """
    round_ = session.scalar(select(TrainingRound).where(TrainingRound.treebank_id == treebank.id,
                                                        TrainingRound.number == number))
    if round_ is None:
        raise ValueError(f"this treebank has no round {number}")
    if not (Path(round_.model_dir) / "manifest.json").is_file():
        raise ValueError(f"round {number}'s models are no longer on disk: train a new round")
    if round_.external_voters:
        raise ValueError(f"round {number} combined external parsers' votes, which are not kept with its "
                         "models: train a new round to parse with them")
    return round_


@dataclass(frozen=True)
class QuickParse:
    """What the queue page offers for text no round has parsed: ``sentences`` such pool sentences,
    round ``round``'s models to parse them with, and ``problem``: why that cannot be done (None: it can)."""

    round: int
    sentences: int
    problem: str | None = None


def quick_parse(session: DbSession, treebank: Treebank) -> QuickParse | None:
    """A parse-only job to offer (:class:`QuickParse`), or None: every pool sentence is parsed or
    annotated, or no round has models on disk."""
    targets = unparsed_pool_targets(session, treebank)
    round_ = newest_round_with_models(session, treebank) if targets else None
    if round_ is None:
        return None
    try:
        reusable_round(session, treebank, round_.number)
        require_tags(session, targets, round_.tags)
    except ValueError as error:
        return QuickParse(round_.number, len(targets), str(error))
    return QuickParse(round_.number, len(targets))


def trained_from_disk(round_: TrainingRound) -> TrainedRound:
    """A registered round's members, ensemble, vote weights and detector, loaded from its directory
    (the caller checks its files first: :func:`app.jobs.model_files.check_unchanged`)."""
    bundle = load_models(round_.model_dir)
    weights = list(round_.weights or []) or vote_weights(bundle, round_.dev_uas)
    return TrainedRound(bundle, [float(w) for w in weights], detector=round_detector(round_.model_dir))
