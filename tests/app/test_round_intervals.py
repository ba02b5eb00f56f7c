"""Rounds with error bars: each stored score's 95% interval on the rounds page, and a plain note
saying whether the ensemble's change from the previous round lies within noise."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Treebank, User
from app.parser_models import TrainingRound
from app.services.demo import setup_demo
from app.services.round_scores import round_change, score_interval
from parsing.scorer.intervals import bootstrap_interval

SENTENCE_IDS = list(range(101, 131))
WORDS = [12] * 30


def scores_with(las_correct: list[int]) -> dict[str, Any]:
    """Stored scores of a round whose ensemble got ``las_correct`` of 12 words in each of 30 sentences."""
    low, high = bootstrap_interval(las_correct, WORDS)
    las = 100 * sum(las_correct) / sum(WORDS)
    ensemble = {"uas": las, "las": round(las, 2), "uas_ci": [100 * low, 100 * high],
                "las_ci": [round(100 * low, 2), round(100 * high, 2)],
                "per_sentence": {"words": WORDS, "uas": las_correct, "las": las_correct}}
    return {"members": {}, "ensemble": ensemble, "sentence_ids": SENTENCE_IDS}


def test_a_small_drop_is_within_noise_and_a_large_one_is_not() -> None:
    rng = np.random.default_rng(0)
    first = rng.integers(7, 12, size=30).tolist()
    nudged = [max(0, c - 1) if i % 10 == 0 else c for i, c in enumerate(first)]  # 3 words fewer in 360
    change = round_change(2, 1, scores_with(first), scores_with(nudged))
    assert change is not None and (change.number, change.previous) == (2, 1)
    small = change.points
    assert small.within_noise and small.sentences == 30
    assert small.delta < 0 and small.low < small.delta < small.high
    large = round_change(2, 1, scores_with(first), scores_with([max(0, c - 4) for c in first]))
    assert large is not None and not large.points.within_noise and large.points.high < 0


def test_rounds_without_counts_or_shared_sentences_are_not_compared() -> None:
    before = scores_with([10] * 30)
    assert round_change(2, 1, {"ensemble": {"las": 70.0}}, before) is None  # scored before counts were kept
    moved = {**before, "sentence_ids": [sid + 1000 for sid in SENTENCE_IDS]}
    assert round_change(2, 1, before, moved) is None  # no sentence in common
    assert score_interval(before, "ensemble", "las") == tuple(before["ensemble"]["las_ci"])
    assert score_interval({"ensemble": {"las": 70.0}}, "ensemble", "las") is None


def test_rounds_page_shows_intervals_and_says_when_a_change_is_noise(
    logged_in: FlaskClient, session: Session, recorded_with: Callable[[int, dict[str, Any]], TrainingRound]
) -> None:
    first = [10, 9, 11, 8, 10, 12] * 5
    recorded_with(1, scores_with(first))
    recorded_with(2, scores_with([c - 1 if i == 0 else c for i, c in enumerate(first)]))
    third = recorded_with(3, scores_with([max(0, c - 5) for c in first]))
    html = logged_in.get(f"/treebanks/{third.treebank_id}/rounds").get_data(as_text=True)
    interval = scores_with(first)["ensemble"]["las_ci"]
    assert f"{interval[0]:.1f}–{interval[1]:.1f}" in html
    notes = html.split('id="round-changes"')[1].split("</ul>")[0]
    assert notes.count("<li") == 2
    assert "Round 2 against round 1" in notes and "Within noise" in notes.split("Round 3")[0]
    assert "Round 3 against round 2" in notes and "Beyond noise" in notes.split("Round 3")[1]
    assert "real drop" in notes


@pytest.fixture
def recorded_with(session: Session) -> Callable[[int, dict[str, Any]], TrainingRound]:
    """Make finished, scored rounds of the demo treebank with the given stored scores."""
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=50)
    treebank = session.scalars(select(Treebank)).one()
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

    def make(number: int, scores: dict[str, Any]) -> TrainingRound:
        round_ = TrainingRound(
            treebank_id=treebank.id, number=number, parsers=["graph1"], tags="gold", ensemble="vote-uniform",
            model_dir="/nowhere", user_id=user.id, started_at=start + timedelta(hours=number),
            finished_at=start + timedelta(hours=number, seconds=60), gold_sentences=30, corrected_sentences=0,
            annotated_tokens=360, evaluation="held-out", held_out_ids=SENTENCE_IDS, dev_sentences=0,
            scores=scores, compared_sentences=0, changed_sentences=0, changed_ids=[])
        session.add(round_)
        session.commit()
        return round_
    return make
