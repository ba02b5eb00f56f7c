"""The role matrix: every route of ``app.url_map`` × every kind of user × private, public and
archived treebanks, through the UI forms (form posts) and the JSON API.

The expected outcome comes from :data:`ALLOWED`, written here independently of
:mod:`app.services.permissions`. A route whose view has no access rule (``view.access``, set by
the decorators of :mod:`app.views.access`), or a rule this table does not know, fails
:func:`test_every_route_has_a_rule`, so a new route cannot slip in unchecked.

Allowed requests send bodies that fail validation where the action would destroy the fixture
(empty confirmation, unknown parser), so "allowed" means: neither 401, 403 nor 404, and no 500.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import update

from app.extensions import db
from app.models import Treebank
from app.services.permissions import ACTIONS
from tests.app.team_helpers import NAMES, Team, build_team, client_as, route_url, routes

ALLOWED = {
    "read": {"viewer", "annotator", "curator", "owner"},
    "annotate": {"annotator", "curator", "owner"},
    "curate": {"curator", "owner"},
    "import": {"owner"},
    "train": {"owner"},
    "manage": {"owner"},
    "remove": {"owner"},
}
"""Which treebank roles may do each action (site admins may do everything)."""

RULES = {"public", "signed-in", "admin", *ALLOWED}
JSON_BODIES: dict[str, dict[str, Any]] = {
    "workspace_api.preannotate": {"parsers": "no-such-parser"},
    "workspace_api.sentence_revert": {"version_id": "TREE", "expected_version": 0},
}
"""Bodies of JSON posts (default ``{}``, which each endpoint refuses or treats as no change)."""

WHO = (None, *NAMES)
"""Signed out, then each user of :func:`build_team`."""


def test_every_route_has_a_rule(app: Flask) -> None:
    missing = {endpoint: getattr(app.view_functions[endpoint], "access", None)
               for endpoint, _method, _rule in routes(app)}
    assert not {e: r for e, r in missing.items() if r not in RULES}, "routes without a known access rule"
    assert set(ALLOWED) == set(ACTIONS), "the permission module and this table name other actions"


def expected(rule: str, who: str | None, scenario: str) -> str:
    """``open`` (a public page: no sign-in asked, 404 for a bad link is fine), ``ok``, ``login``
    (signed out), ``forbidden`` (403) or ``hidden`` (404)."""
    if rule == "public":
        return "open"
    if who is None:
        return "login"
    if rule == "signed-in":
        return "ok"
    if rule == "admin":
        return "ok" if who == "admin" else "forbidden"
    role = {"admin": "owner", "stranger": None}.get(who, who)
    if scenario == "public" and role is None:
        role = "viewer"
    if scenario == "archived":
        if role != "owner":
            return "hidden"
        return "ok" if rule in ("read", "remove") else "forbidden"
    if role is None:
        return "hidden"
    return "ok" if role in ALLOWED[rule] else "forbidden"


def _request(app: Flask, who: str | None, team: Team, endpoint: str, method: str, url: str) -> Any:
    client = client_as(app, team.users[who] if who else None)
    if method == "GET":
        return client.get(url)
    if url.startswith("/api/"):
        body = {key: team.tree_id if value == "TREE" else value
                for key, value in JSON_BODIES.get(endpoint, {}).items()}
        return client.post(url, json=body)
    return client.post(url, data={})


@pytest.mark.parametrize("scenario", ["private", "public", "archived"])
def test_role_matrix(app: Flask, password_hash: str, scenario: str) -> None:
    with app.app_context():
        visibility = "public" if scenario == "public" else "private"
        team = build_team(db.session, password_hash, visibility=visibility)
        archived = update(Treebank).where(Treebank.id == team.treebank_id).values(archived_at=db.func.now())
        if scenario == "archived":
            db.session.execute(archived)
            db.session.commit()
    wrong = []
    checked = 0
    for endpoint, method, rule in routes(app):
        access = getattr(app.view_functions[endpoint], "access")  # noqa: B009  (set by app.views.access)
        url = route_url(app, endpoint, rule, team)
        for who in WHO:
            want = expected(access, who, scenario)
            response = _request(app, who, team, endpoint, method, url)
            got = response.status_code
            checked += 1
            ok = {
                "open": (got < 500 or got == 503) and got not in (401, 403),  # 503: /healthz, no worker
                "ok": got < 500 and got not in (401, 403, 404),
                "forbidden": got == 403,
                "hidden": got == 404,
                "login": got == 401 if url.startswith(("/api/", "/jobs/")) else (
                    got == 302 and "/auth/login" in response.headers["Location"]),
            }[want]
            if not ok:
                wrong.append(f"{method} {url} ({endpoint}, {access}) as {who}: want {want}, got {got}")
            if scenario == "archived":  # an allowed restore must not change the scenario
                with app.app_context():
                    db.session.execute(archived)
                    db.session.commit()
    assert not wrong, "\n".join(wrong)
    assert checked > 300


def test_viewer_cannot_write_through_ui_or_api(app: Flask, password_hash: str) -> None:
    """The viewer reads the editor, which offers no save, and every write is refused with 403."""
    with app.app_context():
        team = build_team(db.session, password_hash)
    viewer = client_as(app, team.users["viewer"])
    page = viewer.get(f"/workspace/sentences/{team.sentence_id}").get_data(as_text=True)
    assert "Read only: your role on team tb is viewer" in page
    assert 'id="save" disabled' in page
    save = viewer.post(f"/api/sentences/{team.sentence_id}/annotations",
                       json={"heads": [2, 0], "deprels": ["nsubj", "root"], "expected_version": 0})
    assert save.status_code == 403
    assert "you may not annotate sentences of treebank 'team tb'" in save.get_json()["error"]
    upload = viewer.post("/treebanks/import", data={"name": "team tb", "split": "train",
                                                    "file_format": "conllu", "text": "Some text."})
    assert upload.status_code == 403
    queue = viewer.get(f"/workspace/treebanks/{team.treebank_id}").get_data(as_text=True)
    assert "preannotate-form" not in queue and "Only an owner starts training rounds" in queue


def test_stranger_sees_neither_the_treebank_nor_its_jobs(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    stranger = client_as(app, team.users["stranger"])
    assert "team tb" not in stranger.get("/treebanks/").get_data(as_text=True)
    assert stranger.get(f"/jobs/{team.job_id}").status_code == 404
    assert stranger.get(f"/api/sentences/{team.sentence_id}").status_code == 404
    viewer = client_as(app, team.users["viewer"])
    assert "team tb" in viewer.get("/treebanks/").get_data(as_text=True)
    assert viewer.get(f"/jobs/{team.job_id}").get_json()["id"] == team.job_id
