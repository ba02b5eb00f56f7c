"""The audit log: what is recorded, who sees it, and that it cannot be changed."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.team_models import AuditEvent
from tests.app.team_helpers import build_team, client_as


def _actions(app: Flask) -> list[str]:
    with app.app_context():
        return list(db.session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)))


def test_team_work_is_logged_and_shown_to_curators(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    assert _actions(app) == ["import", "import", "role-add", "role-add", "role-add"]
    annotator = client_as(app, team.users["annotator"])
    annotator.post(f"/api/sentences/{team.sentence_id}/state", json={"status": "in_progress"})
    annotator.post(f"/api/sentences/{team.sentence_id}/state", json={"status": "reviewed"})
    annotator.post(f"/api/sentences/{team.sentence_id}/state", json={"status": "reviewed"})  # no change
    viewer = client_as(app, team.users["viewer"])
    assert viewer.get(f"/treebanks/{team.treebank_id}/export?source=gold").status_code == 200
    history = viewer.get(f"/api/sentences/{team.sentence_id}/history").get_json()["status_history"]
    assert [(h["from"], h["to"], h["user"]) for h in history] == [
        ("todo", "in_progress", "annotator"), ("in_progress", "reviewed", "annotator")]
    assert _actions(app)[-3:] == ["status", "status", "export"]
    assert viewer.get(f"/treebanks/{team.treebank_id}/events").status_code == 403
    page = client_as(app, team.users["curator"]).get(f"/treebanks/{team.treebank_id}/events")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "role-add" in html and "export" in html
    assert "status: in progress → reviewed" in html
    one = client_as(app, team.users["owner"]).get(
        f"/treebanks/{team.treebank_id}/events?sentence={team.sentence_id}").get_data(as_text=True)
    assert "status" in one and "role-add" not in one


def test_sign_ins_and_user_pages(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    client = app.test_client()
    client.post("/auth/login", data={"username": "viewer", "password": "wrong"})
    assert _actions(app)[-1] == "sign-in-failed"
    admin = client_as(app, team.users["admin"])
    page = admin.get(f"/admin/users/{team.users['viewer']}/events").get_data(as_text=True)
    assert "role-add" in page  # done to the viewer's account
    assert client_as(app, team.users["owner"]).get(
        f"/admin/users/{team.users['viewer']}/events").status_code == 403


def test_events_cannot_be_changed_or_deleted(app: Flask, password_hash: str) -> None:
    with app.app_context():
        build_team(db.session, password_hash)
        event = db.session.scalars(select(AuditEvent)).first()
        assert event is not None
        event.action = "export"
        with pytest.raises(PermissionError):
            db.session.flush()
        db.session.rollback()
        db.session.delete(db.session.scalars(select(AuditEvent)).first())
        with pytest.raises(PermissionError):
            db.session.flush()
        db.session.rollback()
