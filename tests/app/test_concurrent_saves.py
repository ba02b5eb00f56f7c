"""Two annotators saving the same sentence at the same moment: one 201, one 409, never a 500
and never a lost update (run on SQLite and, with TEST_DATABASE_URL, on PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event, func, select

from app.extensions import db
from app.models import Treebank, TreeVersion, User
from app.services.members import set_role
from tests.app.test_workspace import seed

PASSWORD = "correct horse battery"
TREES = {"ana": ([2, 0, 2], ["nsubj", "root", "obl"]), "bo": ([2, 0, 1], ["nsubj", "root", "obj"])}


@pytest.fixture
def two_annotators(app: Flask, make_user: Callable[..., int]) -> tuple[dict[str, FlaskClient], int]:
    """Signed-in clients of ana and bo (an annotator of ana's treebank), and the id of a
    pre-annotated pool sentence."""
    clients = {}
    for name in ("ana", "bo"):
        make_user(name)
        clients[name] = app.test_client()
        signed_in = clients[name].post("/auth/login", data={"username": name, "password": PASSWORD})
        assert signed_in.status_code == 302
    with app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        ids = seed(db.session, ana)
        treebank = db.session.scalars(select(Treebank)).one()
        set_role(db.session, treebank, "bo", "annotator", by=ana)  # ana owns the treebank she imported
        db.session.commit()
    return clients, ids["a"]


@pytest.fixture
def inserts_meet() -> Iterator[threading.Barrier]:
    """Every annotation insert waits until two are ready: both saves have read the same newest
    version, so the race the version check cannot see is guaranteed to happen."""
    barrier = threading.Barrier(2, timeout=10)

    def wait(_mapper: Any, _connection: Any, tree: TreeVersion) -> None:
        if tree.kind == "annotation":
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass  # a lone save (after the race) goes on alone

    event.listen(TreeVersion, "before_insert", wait)
    yield barrier
    event.remove(TreeVersion, "before_insert", wait)


def _save(client: FlaskClient, sentence_id: int, tree: str, expected_version: int, **fields: Any) -> Any:
    """POST the tree ``TREES[tree]`` (and ``fields``) on top of ``expected_version``."""
    heads, deprels = TREES[tree]
    return client.post(f"/api/sentences/{sentence_id}/annotations", json={
        "heads": heads, "deprels": deprels, "expected_version": expected_version, **fields})


def _race(clients: dict[str, FlaskClient], sentence_id: int, expected_version: int) -> dict[str, Any]:
    responses: dict[str, Any] = {}

    def save(name: str) -> None:
        responses[name] = _save(clients[name], sentence_id, name, expected_version)

    threads = [threading.Thread(target=save, args=(name,)) for name in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return responses


def test_simultaneous_saves_give_one_201_and_one_409(
    app: Flask, two_annotators: tuple[dict[str, FlaskClient], int], inserts_meet: threading.Barrier
) -> None:
    clients, sentence_id = two_annotators
    for expected_version in (0, 1):  # on a fresh sentence, then on top of an annotation
        inserts_meet.reset()
        responses = _race(clients, sentence_id, expected_version)
        codes = sorted(response.status_code for response in responses.values())
        assert codes == [201, 409], {name: r.get_json() for name, r in responses.items()}
        winner = next(name for name, r in responses.items() if r.status_code == 201)
        loser = next(name for name, r in responses.items() if r.status_code == 409)
        conflict = responses[loser].get_json()
        assert conflict["theirs"]["user"] == winner
        assert conflict["theirs"]["heads"] == TREES[winner][0]
        assert conflict["differing"] == [3]
        # The winner's tree is the newest version, and it is the only one added.
        newest = clients[loser].get(f"/api/sentences/{sentence_id}").get_json()
        assert newest["version"] == expected_version + 1
        assert newest["current"]["heads"] == TREES[winner][0]
    with app.app_context():
        versions = db.session.scalars(select(TreeVersion.version).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "annotation")).all()
    assert sorted(versions) == [1, 2]


def test_saving_the_same_tree_as_a_newer_version_is_not_a_conflict(
    app: Flask, two_annotators: tuple[dict[str, FlaskClient], int]
) -> None:
    clients, sentence_id = two_annotators
    assert _save(clients["ana"], sentence_id, "ana", 0).status_code == 201
    # bo started from version 0 too, made the same corrections and saves as reviewed.
    same = _save(clients["bo"], sentence_id, "ana", 0, status="reviewed")
    assert same.status_code == 200, same.get_json()
    reply = same.get_json()
    assert reply["unchanged"] is True
    assert reply["tree"]["version"] == 1 and reply["tree"]["user"] == "ana"
    assert reply["state"]["status"] == "reviewed" and reply["state"]["reviewed_words"] == [1, 2, 3]
    with app.app_context():
        count = db.session.scalar(select(func.count()).select_from(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "annotation"))
    assert count == 1
    # A different tree on the old version is still a conflict, naming the differing arc.
    conflict = _save(clients["bo"], sentence_id, "bo", 0)
    assert conflict.status_code == 409 and conflict.get_json()["differing"] == [3]


def test_unchanged_means_the_same_arcs_columns_and_human_arcs(
    app: Flask, two_annotators: tuple[dict[str, FlaskClient], int]
) -> None:
    clients, sentence_id = two_annotators
    mine: dict[str, Any] = {"human_words": [1, 3],
                            "columns": {"upos": ["PRON", "NOUN", "ADV"], "lemma": ["he", "run", "fast"]}}
    assert _save(clients["ana"], sentence_id, "ana", 0, **mine).status_code == 201
    again = _save(clients["ana"], sentence_id, "ana", 0, **mine)  # the same request sent twice
    assert again.status_code == 200 and again.get_json()["unchanged"] is True
    assert again.get_json()["tree"]["columns"]["lemma"] == ["he", "run", "fast"]
    # The same arcs with other word columns, or other human arcs, would lose them: a conflict.
    other_columns = {**mine, "columns": {"upos": ["PRON", "VERB", "ADV"]}}
    other_human = {**mine, "human_words": [1, 2, 3]}
    for changed in (other_columns, other_human):
        refused = _save(clients["bo"], sentence_id, "ana", 0, **changed)
        assert refused.status_code == 409, refused.get_json()
        assert refused.get_json()["differing"] == []
    with app.app_context():
        stored = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "annotation")).all()
    assert [(tree.version, tree.lemmas, tree.provenance) for tree in stored] == [
        (1, ["he", "run", "fast"], ["human", "parser", "human"])]
