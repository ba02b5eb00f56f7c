"""Property tests of the tree validator (hypothesis): it never raises, names a word of the
sentence in every error, and refuses exactly the trees an independent check refuses; through the
API a tree is saved (201) exactly when it is valid, else refused (422) without a row written."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.extensions import db
from app.models import TreeVersion, User
from app.services.validation import UD_RELATIONS, allowed_labels, validate_tree
from tests.app.test_workspace import seed

LABELS = ["nsubj", "obj", "root", "amod", "nmod:poss", "custom"]
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

HEAD = st.one_of(st.integers(-2, 8), st.none(), st.booleans(), st.floats(allow_nan=True),
                 st.text(max_size=2), st.integers(2**31, 2**70))
LABEL = st.one_of(st.sampled_from([*LABELS, "root", "_", "", "acl:relcl", "ROOT"]), st.none(),
                  st.text(max_size=4), st.integers())


@st.composite
def valid_tree(draw: st.DrawFn, sizes: tuple[int, int] = (1, 8)) -> tuple[list[Any], list[Any]]:
    """A well-formed tree of ``sizes`` words: a random order, each word attached to one placed
    before it."""
    n = draw(st.integers(*sizes))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for position, word in enumerate(order[1:], start=1):
        heads[word - 1] = order[draw(st.integers(0, position - 1))]
    deprels = [("root" if head == 0 else draw(st.sampled_from([*UD_RELATIONS[:5], "nmod:poss"])))
               for head in heads]
    return heads, deprels


@st.composite
def any_tree(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """A valid tree with a few heads or labels replaced by anything, or lists of anything."""
    if draw(st.booleans()):
        heads, deprels = draw(valid_tree())
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                heads[draw(st.integers(0, len(heads) - 1))] = draw(HEAD)
            else:
                deprels[draw(st.integers(0, len(deprels) - 1))] = draw(LABEL)
        return heads, deprels
    return draw(st.lists(HEAD, max_size=8)), draw(st.lists(LABEL, max_size=8))


def is_valid(heads: list[Any], deprels: list[Any], labels: list[str]) -> bool:
    """An independent statement of what a valid tree is."""
    n = len(heads)
    if len(deprels) != n or not all(type(h) is int and 0 <= h <= n and h != w
                                    for w, h in enumerate(heads, start=1)):
        return False
    if heads.count(0) != 1:
        return False
    for word in range(1, n + 1):  # every word reaches ROOT in at most n steps
        steps, at = 0, word
        while at != 0 and steps <= n:
            at, steps = heads[at - 1], steps + 1
        if at != 0:
            return False
    known = set(allowed_labels(labels))
    return all(isinstance(label, str) and label in known and (label == "root") == (head == 0)
               for head, label in zip(heads, deprels, strict=True))


@FUZZ
@given(tree=any_tree())
def test_the_validator_agrees_with_an_independent_check(tree: tuple[list[Any], list[Any]]) -> None:
    heads, deprels = tree
    errors = validate_tree(heads, deprels, LABELS)
    assert (errors == []) == is_valid(heads, deprels, LABELS), errors
    for error in errors:
        assert 0 <= error.word <= len(heads) and error.message and error.code


@FUZZ
@given(tree=valid_tree())
def test_every_valid_tree_is_accepted(tree: tuple[list[Any], list[Any]]) -> None:
    assert validate_tree(*tree, LABELS) == []


API = settings(FUZZ, max_examples=40)


@API
@given(tree=st.one_of(any_tree(), valid_tree(sizes=(3, 3))))
def test_the_api_saves_exactly_the_valid_trees(app: Flask, logged_in: FlaskClient,
                                               tree: tuple[list[Any], list[Any]]) -> None:
    heads, deprels = tree
    with app.app_context():
        if not db.session.scalar(select(func.count()).select_from(TreeVersion)):
            seed(db.session, db.session.scalars(select(User)).one())
        sentence_id, labels = _first_pool_sentence()
        before = db.session.scalar(select(func.count()).select_from(TreeVersion)) or 0
    version = logged_in.get(f"/api/sentences/{sentence_id}").get_json()["version"]
    response = logged_in.post(f"/api/sentences/{sentence_id}/annotations",
                              json={"heads": heads, "deprels": deprels, "expected_version": version})
    valid = len(heads) == 3 and is_valid(heads, deprels, labels)
    json_types = all(type(h) is int and 0 <= h < 2**31 or h is None for h in heads) and all(
        isinstance(label, str) and len(label) <= 64 or label is None for label in deprels)
    assert response.status_code == (201 if valid else 422), response.get_json()
    if not json_types:
        assert "field" in response.get_json()  # refused by the schema, naming the field
    with app.app_context():
        after = db.session.scalar(select(func.count()).select_from(TreeVersion))
    assert after == before + (1 if valid else 0)
    event("saved" if valid else "refused")


def _first_pool_sentence() -> tuple[int, list[str]]:
    from app.models import Document, Sentence, Treebank

    sentence_id, labels = db.session.execute(
        select(Sentence.id, Treebank.labels).select_from(Sentence)
        .join(Document, Document.id == Sentence.document_id)
        .join(Treebank, Treebank.id == Document.treebank_id)
        .where(Document.split == "pool", Sentence.n_words == 3).order_by(Sentence.id).limit(1)).one()
    return int(sentence_id), list(labels)
