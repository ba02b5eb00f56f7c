"""The JSON API against its own OpenAPI description (schemathesis): every operation, with
generated parameters and bodies, answers as described (status codes, content types, answer
schemas) and never with a 500. Bounded: a few examples per operation, well under a minute."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import select

import app.views.workspace_api as workspace_api
from app.extensions import db
from app.jobs import create_job
from app.models import Sentence, User
from app.views.openapi import document
from tests.app.test_workspace import seed

PASSWORD = "correct horse battery"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def real_ids(app: Flask, make_user: Callable[..., int], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Seeded sentences, a queued job, and the cookie of a signed-in user (jobs are not run)."""
    monkeypatch.setattr(workspace_api, "submit", lambda app, job_id: None)
    make_user("ana")
    with app.app_context():
        user = db.session.scalars(select(User)).one()
        ids = seed(db.session, user)
        sentence = db.session.get(Sentence, ids["a"])
        assert sentence is not None
        treebank_id = sentence.document.treebank_id
        job = create_job(db.session, kind="preannotate", user=user, treebank_id=treebank_id,
                         params={"parsers": ["graph1"]})
        db.session.commit()
        path = {"sentence_id": ids["a"], "treebank_id": treebank_id, "job_id": job.id}
    client = app.test_client()
    assert client.post("/auth/login", data={"username": "ana", "password": PASSWORD}).status_code == 302
    cookie = client.get_cookie("session")
    assert cookie is not None
    return {"path": path, "cookies": {"session": cookie.value}}


schema = schemathesis.openapi.from_dict(document())
"""The description the app publishes (test_the_description_is_published checks it is the same)."""


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_the_api_answers_as_described(app: Flask, case: Any, real_ids: dict[str, Any]) -> None:
    case.path_parameters = {name: real_ids["path"].get(name, value)
                            for name, value in (case.path_parameters or {}).items()}
    case.call_and_validate(app=app, cookies=real_ids["cookies"], checks=CHECKS)


def test_the_description_is_published(app: Flask) -> None:
    response = app.test_client().get("/api/openapi.json")
    assert response.status_code == 200
    published = response.get_json()
    assert published == json.loads(json.dumps(document()))
    assert published["openapi"].startswith("3.1")
    api_rules = {rule.rule.replace("<int:", "{").replace(">", "}") for rule in app.url_map.iter_rules()
                 if rule.rule.startswith(("/api/", "/jobs/")) and rule.rule != "/api/openapi.json"}
    assert api_rules == set(published["paths"]), "every JSON endpoint is described"


# -- issue #31: bodies built to break the reader --------------------------------------------------


def _with_nul(value: Any) -> Any:
    """``value`` with a NUL character added to every string in it."""
    if isinstance(value, str):
        return value + "\x00"
    if isinstance(value, list):
        return [_with_nul(item) for item in value]
    if isinstance(value, dict):
        return {key: _with_nul(item) for key, item in value.items()}
    return value


def _has_string(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_string(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_string(item) for item in value)
    return isinstance(value, str)


DEEP = {"heads": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}
"""A body nesting 41 deep (deeper than ``MAX_DEPTH``), small enough for any JSON encoder."""


@schema.parametrize()
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_deep_and_nul_bearing_bodies_are_refused(app: Flask, case: Any, real_ids: dict[str, Any]) -> None:
    """Every operation with a JSON body, given its generated body with a NUL in every string and a
    body nesting too deep: a 400 naming why (never a 500, never stored)."""
    if case.method.upper() != "POST" or not isinstance(case.body, dict):
        return
    case.path_parameters = {name: real_ids["path"].get(name, value)
                            for name, value in (case.path_parameters or {}).items()}
    original = case.body
    case.media_type = "application/json"
    case.headers = {**(case.headers or {}), "Content-Type": "application/json"}
    for body, why in ((DEEP, "nests lists and objects"), (_with_nul(original), "NUL character")):
        if why == "NUL character" and not _has_string(original):
            continue
        case.body = body
        response = case.call(app=app, cookies=real_ids["cookies"])
        assert response.status_code == 400, (case.path, why, response.status_code, response.text[:300])
        assert why in response.json()["error"]
