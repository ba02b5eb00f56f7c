"""Re-parsing around the annotator's arcs: POST /api/sentences/<id>/reparse and its service.

The members are trained once per module (cheap settings, the demo's train sentences) into a
temporary folder; each test records a finished round pointing at that folder.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, User
from app.parser_models import TrainingRound
from app.services.demo import demo_file, setup_demo
from app.services.model_cache import ModelCache
from app.services.parsing_adapter import load_sentences, tree_of_parse
from app.services.preannotate import FAST_MEMBER_PARAMS
from app.services.reparse import NoModels, reparse
from app.services.trees import add_version
from app.services.validation import validate_tree
from app.views.workspace_api import model_cache
from parsing.conllu_io import read_conllu, to_sentence
from parsing.constraints import Constraints
from parsing.pipeline import ModelBundle, load_models, train_models

MEMBERS = ["graph1", "eager", "hybrid"]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's three members and a voting ensemble, trained on its first 40 sentences."""
    out = tmp_path_factory.mktemp("reparse-models")
    train = [to_sentence(raw) for raw in read_conllu(demo_file())[:40]]
    train_models(train, None, out, names=MEMBERS, ensemble="vote-uniform", params=FAST_MEMBER_PARAMS)
    return out


def record_round(session: Session, models: Path, *, finished: bool = True) -> tuple[Treebank, list[int]]:
    """The demo treebank with a finished round on ``models``; its pool sentence ids (longest first)."""
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=50)
    treebank = session.scalars(select(Treebank)).one()
    session.add(TrainingRound(
        treebank_id=treebank.id, number=1, parsers=MEMBERS, tags="gold", ensemble="vote-uniform",
        weights=[1.0, 1.0, 1.0], model_dir=str(models), user_id=user.id,
        finished_at=datetime.now(UTC) if finished else None))
    session.commit()
    pool = list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == "pool")
        .order_by(Sentence.n_words.desc(), Sentence.id)))
    return treebank, pool


def unconstrained(session: Session, models: Path, sentence_id: int) -> tuple[list[int], list[str]]:
    """The ensemble's own tree of the sentence (no constraints)."""
    _, combined = load_models(models).parse_with_ensemble(load_sentences(session, [sentence_id]))
    heads, deprels, _ = tree_of_parse(combined[0])
    return heads, deprels


def longest_with_tree(session: Session, models: Path) -> tuple[int, list[int], list[str]]:
    """A recorded round; the longest pool sentence and the ensemble's own tree of it."""
    _, pool = record_round(session, models)
    heads, deprels = unconstrained(session, models, pool[0])
    return pool[0], heads, deprels


def post(client: FlaskClient, sentence_id: int, body: Any) -> Any:
    return client.post(f"/api/sentences/{sentence_id}/reparse", json=body)


def assert_valid(session: Session, sentence_id: int, tree: dict[str, Any]) -> None:
    sentence = session.get(Sentence, sentence_id)
    assert sentence is not None
    assert validate_tree(tree["heads"], tree["deprels"], sentence.document.treebank.labels) == []


def test_reply_holds_the_constraints_and_is_a_tree(
    logged_in: FlaskClient, session: Session, models: Path
) -> None:
    sentence_id, heads, deprels = longest_with_tree(session, models)
    n = len(heads)
    rng = np.random.default_rng(3)
    for _ in range(4):  # move one or two words somewhere the ensemble did not put them
        moved = {}
        for word in rng.choice(np.arange(1, n + 1), size=2, replace=False).tolist():
            if heads[word - 1] == 0:
                continue
            options = [h for h in range(1, n + 1) if h not in (word, heads[word - 1])]
            moved[word] = int(rng.choice(options))
        try:
            Constraints(moved).validate(n)
        except ValueError:
            continue
        body = {"constraints": [{"id": w, "head": h, "deprel": None} for w, h in moved.items()]}
        response = post(logged_in, sentence_id, body)
        assert response.status_code == 200, response.json
        reply = response.json
        tree = reply["ensemble"]
        for word, head in moved.items():
            assert tree["heads"][word - 1] == head
            assert word not in reply["changed"]
        assert_valid(session, sentence_id, tree)
        assert len(tree["scores"]) == n and all(0.0 <= s <= 1.0 for s in tree["scores"])
        assert [m["name"] for m in reply["members"]] == MEMBERS
        for member in reply["members"]:  # every member parsed under the constraints
            assert all(member["heads"][w - 1] == h for w, h in moved.items())
        assert reply["constrained"] == sorted(moved)


def test_labels_are_forced_and_changes_are_measured_against_the_previous_tree(
    logged_in: FlaskClient, session: Session, models: Path
) -> None:
    sentence_id, heads, deprels = longest_with_tree(session, models)
    word = next(w for w in range(1, len(heads) + 1) if heads[w - 1] != 0)
    label = "obl" if deprels[word - 1] != "obl" else "nmod"
    body = {"constraints": [{"id": word, "head": heads[word - 1], "deprel": label}],
            "previous": {"heads": heads, "deprels": deprels}}
    reply = post(logged_in, sentence_id, body).json
    assert reply["ensemble"]["deprels"][word - 1] == label
    assert reply["ensemble"]["heads"] == heads  # only a label was forced: the tree stands
    assert reply["changed"] == [w for w in range(1, len(heads) + 1) if w != word and (
        reply["ensemble"]["deprels"][w - 1] != deprels[w - 1])]


def test_constraints_from_the_unconstrained_tree_change_nothing(
    logged_in: FlaskClient, session: Session, models: Path
) -> None:
    _, pool = record_round(session, models)
    for sentence_id in pool[:3]:
        heads, deprels = unconstrained(session, models, sentence_id)
        user = session.scalars(select(User)).one()
        add_version(session, sentence_id=sentence_id, source="ensemble", heads=heads, deprels=deprels,
                    user=user)
        session.commit()
        for words in ([1], [1, len(heads)], list(range(1, len(heads) + 1))):
            body = {"constraints": [{"id": w, "head": heads[w - 1], "deprel": deprels[w - 1]} for w in words]}
            reply = post(logged_in, sentence_id, body).json
            assert reply["ensemble"]["heads"] == heads and reply["ensemble"]["deprels"] == deprels
            assert reply["changed"] == []  # measured against the stored ensemble tree


@pytest.mark.parametrize(("body", "status", "field"), [
    ({}, 422, "constraints"),
    ({"constraints": "1->2"}, 422, "constraints"),
    ({"constraints": [7]}, 422, "constraints[0]"),
    ({"constraints": [{"id": "1", "head": 0}]}, 422, "constraints[0].id"),
    ({"constraints": [{"id": 1, "head": 2.5}]}, 422, "constraints[0].head"),
    ({"constraints": [{"id": 1, "head": True}]}, 422, "constraints[0].head"),
    ({"constraints": [{"id": 1, "head": 2, "deprel": 3}]}, 422, "constraints[0].deprel"),
    ({"constraints": [{"id": 1, "head": 2}, {"id": 1, "head": 3}]}, 422, "constraints[1].id"),
    ({"constraints": [{"id": 99, "head": 1}]}, 422, "constraints[0].id"),
    ({"constraints": [{"id": 0, "head": 1}]}, 422, "constraints[0].id"),
    ({"constraints": [{"id": 1, "head": 99}]}, 422, "constraints[0].head"),
    ({"constraints": [{"id": 1, "head": 1}]}, 422, "constraints[0].head"),
    ({"constraints": [{"id": 1, "head": 2, "deprel": "no-such-label"}]}, 422, "constraints[0].deprel"),
    ({"constraints": [{"id": 1, "head": 2, "deprel": "root"}]}, 422, "constraints[0].deprel"),
    ({"constraints": [{"id": 1, "head": 0, "deprel": "nsubj"}]}, 422, "constraints[0].deprel"),
    ({"constraints": [{"id": 1, "head": 2}, {"id": 2, "head": 1}]}, 422, "constraints"),  # a cycle
    ({"constraints": [{"id": 1, "head": 0}, {"id": 2, "head": 0}]}, 422, "constraints"),  # two roots
    ({"constraints": [], "previous": [1, 2]}, 422, "previous"),
    ({"constraints": [], "previous": {"heads": [0], "deprels": ["root"]}}, 422, "previous.heads"),
])
def test_bad_input_is_refused_naming_the_field(
    logged_in: FlaskClient, session: Session, models: Path, body: dict[str, Any], status: int, field: str
) -> None:
    _, pool = record_round(session, models)
    response = post(logged_in, pool[0], body)
    assert response.status_code == status, response.json
    assert response.json["field"] == field and response.json["error"]


def test_not_json_signed_out_and_unknown_sentence(
    client: FlaskClient, logged_in: FlaskClient, session: Session, models: Path
) -> None:
    _, pool = record_round(session, models)
    assert logged_in.post(f"/api/sentences/{pool[0]}/reparse", data="x").status_code == 400
    assert post(logged_in, 10**9, {"constraints": []}).status_code == 404
    logged_in.post("/auth/logout")
    assert post(logged_in, pool[0], {"constraints": []}).status_code == 401


def test_without_trained_models_the_reply_says_so(
    logged_in: FlaskClient, session: Session, models: Path, tmp_path: Path
) -> None:
    _, pool = record_round(session, models, finished=False)  # a round still training does not count
    response = post(logged_in, pool[0], {"constraints": []})
    assert response.status_code == 409 and "no trained models" in response.json["error"]
    round_ = session.scalars(select(TrainingRound)).one()
    round_.finished_at, round_.model_dir = datetime.now(UTC), str(tmp_path / "gone")  # deleted from disk
    session.commit()
    assert post(logged_in, pool[0], {"constraints": []}).status_code == 409


def test_models_are_loaded_once_per_directory(app: Flask, session: Session, user: User, models: Path) -> None:
    _, pool = record_round(session, models)
    cache = ModelCache(size=1)
    sentence = session.get(Sentence, pool[0])
    assert sentence is not None
    for word in range(3):  # an annotator's edits: the sentence is parsed unconstrained once
        reparse(session, sentence, Constraints({word + 1: 0}), cache)
    assert cache.loads == 1 and len(cache) == 1
    cached = cache.get(models)
    assert cached.parses == 1 and len(cached.parsed) == 1
    with app.test_request_context():
        assert model_cache() is model_cache()  # one cache per app


def test_cache_is_bounded_and_reloads_a_retrained_directory(tmp_path: Path) -> None:
    loaded: list[Path] = []

    def loader(path: Path) -> Any:
        loaded.append(path)
        return object()

    dirs = []
    for name in "abc":
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
        dirs.append(tmp_path / name)
    cache = ModelCache(size=2, loader=loader)
    for directory in [*dirs, dirs[2], dirs[1]]:
        cache.get(directory)
    assert len(cache) == 2 and cache.loads == 3  # c and b were hits
    cache.get(dirs[0])  # evicted before: loaded again
    assert cache.loads == 4
    manifest = dirs[0] / "manifest.json"
    stat = manifest.stat()
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # trained again
    cache.get(dirs[0])
    assert cache.loads == 5 and len(cache) == 2
    with pytest.raises(FileNotFoundError):
        cache.get(tmp_path / "nothing")


def test_no_models_raises_in_the_service(session: Session, user: User) -> None:
    setup_demo(session, user=user, sentences=50)
    sentence = session.scalars(select(Sentence).join(Document).where(Document.split == "pool")).first()
    assert sentence is not None
    with pytest.raises(NoModels):
        reparse(session, sentence, Constraints({}), ModelCache())


def test_the_next_edit_starts_from_the_last_reparse_when_it_adds_arcs(
    session: Session, user: User, models: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The members' parses of a sentence's last re-parse are kept with its constraints, and
    handed to the next re-parse only when the new constraints include them (an added arc),
    not after an arc was undone or moved."""
    _, pool = record_round(session, models)
    cache = ModelCache(size=1)
    sentence = session.get(Sentence, pool[0])
    assert sentence is not None
    starts: list[object] = []
    real = ModelBundle.parse_constrained

    def spy(self: ModelBundle, *args: Any, **kwargs: Any) -> Any:
        starts.append(kwargs.get("start"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ModelBundle, "parse_constrained", spy)
    first = Constraints({1: 0})
    reparse(session, sentence, first, cache)
    reparse(session, sentence, Constraints({1: 0, 2: 1}), cache)  # an arc added
    reparse(session, sentence, Constraints({1: 0}), cache)  # that arc undone
    reparse(session, sentence, Constraints({1: 0}, {1: "root"}), cache)  # a label forced too
    assert starts[0] is None
    assert isinstance(starts[1], dict) and set(starts[1]) == set(cache.get(models).bundle.parsers)
    assert starts[2] is None
    assert isinstance(starts[3], dict)
