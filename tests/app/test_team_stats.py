"""The lead's statistics (issue #30): the pure computation over saves with real timestamps, and
the page over a double-annotated, adjudicated sentence saved through the API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from app.extensions import db
from app.models import Treebank, TreeVersion
from app.services.team_stats import AgreementRow, SaveRow, annotator_stats, treebank_stats
from tests.app.double_helpers import DoubleTeam, build_double_team
from tests.app.team_helpers import client_as

T0 = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
GOLD: dict[str, Any] = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obj"]}
A_TREE: dict[str, Any] = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"]}
B_TREE: dict[str, Any] = {"heads": [2, 0, 1], "deprels": ["nsubj", "root", "nmod"]}


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_active_time_skips_breaks_and_credits_the_later_save() -> None:
    saves = [SaveRow("aminata", 1, 10, _at(0), 2), SaveRow("aminata", 2, 20, _at(2), 5),
             SaveRow("aminata", 3, 30, _at(5), 0), SaveRow("aminata", 4, 40, _at(45), 1),  # 40 min: a break
             SaveRow("aminata", 4, 40, _at(48), 3),  # the same sentence again: its newest version counts
             SaveRow("moussa", 1, 10, _at(1), None)]
    agreement = [AgreementRow("aminata", 1, 10, heads=9, arcs=8),
                 AgreementRow("aminata", 2, 20, heads=20, arcs=17)]
    aminata, moussa = annotator_stats(saves, agreement)
    assert (aminata.user, aminata.sentences, aminata.words, aminata.saves) == ("aminata", 4, 100, 5)
    assert aminata.active_seconds == 120 + 180 + 180  # 2 and 3 minutes, then 3 after the break
    assert aminata.sentences_per_hour == pytest.approx(4 / (480 / 3600))
    assert aminata.words_per_hour == pytest.approx(100 / (480 / 3600))
    assert aminata.median_seconds == 180
    assert aminata.edits_per_sentence == pytest.approx((2 + 5 + 0 + 3) / 4)
    assert aminata.adjudicated == 2
    assert aminata.las == pytest.approx(25 / 30) and aminata.uas == pytest.approx(29 / 30)
    assert (moussa.sentences, moussa.active_seconds, moussa.sentences_per_hour, moussa.median_seconds,
            moussa.edits_per_sentence, moussa.las) == (1, 0, None, None, None, None)


@pytest.fixture
def adjudicated(app: Flask, password_hash: str) -> DoubleTeam:
    """annotator and ann2 doubly annotate two pool sentences; the first is adjudicated to GOLD."""
    with app.app_context():
        team = build_double_team(db.session, password_hash)
    owner = client_as(app, team.user("owner"))
    tb = team.team.treebank_id
    owner.post(f"/treebanks/{tb}/assignments/settings", data={"annotators_per_sentence": "2"})
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator", "ann2"],
                                                     "ids": f"{team.pool[0]} {team.pool[1]}"})
    for who, tree in (("annotator", A_TREE), ("ann2", B_TREE)):
        for sid in team.pool[:2]:
            body = {**tree, "expected_version": 0, "status": "reviewed"}
            reply = client_as(app, team.user(who)).post(f"/api/sentences/{sid}/annotations", json=body)
            assert reply.status_code == 201
    form = {"expected_version": "0", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "other",
            "head-3": "2", "deprel-3": "obj"}
    curator = client_as(app, team.user("curator"))
    assert curator.post(f"/workspace/sentences/{team.pool[0]}/adjudicate", data=form).status_code == 302
    with app.app_context():  # annotator saved 4 minutes apart; ann2 an hour apart (a break)
        for who, minutes in (("annotator", (0, 4)), ("ann2", (0, 60))):
            for sid, minute in zip(team.pool[:2], minutes, strict=True):
                db.session.execute(update(TreeVersion).where(
                    TreeVersion.sentence_id == sid, TreeVersion.name == who).values(created_at=_at(minute)))
        db.session.commit()
    return team


def test_treebank_stats_from_the_history(app: Flask, adjudicated: DoubleTeam) -> None:
    with app.app_context():
        treebank = db.session.get(Treebank, adjudicated.team.treebank_id)
        assert treebank is not None
        rows = {row.user: row for row in treebank_stats(db.session, treebank)}
        assert db.session.scalars(select(TreeVersion.user_id).where(TreeVersion.name == "")).all()
    assert set(rows) == {"annotator", "ann2", "curator"}
    mine, theirs = rows["annotator"], rows["ann2"]
    assert (mine.sentences, mine.words, mine.saves) == (2, 6, 2)
    assert mine.active_seconds == 240 and mine.sentences_per_hour == pytest.approx(2 / (240 / 3600))
    assert mine.edits_per_sentence == 1  # obj → obl on word 3 of the gold pre-annotation
    assert theirs.edits_per_sentence == 1 and theirs.active_seconds == 0 and theirs.sentences_per_hour is None
    # against the adjudicated tree (GOLD) of the first sentence only
    assert mine.adjudicated == 1 and mine.uas == 1.0 and mine.las == pytest.approx(2 / 3)
    assert theirs.adjudicated == 1
    assert theirs.uas == pytest.approx(2 / 3) and theirs.las == pytest.approx(2 / 3)
    assert rows["curator"].sentences == 1 and rows["curator"].adjudicated == 0


def test_statistics_page_for_leads_only(app: Flask, adjudicated: DoubleTeam) -> None:
    url = f"/treebanks/{adjudicated.team.treebank_id}/statistics"
    html = client_as(app, adjudicated.user("curator")).get(url).get_data(as_text=True)
    assert '<tr data-user="annotator">' in html and '<tr data-user="ann2">' in html
    assert 'data-col="las">66.7<' in html and 'data-col="uas">100.0<' in html
    assert "at most 10 minutes" in html
    assert client_as(app, adjudicated.user("annotator")).get(url).status_code == 403
    assert client_as(app, adjudicated.user("stranger")).get(url).status_code == 404


def test_edits_count_from_the_tree_each_person_started_from(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_double_team(db.session, password_hash)
    sid = team.pool[2]
    url = f"/api/sentences/{sid}/annotations"
    annotator, curator = client_as(app, team.user("annotator")), client_as(app, team.user("curator"))
    first = annotator.post(url, json={**A_TREE, "expected_version": 0}).get_json()["tree"]
    two_off = {"heads": [2, 0, 2], "deprels": ["obj", "root", "obl"]}  # 2 arcs off the gold pre-annotation
    second = annotator.post(url, json={**two_off, "expected_version": 1, "based_on_id": first["id"]})
    assert second.status_code == 201
    based_on = second.get_json()["tree"]["id"]
    third = curator.post(url, json={**GOLD, "expected_version": 2, "based_on_id": based_on})
    assert third.status_code == 201
    with app.app_context():
        treebank = db.session.get(Treebank, team.team.treebank_id)
        assert treebank is not None
        rows = {row.user: row for row in treebank_stats(db.session, treebank)}
    assert rows["annotator"].edits_per_sentence == 2  # their newest version against gold, not against v1
    assert rows["curator"].edits_per_sentence == 2  # against the annotator's version they corrected
    assert (rows["annotator"].saves, rows["annotator"].sentences) == (2, 1)
