"""Backup and restore of a whole treebank: the round trip (backup → empty database → restore →
backup gives the same file but for the backup/restore events), refusals, and the download."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from app.extensions import db
from app.models import Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.team_models import AuditEvent
from tests.app.double_helpers import DoubleTeam, build_double_team
from tests.app.helpers import empty_database
from tests.app.team_helpers import client_as

A_TREE = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"]}
B_TREE = {"heads": [2, 0, 1], "deprels": ["nsubj", "root", "nmod"]}


def _busy_treebank(app: Flask, password_hash: str) -> DoubleTeam:
    """The double team with assignments, branch and main-line versions, a revert, a note, states,
    an adjudication and a round record pointing at sentences."""
    with app.app_context():
        team = build_double_team(db.session, password_hash)
        training = db.session.scalars(select(TrainingRound)).one()
        training.held_out_ids, training.scores = [team.pool[2]], {"ensemble": {"uas": 80.0, "las": 70.0}}
        db.session.commit()
    tb, (first, second) = team.team.treebank_id, team.pool[:2]
    owner = client_as(app, team.user("owner"))
    owner.post(f"/treebanks/{tb}/assignments/settings", data={"annotators_per_sentence": "2"})
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator", "ann2"], "ids": f"{first}"})
    owner.post(f"/treebanks/{tb}/assignments/settings", data={"annotators_per_sentence": "1"})
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["ann3"], "ids": f"{second}"})
    for who, tree in (("annotator", A_TREE), ("ann2", B_TREE)):
        client = client_as(app, team.user(who))
        assert client.post(f"/api/sentences/{first}/annotations",
                           json={**tree, "expected_version": 0, "status": "reviewed"}).status_code == 201
    curator = client_as(app, team.user("curator"))
    assert curator.post(f"/workspace/sentences/{first}/adjudicate", data={
        "expected_version": "0", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "2:obj"}).status_code == 302
    ann3 = client_as(app, team.user("ann3"))
    gold = ann3.get(f"/api/sentences/{second}").get_json()["current"]["id"]
    body = {**B_TREE, "expected_version": 0, "based_on_id": gold, "human_words": [1, 2]}
    saved = ann3.post(f"/api/sentences/{second}/annotations", json=body)
    assert saved.status_code == 201
    assert ann3.post(f"/api/sentences/{second}/revert",
                     json={"version_id": gold, "expected_version": 1}).status_code == 201
    ann3.post(f"/api/sentences/{second}/notes", json={"body": "Is “birds” the object? ✓"})  # non-ASCII kept
    return team


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _without_own_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if not (r["type"] == "event" and r["action"] in ("backup", "restore-backup"))]


def test_backup_restore_round_trip(app: Flask, password_hash: str, runner: FlaskCliRunner,
                                   tmp_path: Path) -> None:
    _busy_treebank(app, password_hash)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = runner.invoke(args=["treebank", "backup", "team tb", "--output", str(first), "--user", "owner"])
    assert result.exit_code == 0, result.output
    records = _records(first)
    kinds = {r["type"] for r in records}
    assert kinds == {"backup", "membership", "document", "sentence", "tree", "state", "note", "assignment",
                     "round", "event"}
    branches = sorted(r["name"] for r in records if r["type"] == "tree" and r["kind"] == "annotation")
    assert branches == ["", "", "", "ann2", "annotator"]  # adjudicated, ann3's save and revert, 2 branches
    assert any(r["type"] == "event" and r["action"] == "adjudicate" for r in records)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(TreeVersion)) == sum(
            r["type"] == "tree" for r in records)

    empty_database(app)
    restored = runner.invoke(args=["treebank", "restore", str(first)])
    assert restored.exit_code == 0, restored.output
    again = runner.invoke(args=["treebank", "backup", "team tb", "--output", str(second)])
    assert again.exit_code == 0, again.output
    assert _without_own_events(_records(second)) == _without_own_events(records)
    with app.app_context():
        ann2 = db.session.scalars(select(User).where(User.username == "ann2")).one()
        assert not ann2.active  # accounts the instance did not have come back deactivated
        treebank = db.session.scalars(select(Treebank)).one()
        assert (treebank.name, treebank.annotators_per_sentence) == ("team tb", 1)
        restored_round = db.session.scalars(select(TrainingRound)).one()
        held_out = restored_round.held_out_ids or []
        assert len(held_out) == 1 and db.session.scalar(
            select(func.count()).select_from(TreeVersion).where(TreeVersion.sentence_id == held_out[0])) == 1


def test_restore_refusals_write_nothing(app: Flask, password_hash: str, runner: FlaskCliRunner,
                                        tmp_path: Path) -> None:
    _busy_treebank(app, password_hash)
    good = tmp_path / "good.jsonl"
    assert runner.invoke(args=["treebank", "backup", "team tb", "-o", str(good)]).exit_code == 0
    exists = runner.invoke(args=["treebank", "restore", str(good)])
    assert exists.exit_code != 0 and "a treebank called 'team tb' exists" in exists.output
    lines = good.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]), encoding="utf-8")
    bad = runner.invoke(args=["treebank", "restore", str(broken), "--name", "copy"])
    assert bad.exit_code != 0 and "line 4: not JSON" in bad.output
    no_header = tmp_path / "no-header.jsonl"
    no_header.write_text("\n".join(lines[1:]), encoding="utf-8")
    assert "line 1" in runner.invoke(args=["treebank", "restore", str(no_header), "--name", "copy"]).output
    dangling = tmp_path / "dangling.jsonl"
    dangling.write_text("\n".join(line.replace('"sentence": 1,', '"sentence": 999,') for line in lines),
                        encoding="utf-8")
    assert "lacks a field or has a bad value" in runner.invoke(
        args=["treebank", "restore", str(dangling), "--name", "copy"]).output
    owner = runner.invoke(args=["treebank", "restore", str(good), "--name", "copy", "--user", "owner"])
    assert owner.exit_code != 0 and "only a site administrator" in owner.output
    with app.app_context():
        assert db.session.scalars(select(Treebank.name)).all() == ["team tb"]
    copy = runner.invoke(args=["treebank", "restore", str(good), "--name", "copy"])
    assert copy.exit_code == 0, copy.output
    with app.app_context():
        assert sorted(db.session.scalars(select(Treebank.name))) == ["copy", "team tb"]
        event = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "restore-backup")).one()
        assert event.details["treebank"] == "copy" and event.details["created_users"] == []
    # beside the original every row has new ids, and the copy's backup is the same but for its name
    copied = tmp_path / "copy.jsonl"
    assert runner.invoke(args=["treebank", "backup", "copy", "-o", str(copied)]).exit_code == 0
    records = _without_own_events(_records(copied))
    records[0]["treebank"]["name"] = "team tb"
    assert records == _without_own_events(_records(good))


def test_owner_downloads_a_backup(app: Flask, password_hash: str) -> None:
    team = _busy_treebank(app, password_hash)
    tb = team.team.treebank_id
    reply = client_as(app, team.user("owner")).get(f"/treebanks/{tb}/backup")
    assert reply.status_code == 200
    assert 'filename="team_tb.arcvote-backup.jsonl"' in reply.headers["Content-Disposition"]
    header = json.loads(reply.get_data(as_text=True).splitlines()[0])
    assert header["type"] == "backup" and header["treebank"]["name"] == "team tb"
    assert client_as(app, team.user("curator")).get(f"/treebanks/{tb}/backup").status_code == 403
    page = client_as(app, team.user("owner")).get(f"/treebanks/{tb}/sentences").get_data(as_text=True)
    assert "Download backup" in page
    curator_page = client_as(app, team.user("curator")).get(f"/treebanks/{tb}/sentences")
    assert "Download backup" not in curator_page.get_data(as_text=True)
