"""Faults a new user hit (issue 12): history authors, "Keep mine", "save as reviewed", the admin
message of a second ``make run`` and the favicon."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.models import Sentence, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.trees import add_version
from tests.app.test_workspace import seed

Api = tuple[FlaskClient, dict[str, int]]


@pytest.fixture
def api(app: Flask, logged_in: FlaskClient) -> Api:
    with app.app_context():
        ids = seed(db.session, db.session.scalars(select(User)).one())
    return logged_in, ids


def test_history_names_the_parser_and_the_ensemble_with_their_round(app: Flask, api: Api) -> None:
    client, ids = api
    with app.app_context():
        user = db.session.scalars(select(User)).one()
        sentence = db.session.get(Sentence, ids["a"])
        assert sentence is not None
        treebank_id = sentence.document.treebank_id
        earlier = datetime.now(UTC) - timedelta(hours=1)
        seeded = db.session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == ids["a"])).all()
        for tree in seeded:  # the seeded trees predate the round
            tree.created_at = earlier - timedelta(hours=1)
        db.session.add(TrainingRound(treebank_id=treebank_id, number=3, parsers=["eager"], tags="gold",
                                     model_dir="x", user_id=user.id, created_at=earlier))
        add_version(db.session, sentence_id=ids["a"], source="eager", heads=[2, 0, 2],
                    deprels=["nsubj", "root", "advmod"], user=user)
        add_version(db.session, sentence_id=ids["a"], source="ensemble", heads=[2, 0, 2],
                    deprels=["nsubj", "root", "advmod"], user=user)
        db.session.commit()
    client.post(f"/api/sentences/{ids['a']}/annotations", json={
        "heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0})
    history = client.get(f"/api/sentences/{ids['a']}/history").get_json()["history"]
    authors = {(e["source"], e["version"]): e["author"] for e in history}
    assert authors[("eager", 1)] == "eager"  # stored before any round
    assert authors[("eager", 2)] == "eager (round 3)"
    assert authors[("ensemble", 2)] == "the ensemble (round 3)"
    assert authors[("annotation", 1)] == "ana"


def test_keep_mine_is_based_on_the_version_it_overwrites(api: Api) -> None:
    client, ids = api
    url = f"/api/sentences/{ids['a']}"
    ensemble_id = client.get(url).get_json()["current"]["id"]
    theirs = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0,
        "based_on_id": ensemble_id})
    assert theirs.status_code == 201
    # The editor that loaded the ensemble tree gets a 409, keeps its tree and saves on top of theirs.
    conflict = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 1], "deprels": ["nsubj", "root", "obj"], "expected_version": 0,
        "based_on_id": ensemble_id})
    assert conflict.status_code == 409
    mine = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 1], "deprels": ["nsubj", "root", "obj"], "expected_version": 1,
        "based_on_id": ensemble_id})
    assert mine.status_code == 201
    assert mine.get_json()["tree"]["based_on_id"] == theirs.get_json()["tree"]["id"]
    newest = client.get(f"{url}/history").get_json()["history"][0]
    assert newest["based_on"] == "annotation v1"
    assert newest["changes"] == [{"word": 3, "form": "fast", "from": [2, "obl"], "to": [1, "obj"]}]


def test_saving_as_reviewed_marks_every_word_reviewed(app: Flask, api: Api) -> None:
    client, ids = api
    saved = client.post(f"/api/sentences/{ids['c']}/annotations", json={
        "heads": [2, 0, 2, 2], "deprels": ["nsubj", "root", "advmod", "obl"], "expected_version": 0,
        "reviewed_words": [], "status": "reviewed"})
    assert saved.status_code == 201
    assert saved.get_json()["state"]["reviewed_words"] == [1, 2, 3, 4]
    state = client.post(f"/api/sentences/{ids['a']}/state", json={"status": "reviewed"}).get_json()
    assert state["state"] == {"status": "reviewed", "reviewed_words": [1, 2, 3], "disagreement": 0.2}
    partial = client.post(f"/api/sentences/{ids['b']}/annotations", json={
        "heads": [2, 0], "deprels": ["nsubj", "root"], "expected_version": 0, "reviewed_words": [1]})
    assert partial.get_json()["state"] == {"status": "in_progress", "reviewed_words": [1],
                                           "disagreement": 0.0}
    with app.app_context():
        assert db.session.scalar(select(TreeVersion.id).where(TreeVersion.sentence_id == ids["c"],
                                                              TreeVersion.kind == "annotation"))


def test_a_second_ensure_admin_says_how_to_get_in(
    runner: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARCVOTE_ADMIN_PASSWORD", raising=False)
    runner.invoke(args=["user", "ensure-admin"])
    second = runner.invoke(args=["user", "ensure-admin"]).output
    assert "already exists" in second and "ARCVOTE_ADMIN_PASSWORD" in second and "ensure-admin" in second
    assert "above" not in second


def test_a_short_admin_password_is_refused_with_a_message(
    runner: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCVOTE_ADMIN_PASSWORD", "abc")
    result = runner.invoke(args=["user", "ensure-admin"])
    assert result.exit_code != 0 and result.exception is not None and isinstance(result.exception, SystemExit)
    assert "ARCVOTE_ADMIN_PASSWORD" in result.output and "8 characters" in result.output


def test_favicon(client: FlaskClient, logged_in: FlaskClient) -> None:
    icon = client.get("/favicon.ico", follow_redirects=True)
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml" and b"<svg" in icon.data
    page = logged_in.get("/")
    assert b'rel="icon"' in page.data and b"favicon.svg" in page.data
