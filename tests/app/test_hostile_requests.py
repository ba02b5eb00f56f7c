"""Requests built to break the app get a 400 naming why, never a 500 (issue #31, findings 7, 8
and 12): deep JSON, NUL characters, an oversized API body; and what the app tells strangers."""

from __future__ import annotations

import io
import re

import pytest
from flask import Flask, g
from sqlalchemy.orm import Session

from app.job_models import JobWorker
from app.views.api_input import MAX_DEPTH
from tests.app.team_helpers import Team, build_team, client_as, route_url, routes

DEEP = "[" * 1000 + "]" * 1000


@pytest.fixture
def team(session: Session, password_hash: str) -> Team:
    return build_team(session, password_hash)


def _json_posts(app: Flask, team: Team) -> list[str]:
    return sorted(route_url(app, endpoint, rule, team, user_id=team.users["viewer"])
                  for endpoint, method, rule in routes(app)
                  if method == "POST" and rule.rule.startswith("/api/"))


def test_deep_json_is_a_400_on_every_json_post(app: Flask, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    urls = _json_posts(app, team)
    assert len(urls) >= 7
    for url in urls:
        for body in (DEEP, '{"heads": ' + DEEP + "}"):
            answer = owner.post(url, data=body, content_type="application/json")
            assert answer.status_code == 400, (url, answer.status_code, answer.get_data(as_text=True)[:300])
            assert re.search(rf"the body nests lists and objects 100[01] deep; at most {MAX_DEPTH}",
                             answer.get_json()["error"])
    shallow = owner.post(f"/api/sentences/{team.sentence_id}/check", json={"heads": [[[[1]]]], "deprels": []})
    assert shallow.status_code == 422  # a wrong field, read as usual


def test_nul_characters_in_json_are_a_400(app: Flask, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    answer = owner.post(f"/api/sentences/{team.sentence_id}/notes", json={"body": "a\u0000b"})
    assert answer.status_code == 400 and "NUL character" in answer.get_json()["error"]


def test_a_viewer_may_not_check_trees(app: Flask, team: Team) -> None:
    url = f"/api/sentences/{team.sentence_id}/check"
    tree = {"heads": [2, 0], "deprels": ["nsubj", "root"]}
    assert client_as(app, team.users["viewer"]).post(url, json=tree).status_code == 403
    g.pop("_login_user", None)  # the test's app context outlives the requests: forget the viewer
    assert client_as(app, team.users["annotator"]).post(url, json=tree).status_code == 200


@pytest.mark.parametrize("where", ["sign-in", "treebank name", "query"])
def test_nul_characters_in_forms_and_queries_are_a_400(app: Flask, team: Team, where: str) -> None:
    if where == "sign-in":
        answer = app.test_client().post("/auth/login", data={"username": "adm\x00in", "password": "x" * 9})
    elif where == "treebank name":
        answer = client_as(app, team.users["owner"]).post("/treebanks/import", data={
            "name": "tb\x00", "split": "train",
            "file": (io.BytesIO(b"1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n\n"), "a.conllu")})
    else:
        answer = client_as(app, team.users["owner"]).get(f"/treebanks/{team.treebank_id}/sentences?q=a%00b")
    assert answer.status_code == 400, answer.get_data(as_text=True)[:300]
    assert "NUL character (U+0000)" in answer.get_data(as_text=True)


def test_a_nul_in_an_uploaded_file_names_its_line(app: Flask, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    data = b"1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n\n1\tA\x00b\t_\tX\t_\t_\t0\troot\t_\t_\n\n"
    answer = owner.post("/treebanks/import", data={"name": "nul", "split": "train",
                                                   "file": (io.BytesIO(data), "nul.conllu")})
    assert answer.status_code == 422
    assert "Line 3: holds a NUL character (U+0000)" in answer.get_data(as_text=True)


def test_an_oversized_api_body_is_answered_in_json(app: Flask, team: Team, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    monkeypatch.setitem(app.config, "MAX_CONTENT_LENGTH", 1024)
    answer = client_as(app, team.users["owner"]).post(
        f"/api/sentences/{team.sentence_id}/notes", json={"body": "x" * 5000})
    assert answer.status_code == 413 and answer.is_json
    assert "larger than" in answer.get_json()["error"]


def test_signed_in_pages_are_not_stored(app: Flask, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    for url in (f"/treebanks/{team.treebank_id}/sentences", f"/api/sentences/{team.sentence_id}"):
        assert owner.get(url).headers["Cache-Control"] == "no-store"
    g.pop("_login_user", None)  # the test's app context outlives the requests: forget the owner
    assert "no-store" not in (app.test_client().get("/auth/login").headers.get("Cache-Control") or "")


def test_healthz_names_no_worker(app: Flask, session: Session) -> None:
    session.add(JobWorker(name="web-7.internal:4242", queue="sqlite"))
    session.commit()
    body = app.test_client().get("/healthz").get_data(as_text=True)
    assert '"alive":1' in body.replace(" ", "") and "web-7.internal" not in body and "4242" not in body
