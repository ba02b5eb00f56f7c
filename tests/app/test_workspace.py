"""Workspace services and JSON API: validation, saving, conflicts, revert, notes, queue."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import Document, Sentence, SentenceState, User
from app.services import DbSession
from app.services.imports import import_conllu
from app.services.queue import DEFAULT_ORDER, QueueFilter, build_queue, next_in_queue
from app.services.trees import add_version
from app.services.validation import non_projective, validate_tree

POOL = (
    "# sent_id = a\n1\tHe\t_\tPRON\t_\t_\t_\t_\t_\t_\n2\truns\t_\tVERB\t_\t_\t_\t_\t_\t_\n"
    "3\tfast\t_\tADV\t_\t_\t_\t_\t_\t_\n\n"
    "# sent_id = b\n1\tShe\t_\tPRON\t_\t_\t_\t_\t_\t_\n2\tsings\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n"
    "# sent_id = c\n1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_\n2\tbark\t_\tVERB\t_\t_\t_\t_\t_\t_\n"
    "3\tloudly\t_\tADV\t_\t_\t_\t_\t_\t_\n4\ttoday\t_\tNOUN\t_\t_\t_\t_\t_\t_\n\n"
)
TRAIN = "1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\t_\tPRON\t_\t_\t1\tnmod:poss\t_\t_\n\n"


def seed(session: DbSession, user: User) -> dict[str, int]:
    """Three pool sentences with member and ensemble trees; returns sent_id → id."""
    import_conllu(session, data=TRAIN.encode(), filename="t.conllu", treebank_name="tb", split="train",
                  user=user)
    import_conllu(session, data=POOL.encode(), filename="p.conllu", treebank_name="tb", split="pool",
                  user=user)
    ids = {str(sent_id): sentence_id for sent_id, sentence_id in session.execute(
        select(Sentence.sent_id, Sentence.id).join(Document).where(Document.split == "pool"))}
    members = {
        "a": ([2, 0, 2], ["nsubj", "root", "advmod"], [2, 0, 1], ["nsubj", "root", "obj"]),
        "b": ([2, 0], ["nsubj", "root"], [2, 0], ["nsubj", "root"]),
        "c": ([2, 0, 2, 2], ["nsubj", "root", "advmod", "obl"], [2, 0, 4, 2], ["obj", "root", "obl", "obl"]),
    }
    disagreement = {"a": 0.2, "b": 0.0, "c": 0.5}
    for key, (h1, l1, h2, l2) in members.items():
        sid = ids[key]
        add_version(session, sentence_id=sid, source="graph1", heads=h1, deprels=l1, user=user)
        add_version(session, sentence_id=sid, source="eager", heads=h2, deprels=l2, user=user)
        add_version(session, sentence_id=sid, source="ensemble", heads=h1, deprels=l1, user=user,
                    scores=[1.0] * len(h1))
        session.add(SentenceState(sentence_id=sid, status="todo", disagreement=disagreement[key]))
    session.commit()
    return ids


@pytest.fixture
def api(app: Flask, logged_in: FlaskClient) -> tuple[FlaskClient, dict[str, int]]:
    """A signed-in client and three seeded pool sentences."""
    with app.app_context():
        ids = seed(db.session, db.session.scalars(select(User)).one())
    return logged_in, ids


def test_validation_messages() -> None:
    labels = ["nsubj", "root", "nmod:poss"]
    cycle = validate_tree([2, 3, 1], ["nsubj", "obj", "obj"], labels)
    assert any(e.code == "cycle" and "cycle" in e.message for e in cycle)
    two_roots = validate_tree([0, 0], ["root", "root"], labels)
    assert [e.code for e in two_roots] == ["roots"] and "exactly one" in two_roots[0].message
    unknown = validate_tree([0, 1], ["root", "blah"], labels)
    assert unknown[0].code == "label" and "'blah'" in unknown[0].message
    assert validate_tree([0, 1], ["root", "nmod:poss"], labels) == []
    assert validate_tree([0, 1], ["root", "obj:weird"], labels)[0].code == "label"
    assert validate_tree([None, 1], ["root", "obj"], labels)[0].code == "no-head"
    assert non_projective([3, 0, 2, 1]) == [1, 2, 4]
    assert non_projective([2, 0, 2]) == []


def test_editor_data_and_pages(api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    data = client.get(f"/api/sentences/{ids['a']}").get_json()
    assert [m["name"] for m in data["members"]] == ["eager", "graph1"]
    assert data["current"]["source"] == "ensemble" and data["version"] == 0
    assert "nmod:poss" in data["labels"] and "nsubj" in data["labels"]
    page = client.get(f"/workspace/sentences/{ids['a']}")
    assert page.status_code == 200 and b"editor.js" in page.data
    assert client.get("/workspace/treebanks/1").status_code in (200, 404)


@pytest.mark.parametrize(("heads", "deprels", "code"), [
    ([2, 3, 2], ["nsubj", "root", "advmod"], "cycle"),
    ([0, 0, 2], ["root", "root", "advmod"], "roots"),
    ([2, 0, 2], ["nsubj", "root", "zzz"], "label"),
])
def test_invalid_saves_are_refused(
    api: tuple[FlaskClient, dict[str, int]], heads: list[int], deprels: list[str], code: str
) -> None:
    client, ids = api
    response = client.post(f"/api/sentences/{ids['a']}/annotations",
                           json={"heads": heads, "deprels": deprels, "expected_version": 0})
    assert response.status_code == 422
    assert code in [e["code"] for e in response.get_json()["errors"]]
    assert client.get(f"/api/sentences/{ids['a']}").get_json()["version"] == 0


def test_save_conflict_history_revert(api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    url = f"/api/sentences/{ids['a']}"
    first = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0,
        "reviewed_words": [1, 2, 3], "status": "reviewed"})
    assert first.status_code == 201 and first.get_json()["tree"]["version"] == 1
    assert first.get_json()["state"] == {"status": "reviewed", "reviewed_words": [1, 2, 3],
                                         "disagreement": 0.2}
    stale = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 1], "deprels": ["nsubj", "root", "obj"], "expected_version": 0})
    assert stale.status_code == 409
    body = stale.get_json()
    assert body["theirs"]["version"] == 1 and body["theirs"]["user"] == "ana"
    assert body["yours"]["deprels"] == ["nsubj", "root", "obj"] and body["differing"] == [3]
    second = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 1], "deprels": ["nsubj", "root", "obj"], "expected_version": 1})
    assert second.status_code == 201
    history = client.get(f"{url}/history").get_json()["history"]
    assert history[0]["version"] == 2 and history[0]["changes"] == [
        {"word": 3, "form": "fast", "from": [2, "obl"], "to": [1, "obj"]}]
    reverted = client.post(f"{url}/revert", json={"version_id": history[1]["id"], "expected_version": 2})
    assert reverted.status_code == 201 and reverted.get_json()["tree"]["deprels"][2] == "obl"
    assert client.post(f"{url}/revert", json={"version_id": history[1]["id"],
                                              "expected_version": 2}).status_code == 409
    assert client.get(url).get_json()["current"]["version"] == 3


def test_revert_takes_the_review_ticks_of_the_tree_reverted_to(
    api: tuple[FlaskClient, dict[str, int]]
) -> None:
    """Issue #30: accept words 2 and 3, save, revert to the ensemble: no word stays reviewed."""
    client, ids = api
    url = f"/api/sentences/{ids['c']}"
    saved = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 2, 2], "deprels": ["nsubj", "root", "advmod", "obl"], "expected_version": 0,
        "reviewed_words": [2, 3], "human_words": [2, 3]})
    assert saved.status_code == 201 and saved.get_json()["state"]["reviewed_words"] == [2, 3]
    history = client.get(f"{url}/history").get_json()["history"]
    ensemble = next(entry for entry in history if entry["source"] == "ensemble")
    reverted = client.post(f"{url}/revert", json={"version_id": ensemble["id"], "expected_version": 1})
    assert reverted.status_code == 201
    assert reverted.get_json()["state"]["reviewed_words"] == []
    assert reverted.get_json()["state"]["status"] == "in_progress"
    assert client.get(url).get_json()["state"]["reviewed_words"] == []
    # back to the partial annotation: its human arcs are the reviewed words again
    back = client.post(f"{url}/revert", json={"version_id": saved.get_json()["tree"]["id"],
                                              "expected_version": 2})
    assert back.status_code == 201 and back.get_json()["state"]["reviewed_words"] == [2, 3]
    # a tree saved as reviewed, reverted to: reviewed again; reverted away from: not
    done = client.post(f"{url}/annotations", json={
        "heads": [2, 0, 4, 2], "deprels": ["obj", "root", "obl", "obl"], "expected_version": 3,
        "human_words": [], "status": "reviewed"}).get_json()
    assert done["state"]["status"] == "reviewed"
    away = client.post(f"{url}/revert", json={"version_id": ensemble["id"], "expected_version": 4}).get_json()
    assert away["state"] == {"status": "in_progress", "reviewed_words": [], "disagreement": 0.5}
    again = client.post(f"{url}/revert", json={"version_id": done["tree"]["id"],
                                               "expected_version": 5}).get_json()
    assert again["state"]["status"] == "reviewed" and again["state"]["reviewed_words"] == [1, 2, 3, 4]


def test_notes_and_state(api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    url = f"/api/sentences/{ids['b']}"
    assert client.post(f"{url}/notes", json={"body": "  "}).status_code == 422
    notes = client.post(f"{url}/notes", json={"body": "check 'sings'"}).get_json()["notes"]
    assert [(n["body"], n["user"]) for n in notes] == [("check 'sings'", "ana")]
    assert client.post(f"{url}/state", json={"status": "nope"}).status_code == 422
    state = client.post(f"{url}/state", json={"status": "in_progress", "reviewed_words": [2, 9]})
    assert state.get_json()["state"]["reviewed_words"] == [2]


def test_writes_need_csrf_header(app: Flask, api: tuple[FlaskClient, dict[str, int]],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    client, ids = api
    monkeypatch.setitem(app.config, "WTF_CSRF_ENABLED", True)
    response = client.post(f"/api/sentences/{ids['b']}/notes", json={"body": "x"})
    assert response.status_code == 400 and "CSRF" in response.get_json()["error"]


def test_queue_orders_and_filters(session: Session, user: User) -> None:
    ids = seed(session, user)
    treebank = session.get(Document, session.scalar(select(Document.id))).treebank  # type: ignore[union-attr]
    order = [i["id"] for i in build_queue(session, treebank, QueueFilter()).items]
    assert order == [ids["c"], ids["a"], ids["b"]]
    by_length = build_queue(session, treebank, QueueFilter(order="length")).items
    assert [i["n_words"] for i in by_length] == [4, 3, 2]
    assert sorted(i["id"] for i in build_queue(session, treebank, QueueFilter(order="random")).items) \
        == sorted(ids.values())
    assert [i["id"] for i in build_queue(session, treebank, QueueFilter(upos="ADV")).items] \
        == [ids["c"], ids["a"]]
    assert [i["id"] for i in build_queue(session, treebank, QueueFilter(relation="obl")).items] == [ids["c"]]
    disputed = build_queue(session, treebank, QueueFilter(disputed="advmod")).items
    assert [(i["id"], i["disputed_words"]) for i in disputed] == [(ids["c"], 1), (ids["a"], 1)]
    session.get(SentenceState, ids["c"]).status = "reviewed"  # type: ignore[union-attr]
    session.flush()
    queue = build_queue(session, treebank, QueueFilter(status="todo"))
    assert [i["id"] for i in queue.items] == [ids["a"], ids["b"]]
    assert queue.counts == {"total": 3, "todo": 2, "in_progress": 0, "reviewed": 1, "preannotated": 3}
    assert next_in_queue(session, treebank, QueueFilter(), ids["c"]) == ids["a"]
    assert next_in_queue(session, treebank, QueueFilter(), ids["b"]) is None
    assert next_in_queue(session, treebank, QueueFilter(status="todo"), ids["c"]) == ids["a"]


def test_queue_api(api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    treebank_id = client.get(f"/api/sentences/{ids['a']}").get_json()["sentence"]["treebank_id"]
    body = client.get(f"/api/treebanks/{treebank_id}/queue?order=length").get_json()
    assert [i["n_words"] for i in body["items"]] == [4, 3, 2] and body["counts"]["total"] == 3
    assert client.get(f"/api/treebanks/{treebank_id}/queue/next?after={ids['c']}").get_json() == {
        "id": ids["a"]}
    todo = client.get(f"/api/treebanks/{treebank_id}/queue?status=todo").get_json()["items"]
    page = client.get(f"/workspace/treebanks/{treebank_id}?status=todo")
    assert page.status_code == 200
    assert page.data.count(b'class="sent-id"') == len(todo)  # the page lists what the filter keeps


def test_queue_strategies_rank_as_defined_and_reviewed_sentences_leave_the_default_view(
        session: Session, user: User) -> None:
    ids = seed(session, user)
    treebank = session.get(Document, session.scalar(select(Document.id))).treebank  # type: ignore[union-attr]
    states = {key: session.get(SentenceState, ids[key]) for key in ids}
    # a: 3 words, mean 0.6 → 1.8 expected wrong heads; c: 4 words, mean 0.5 → 2.0; b: 2 words, 0.95 → 1.9
    for key, mean, entropy in (("a", 0.6, 3.0), ("b", 0.95, 0.5), ("c", 0.5, 1.0)):
        states[key].disagreement, states[key].entropy = mean, entropy  # type: ignore[union-attr]
    session.flush()

    def order(**spec: Any) -> list[str]:
        by_id = {v: k for k, v in ids.items()}
        return [by_id[item["id"]] for item in build_queue(session, treebank, QueueFilter(**spec)).items]

    assert QueueFilter().order == DEFAULT_ORDER == "disagreement"
    assert order(order="expected-errors") == ["c", "b", "a"]
    assert order(order="disagreement") == ["b", "a", "c"]
    assert order(order="entropy") == ["a", "c", "b"]
    items = build_queue(session, treebank, QueueFilter(order="expected-errors")).items
    assert [round(i["expected_errors"], 6) for i in items] == [2.0, 1.9, 1.8]
    states["c"].status = "reviewed"  # type: ignore[union-attr]
    session.flush()
    assert order() == ["b", "a"]  # "open" by default: reviewed sentences leave the to-do view
    assert order(status="any") == ["b", "a", "c"] and order(status="reviewed") == ["c"]
    assert QueueFilter.from_args({"status": "bogus", "order": "bogus"}) == QueueFilter()
    assert QueueFilter(status="any").to_args() == {"status": "any"}


def test_queue_page_explains_its_order(api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    treebank_id = client.get(f"/api/sentences/{ids['a']}").get_json()["sentence"]["treebank_id"]
    page = client.get(f"/workspace/treebanks/{treebank_id}").get_data(as_text=True)
    assert "Disagreement:</strong> most disputed per word first" in page
    assert "The default: In simulated annotation rounds" in page
    assert "Reviewed sentences are not listed" in page
    page = client.get(f"/workspace/treebanks/{treebank_id}?order=entropy&status=any").get_data(as_text=True)
    assert "The default:" not in page
    assert "Entropy:</strong> most spread votes first" in page and "Reviewed sentences are not" not in page


def test_diverse_queue_moves_near_duplicates_down(session: Session, user: User) -> None:
    ids = seed(session, user)
    treebank = session.get(Document, session.scalar(select(Document.id))).treebank  # type: ignore[union-attr]
    texts = {"a": "the dog runs fast", "b": "The dog runs fast", "c": "a cat sleeps here"}
    for key, text in texts.items():
        session.get(Sentence, ids[key]).text = text  # type: ignore[union-attr]
    states = {key: session.get(SentenceState, ids[key]) for key in ids}
    for key, mean in (("a", 0.9), ("b", 0.8), ("c", 0.1)):
        states[key].disagreement = mean  # type: ignore[union-attr]
    session.flush()
    by_id = {v: k for k, v in ids.items()}

    def order(**spec: Any) -> list[str]:
        return [by_id[item["id"]] for item in build_queue(session, treebank, QueueFilter(**spec)).items]

    assert order(order="disagreement") == ["a", "b", "c"]
    assert order(order="disagreement", diverse=True) == ["a", "c", "b"]  # b repeats a: it goes last
    assert QueueFilter.from_args({"diverse": "1"}).to_args() == {"diverse": "1"}
