"""Training rounds as a record: what each round trained on, how it scored, what it changed.

* While a round parses, :func:`ensemble_trees` before and after each batch feed
  :func:`changed_between`; :func:`finish_round` stores the count, the first
  :data:`CHANGED_IDS_CAP` ids and the finishing time.
* :func:`round_rows` reads every round of a treebank for the rounds page and
  :func:`rounds_csv` writes the same table as CSV; :func:`learning_curves` gives the LAS of
  every member and the ensemble against annotated tokens and against rounds.
* :func:`changed_sentences` lists the sentences a round changed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from app.models import Document, Sentence, Treebank, User
from app.parser_models import TrainingRound
from app.services import DbSession, as_utc
from app.services.raw_text_rounds import RawTextEffect, raw_text_effects
from app.services.retention import models_pruned
from app.services.round_scores import RoundChange, round_change, score_interval
from app.services.trees import latest_versions
from parsing.members import MEMBERS
from parsing.plan import TrainingPlan

CHANGED_IDS_CAP = 200
"""How many ids of changed sentences a round keeps (the count is always exact)."""

ENSEMBLE = "ensemble"
"""The ensemble's name in :func:`learning_curves` and the CSV columns."""

Tree = tuple[list[Any], list[Any]]
Curve = dict[str, list[tuple[float, float]]]


def ensemble_trees(session: DbSession, sentence_ids: Sequence[int]) -> dict[int, Tree]:
    """The newest ensemble tree ``(heads, deprels)`` of each sentence that has one."""
    return {sid: (list(tree.heads), list(tree.deprels))
            for sid, tree in latest_versions(session, list(sentence_ids), "ensemble").items()}


def changed_between(before: Mapping[int, Tree], after: Mapping[int, Tree]) -> tuple[int, list[int]]:
    """``(compared, changed ids)``: sentences with a tree in both, and those whose heads or labels
    differ (ascending ids: the database returns ``before`` in no particular order)."""
    compared = sorted(sid for sid in before if sid in after)
    return len(compared), [sid for sid in compared if before[sid] != after[sid]]


def finish_round(
    round_: TrainingRound, *, compared: int, changed: Sequence[int], finished_at: datetime | None = None
) -> None:
    """Record what the round changed and when it finished."""
    round_.compared_sentences, round_.changed_sentences = compared, len(changed)
    round_.changed_ids = [int(sid) for sid in changed[:CHANGED_IDS_CAP]]
    round_.finished_at = finished_at or datetime.now(UTC)


@dataclass(frozen=True)
class RoundRow:
    """One round as the rounds page and the CSV show it (scores in percent, None if not scored)."""

    round: TrainingRound
    started_by: str

    @property
    def number(self) -> int:
        return self.round.number

    @property
    def started_at(self) -> datetime | None:
        return self.round.started_at or self.round.created_at

    @property
    def duration_s(self) -> float | None:
        """Seconds from start to finish (None while running, or when the round failed)."""
        start, end = self.round.started_at, self.round.finished_at
        if start is None or end is None:
            return None
        return max(0.0, (as_utc(end) - as_utc(start)).total_seconds())

    @property
    def members(self) -> list[str]:
        return [str(name) for name in self.round.parsers]

    @property
    def plan(self) -> TrainingPlan | None:
        """What the round trained (None: a round from before plans were recorded, or one whose
        plan this version cannot read, e.g. a member since removed)."""
        if not self.round.plan:
            return None
        try:
            return TrainingPlan.from_json(self.round.plan)
        except ValueError:
            return None

    @property
    def raw_text_effects(self) -> list[RawTextEffect]:
        """Each member that learned from the round's raw text beside its base member."""
        return raw_text_effects(self.round.raw_text, self.round.scores)

    @property
    def models_pruned(self) -> bool:
        """The round's model files are gone (:mod:`app.services.retention`); its record stays."""
        return models_pruned(self.round)

    def interval(self, name: str, metric: str) -> tuple[float, float] | None:
        """The 95% bootstrap interval (percent) of ``metric`` of member ``name`` or :data:`ENSEMBLE`."""
        return score_interval(self.round.scores, name, metric)

    def score(self, name: str, metric: str) -> float | None:
        """``metric`` (``uas``/``las``) of member ``name`` or of :data:`ENSEMBLE`."""
        scores = self.round.scores or {}
        entry = scores.get(ENSEMBLE) if name == ENSEMBLE else (scores.get("members") or {}).get(name)
        value = (entry or {}).get(metric)
        return None if value is None else float(value)

    @property
    def evaluation_size(self) -> int:
        """Sentences the round was scored on."""
        if self.round.evaluation == "held-out":
            return len(self.round.held_out_ids or [])
        return self.round.dev_sentences if self.round.evaluation == "dev" else 0


def round_rows(session: DbSession, treebank: Treebank) -> list[RoundRow]:
    """Every round of ``treebank``, first round first, with who started it."""
    found = session.execute(
        select(TrainingRound, User.username).join(User, User.id == TrainingRound.user_id)
        .where(TrainingRound.treebank_id == treebank.id).order_by(TrainingRound.number))
    return [RoundRow(round_, username) for round_, username in found]


def round_changes(rows: Sequence[RoundRow], name: str = ENSEMBLE) -> list[RoundChange]:
    """The LAS change of ``name`` from each scored round to the next scored one, paired on the
    sentences both were scored on (rounds without per-sentence counts are skipped)."""
    scored = [row for row in rows if row.round.scores]
    changes = (round_change(after.number, before.number, before.round.scores, after.round.scores, name)
               for before, after in zip(scored, scored[1:], strict=False))
    return [change for change in changes if change is not None]


def scored_members(rows: Sequence[RoundRow]) -> list[str]:
    """Members any round scored, in the registry's order (unknown names last)."""
    names = {name for row in rows for name in ((row.round.scores or {}).get("members") or {})}
    order = {name: i for i, name in enumerate(MEMBERS)}
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def learning_curves(rows: Sequence[RoundRow]) -> tuple[Curve, Curve]:
    """LAS of every member and the ensemble ``(by annotated tokens, by round number)``: one
    series per name (the ensemble first), one point per scored round."""
    by_tokens: Curve = {}
    by_round: Curve = {}
    for name in [ENSEMBLE, *scored_members(rows)]:
        points = [(row, las) for row in rows if (las := row.score(name, "las")) is not None]
        if points:
            by_tokens[name] = sorted((float(row.round.annotated_tokens), las) for row, las in points)
            by_round[name] = [(float(row.number), las) for row, las in points]
    return by_tokens, by_round


CSV_COLUMNS = (
    "round", "started_at", "finished_at", "duration_s", "started_by", "members", "ensemble_method",
    "tags", "gold_trees", "corrected_trees", "automatic_trees", "annotated_tokens", "self_training",
    "warm_from_round", "warm_members", "evaluation", "evaluation_sentences", "held_out_ids",
    "ensemble_uas", "ensemble_las",
)
"""The fixed columns of :func:`rounds_csv`; ``<member>_uas``, ``<member>_las`` per member follow,
then ``changed_sentences`` and ``compared_sentences``."""


def csv_header(rows: Sequence[RoundRow]) -> list[str]:
    """Every column of :func:`rounds_csv` for these rounds."""
    members = [f"{name}_{metric}" for name in scored_members(rows) for metric in ("uas", "las")]
    return [*CSV_COLUMNS, *members, "changed_sentences", "compared_sentences",
            "raw_text_sentences", "raw_text_words", "raw_text_members"]


def _warm_cells(warm: dict[str, Any] | None) -> tuple[object, str]:
    """``warm_from_round`` and ``warm_members`` of a round (empty for a cold round)."""
    return ("", "") if warm is None else (warm["from_round"], " ".join(warm["members"]))


def _raw_text_cells(raw_text: dict[str, Any] | None) -> tuple[object, object, str]:
    """``raw_text_sentences``, ``raw_text_words`` and ``raw_text_members`` (empty without raw text)."""
    if raw_text is None:
        return "", "", ""
    return raw_text["sentences"], raw_text["words"], " ".join(raw_text["members"])


def rounds_csv(rows: Sequence[RoundRow]) -> str:
    """The rounds table as CSV (one row per round; empty cells where there is no value)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_header(rows))
    for row in rows:
        round_ = row.round
        writer.writerow([
            row.number, _iso(row.started_at), _iso(round_.finished_at), _blank(row.duration_s, 1),
            row.started_by, " ".join(row.members), round_.ensemble or "", round_.tags,
            round_.gold_sentences, round_.corrected_sentences, round_.automatic_sentences,
            round_.annotated_tokens,
            "" if round_.self_training is None else json.dumps(round_.self_training, sort_keys=True),
            *_warm_cells(round_.warm),
            round_.evaluation or "", row.evaluation_size,
            " ".join(str(sid) for sid in round_.held_out_ids or []),
            _blank(row.score(ENSEMBLE, "uas")), _blank(row.score(ENSEMBLE, "las")),
            *(_blank(row.score(name, metric)) for name in scored_members(rows) for metric in ("uas", "las")),
            _blank(round_.changed_sentences), _blank(round_.compared_sentences),
            *_raw_text_cells(round_.raw_text),
        ])
    return out.getvalue()


def _iso(moment: datetime | None) -> str:
    return "" if moment is None else as_utc(moment).isoformat(timespec="seconds")


def _blank(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def changed_sentences(session: DbSession, round_: TrainingRound) -> list[Sentence]:
    """The sentences the round changed (the first :data:`CHANGED_IDS_CAP`), in the stored order;
    sentences deleted since are left out."""
    ids = [int(sid) for sid in round_.changed_ids or []]
    if not ids:
        return []
    found = {sentence.id: sentence for sentence in session.scalars(
        select(Sentence).join(Document).where(Document.treebank_id == round_.treebank_id,
                                              Sentence.id.in_(ids)))}
    return [found[sid] for sid in ids if sid in found]
