"""Which old rounds' model directories are deleted: the retention rule.

Every round writes a new model directory (tens of MB), so old ones are pruned. The rule, per
treebank, over its registered rounds (``training_rounds`` rows) whose directory is on disk:

- the ``keep`` newest rounds (by number) keep their models (``MODEL_RETENTION``, default
  :data:`DEFAULT_RETENTION`; ``0`` keeps every round's models);
- so does the newest round of each tag mode (gold, predicted): a warm round continues from
  it (:func:`app.services.preannotate.warm_start_round`), and re-parsing uses the newest;
- only directories inside ``MODELS_DIR`` are ever deleted (a restored round may point elsewhere);
  staging directories of a running round have no row and are never touched.

The rows stay, with their scores and checksums: a round whose directory is gone shows
"models pruned" (:func:`models_pruned`). Pruning runs after each round is registered
(:func:`app.jobs.run_job`) and from ``flask --app app models prune [--keep K]``.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from app.parser_models import TrainingRound
from app.services import DbSession
from parsing.pipeline import MANIFEST

DEFAULT_RETENTION = 3
"""Newest rounds per treebank whose models are kept unless ``MODEL_RETENTION`` says otherwise."""


@dataclass(frozen=True)
class Pruned:
    """A round whose model directory was deleted."""

    treebank_id: int
    number: int
    model_dir: str


def models_on_disk(round_: TrainingRound) -> bool:
    """Whether the round's model directory (its manifest) exists."""
    return (Path(round_.model_dir) / MANIFEST).is_file()


def models_pruned(round_: TrainingRound) -> bool:
    """A finished round whose models are gone (pruned, or removed by hand)."""
    return round_.finished_at is not None and not models_on_disk(round_)


def retention(value: object) -> int:
    """``MODEL_RETENTION`` as a number of rounds (``None``: the default).

    Raises:
        ValueError: not a whole number >= 0.
    """
    if value is None:
        return DEFAULT_RETENTION
    try:
        keep = int(str(value))
    except ValueError:
        raise ValueError(f"MODEL_RETENTION must be a whole number of rounds, not {value!r}") from None
    if keep < 0:
        raise ValueError(f"MODEL_RETENTION must be 0 (keep all) or more, not {keep}")
    return keep


def rounds_to_prune(rounds: Sequence[TrainingRound], keep: int) -> list[TrainingRound]:
    """The rounds of one treebank (any order) whose model directories the rule deletes,
    among those still on disk; none when ``keep`` is 0."""
    if keep == 0:
        return []
    present = sorted((r for r in rounds if models_on_disk(r)), key=lambda r: r.number, reverse=True)
    kept = {r.number for r in present[:keep]}
    for tags in {r.tags for r in present}:
        kept.add(next(r.number for r in present if r.tags == tags))
    return [r for r in present if r.number not in kept]


def prune_models(session: DbSession, models_dir: str | Path, keep: int,
                 treebank_id: int | None = None) -> list[Pruned]:
    """Delete the model directories :func:`rounds_to_prune` picks, for one treebank or all.

    The rows are not changed (nothing to commit). Returns what was deleted, oldest first.
    """
    root = Path(models_dir).resolve()
    query = select(TrainingRound)
    if treebank_id is not None:
        query = query.where(TrainingRound.treebank_id == treebank_id)
    by_treebank: dict[int, list[TrainingRound]] = {}
    for round_ in session.scalars(query):
        by_treebank.setdefault(round_.treebank_id, []).append(round_)
    pruned: list[Pruned] = []
    for rounds in by_treebank.values():
        for round_ in reversed(rounds_to_prune(rounds, keep)):
            directory = Path(round_.model_dir).resolve()
            if not directory.is_relative_to(root) or directory == root:
                continue
            shutil.rmtree(directory)
            pruned.append(Pruned(round_.treebank_id, round_.number, round_.model_dir))
    return pruned


def prune_after_round(session: DbSession, config: dict[str, object], treebank_id: int) -> list[Pruned]:
    """Apply the rule to ``treebank_id`` with the app's ``MODELS_DIR`` and ``MODEL_RETENTION``
    (called once a round is registered)."""
    keep = retention(config.get("MODEL_RETENTION"))
    return prune_models(session, str(config["MODELS_DIR"]), keep, treebank_id)
