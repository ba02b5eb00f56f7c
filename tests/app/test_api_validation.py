"""Every JSON field of the API is checked: a wrong type or value is a 400/422 naming the field,
never a 500, and nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.extensions import db
from app.job_models import Job
from app.models import Sentence, SentenceNote, SentenceState, TreeVersion, User
from tests.app.test_workspace import seed

GOOD_TREE = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"]}
HUGE = 10**20  # a number of 20 digits (21 here): beyond every integer column

# (endpoint, body, field named in the answer)
BAD_BODIES: list[tuple[str, Any, str]] = [
    ("annotations", {**GOOD_TREE, "expected_version": None}, "expected_version"),
    ("annotations", {**GOOD_TREE, "expected_version": [1]}, "expected_version"),
    ("annotations", {**GOOD_TREE, "expected_version": "1"}, "expected_version"),
    ("annotations", {**GOOD_TREE, "expected_version": -1}, "expected_version"),
    ("annotations", {**GOOD_TREE, "expected_version": HUGE}, "expected_version"),
    ("annotations", {**GOOD_TREE, "expected_version": True}, "expected_version"),
    ("annotations", {"heads": [2, 0, 2], "deprels": ["nsubj", {"x": 1}, "obl"]}, "deprels[1]"),
    ("annotations", {"heads": [2, [0], 2], "deprels": GOOD_TREE["deprels"]}, "heads[1]"),
    ("annotations", {"heads": "2,0,2", "deprels": GOOD_TREE["deprels"]}, "heads"),
    ("annotations", {"deprels": GOOD_TREE["deprels"]}, "heads"),
    ("annotations", {**GOOD_TREE, "reviewed_words": [[1], 2]}, "reviewed_words[0]"),
    ("annotations", {**GOOD_TREE, "reviewed_words": {"1": True}}, "reviewed_words"),
    ("annotations", {**GOOD_TREE, "reviewed_words": [HUGE]}, "reviewed_words[0]"),
    ("annotations", {**GOOD_TREE, "based_on_id": "7"}, "based_on_id"),
    ("annotations", {**GOOD_TREE, "based_on_id": HUGE}, "based_on_id"),
    ("annotations", {**GOOD_TREE, "status": "done"}, "status"),
    ("annotations", {**GOOD_TREE, "status": ["reviewed"]}, "status"),
    ("check", {"heads": [2, 0, 2], "deprels": [1, 2, 3]}, "deprels[0]"),
    ("check", {"heads": [2.5, 0, 2], "deprels": GOOD_TREE["deprels"]}, "heads[0]"),
    ("state", {"reviewed_words": [[1, 2]]}, "reviewed_words[0]"),
    ("state", {"reviewed_words": "1,2"}, "reviewed_words"),
    ("state", {"status": 3}, "status"),
    ("revert", {"version_id": "1", "expected_version": 0}, "version_id"),
    ("revert", {"version_id": HUGE, "expected_version": 0}, "version_id"),
    ("revert", {"expected_version": 0}, "version_id"),
    ("revert", {"version_id": 1, "expected_version": None}, "expected_version"),
    ("notes", {"body": {"text": "hi"}}, "body"),
    ("notes", {"body": ["hi"]}, "body"),
    ("notes", {}, "body"),
    ("preannotate", {"sentences": 5}, "sentences"),
    ("preannotate", {"sentences": "1,2"}, "sentences"),
    ("preannotate", {"sentences": [1, "x"]}, "sentences[1]"),
    ("preannotate", {"sentences": [HUGE]}, "sentences[0]"),
    ("preannotate", {"parsers": {"graph1": True}}, "parsers"),
    ("preannotate", {"parsers": [1]}, "parsers[0]"),
    ("preannotate", {"tags": ["gold"]}, "tags"),
    ("preannotate", {"ensemble": 5}, "ensemble"),
    ("preannotate", {"warm": "yes"}, "warm"),
    ("preannotate", {"self_training": "own"}, "self_training"),
]
NOT_OBJECTS: list[Any] = [None, [], "text", 3, [GOOD_TREE]]


def _url(endpoint: str, ids: dict[str, int], treebank_id: int) -> str:
    if endpoint == "preannotate":
        return f"/api/treebanks/{treebank_id}/preannotate"
    return f"/api/sentences/{ids['a']}/{endpoint}"


def _rows(app: Flask) -> dict[str, int]:
    with app.app_context():
        return {model.__tablename__: db.session.scalar(select(func.count()).select_from(model)) or 0
                for model in (TreeVersion, SentenceState, SentenceNote, Job)}


@pytest.fixture
def api(app: Flask, logged_in: FlaskClient) -> tuple[FlaskClient, dict[str, int], int]:
    """A signed-in client, the seeded sentences' ids and their treebank's id."""
    with app.app_context():
        ids = seed(db.session, db.session.scalars(select(User)).one())
        sentence = db.session.get(Sentence, ids["a"])
        assert sentence is not None
        return logged_in, ids, sentence.document.treebank_id


@pytest.mark.parametrize(("endpoint", "body", "field"), BAD_BODIES,
                         ids=[f"{e}-{f}-{i}" for i, (e, _, f) in enumerate(BAD_BODIES)])
def test_a_wrong_field_is_named_in_a_422(
    app: Flask, api: tuple[FlaskClient, dict[str, int], int], endpoint: str, body: Any, field: str
) -> None:
    client, ids, treebank_id = api
    before = _rows(app)
    response = client.post(_url(endpoint, ids, treebank_id), json=body)
    assert response.status_code == 422, response.get_data(as_text=True)
    reply = response.get_json()
    assert reply["field"] == field
    assert reply["error"].startswith(f"{field}: ")
    assert _rows(app) == before


@pytest.mark.parametrize("endpoint", ["annotations", "check", "state", "revert", "notes", "preannotate"])
@pytest.mark.parametrize("body", NOT_OBJECTS, ids=["null", "list", "string", "number", "list-of-trees"])
def test_a_body_that_is_not_an_object_is_a_400(
    app: Flask, api: tuple[FlaskClient, dict[str, int], int], endpoint: str, body: Any
) -> None:
    client, ids, treebank_id = api
    response = client.post(_url(endpoint, ids, treebank_id), json=body)
    assert response.status_code == 400
    assert response.get_json() == {"error": "the body must be a JSON object", "field": ""}


def test_a_body_that_is_not_json_is_a_400(api: tuple[FlaskClient, dict[str, int], int]) -> None:
    client, ids, _ = api
    response = client.post(f"/api/sentences/{ids['a']}/annotations", data=b"{heads:",
                           content_type="application/json")
    assert response.status_code == 400 and response.get_json()["field"] == ""


@pytest.mark.parametrize("path", [
    f"/api/sentences/{HUGE}", f"/api/sentences/{HUGE}/history", f"/jobs/{HUGE}",
    f"/api/treebanks/{HUGE}/queue", f"/sentences/{HUGE}", f"/workspace/sentences/{HUGE}",
])
def test_an_id_of_20_digits_is_not_found(api: tuple[FlaskClient, dict[str, int], int], path: str) -> None:
    client, _, _ = api
    assert client.get(path).status_code == 404


@pytest.mark.parametrize("query", [f"page={HUGE}", "page=-3", "page=x", f"page={'9' * 400}"])
def test_page_numbers_of_any_size_show_a_page(
    api: tuple[FlaskClient, dict[str, int], int], query: str
) -> None:
    client, _, treebank_id = api
    assert client.get(f"/treebanks/{treebank_id}/sentences?{query}").status_code == 200
    assert client.get(f"/workspace/treebanks/{treebank_id}?{query}").status_code == 200


@pytest.mark.parametrize(("query", "field"), [(f"limit={HUGE}", "limit"), ("limit=x", "limit"),
                                               ("limit=0", "limit"), (f"after={HUGE}", "after")])
def test_queue_arguments_are_checked(
    api: tuple[FlaskClient, dict[str, int], int], query: str, field: str
) -> None:
    client, _, treebank_id = api
    path = "queue/next" if field == "after" else "queue"
    response = client.get(f"/api/treebanks/{treebank_id}/{path}?{query}")
    assert response.status_code == 422 and response.get_json()["field"] == field


def test_good_bodies_still_work(app: Flask, api: tuple[FlaskClient, dict[str, int], int]) -> None:
    client, ids, _ = api
    base = f"/api/sentences/{ids['a']}"
    assert client.post(f"{base}/check", json=GOOD_TREE).status_code == 200
    saved = client.post(f"{base}/annotations", json={**GOOD_TREE, "expected_version": 0,
                                                     "reviewed_words": [1], "based_on_id": None})
    assert saved.status_code == 201
    assert client.post(f"{base}/state", json={"status": "reviewed"}).status_code == 200
    assert client.post(f"{base}/notes", json={"body": "fine"}).status_code == 201
    version_id = saved.get_json()["tree"]["id"]
    assert client.post(f"{base}/revert", json={"version_id": version_id,
                                               "expected_version": 1}).status_code == 201
