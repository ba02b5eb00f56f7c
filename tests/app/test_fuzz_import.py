"""Property tests of the CoNLL-U importer (hypothesis): whatever the bytes, an import either
stores every sentence (and exports them back byte for byte) or raises a ConlluError/ValueError
that names the problem (and its line), having written nothing. Never another exception."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from flask import Flask
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import Document, Sentence, Token, Treebank, TreeVersion, User
from app.services.exports import export_conllu
from app.services.imports import import_conllu
from parsing.conllu_io import ConlluError

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Pieces CoNLL-U is made of, and pieces that break it.
PIECES = ["\t", "\n", "\n\n", "_", "#", " ", "-", ".", "0", "1", "2", "3", "10", "root", "nsubj",
          "obj", "x", "ş", "ال", "\r", "\x00", "\ufeff", "# sent_id = s", "# text = a b", "1-2", "2.1"]


def _word(i: int, head: str, deprel: str) -> str:
    return f"{i}\tw{i}\t_\tNOUN\t_\t_\t{head}\t{deprel}\t_\t_"


def _joined(most: int) -> st.SearchStrategy[str]:
    """Up to ``most`` pieces of :data:`PIECES`, joined."""
    return st.lists(st.sampled_from(PIECES), max_size=most).map("".join)


@st.composite
def valid_conllu(draw: st.DrawFn) -> str:
    """One to three sentences with well-formed trees (each word attached to an earlier word or ROOT)."""
    sentences = []
    for s in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        root = draw(st.integers(1, n))
        rows = [f"# sent_id = s{s}"]
        for i in range(1, n + 1):
            if i == root:
                rows.append(_word(i, "0", "root"))
            else:
                head = draw(st.sampled_from([w for w in range(1, i) if w != i] or [root])) if i > 1 else root
                rows.append(_word(i, str(head), draw(st.sampled_from(["nsubj", "obj", "dep", "amod"]))))
        sentences.append("\n".join(rows) + "\n\n")
    return "".join(sentences)


@st.composite
def mutated_conllu(draw: st.DrawFn) -> str:
    """A valid file with a few lines changed: a column dropped, a field replaced, a line inserted."""
    lines = draw(valid_conllu()).split("\n")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["drop-column", "field", "insert", "delete", "join"]))
        columns = lines[at].split("\t")
        if kind == "drop-column" and len(columns) > 1:
            columns.pop(draw(st.integers(0, len(columns) - 1)))
            lines[at] = "\t".join(columns)
        elif kind == "field":
            replaced = draw(st.integers(0, len(columns) - 1))
            columns[replaced] = draw(st.sampled_from([*PIECES, "99", "-1", "abc"]))
            lines[at] = "\t".join(columns)
        elif kind == "insert":
            lines.insert(at, draw(_joined(6)))
        elif kind == "delete":
            lines.pop(at)
        else:
            lines[at] = lines[at] + draw(st.sampled_from(PIECES))
    return "\n".join(lines)


ANY_INPUT = st.one_of(
    valid_conllu().map(str.encode),
    mutated_conllu().map(str.encode),
    _joined(40).map(str.encode),
    st.binary(max_size=60),
)


@pytest.fixture
def fuzz_session(app: Flask) -> Iterator[tuple[Session, User]]:
    """A session and a flushed user; everything is rolled back afterwards."""
    with app.app_context():
        user = User(username="fuzzer", password_hash="x")
        db.session.add(user)
        db.session.flush()
        yield db.session(), user
        db.session.rollback()


def _rows(session: Session) -> dict[str, int]:
    return {model.__tablename__: session.scalar(select(func.count()).select_from(model)) or 0
            for model in (Treebank, Document, Sentence, Token, TreeVersion)}


@FUZZ
@given(data=ANY_INPUT, split=st.sampled_from(["train", "pool"]))
def test_an_import_stores_all_or_nothing_and_explains_why(
    fuzz_session: tuple[Session, User], data: bytes, split: str
) -> None:
    session, user = fuzz_session
    savepoint = session.begin_nested()
    before = _rows(session)
    try:
        result = import_conllu(session, data=data, filename="fuzz.conllu", treebank_name="fuzz",
                               split=split, user=user)
    except ConlluError as error:
        event("refused")
        assert _rows(session) == before, "a refused file wrote rows"
        assert error.problem and "Traceback" not in str(error)
        assert str(error).startswith("fuzz.conllu" + (f", line {error.line}: " if error.line else ": "))
        assert 0 <= error.line <= data.count(b"\n") + 1
    else:
        event(f"imported into {split}")
        after = _rows(session)
        assert after["sentences"] - before["sentences"] == result.sentences > 0
        text = data.decode("utf-8")
        exported = export_conllu(session, result.treebank, source="gold")
        if split == "train":  # every sentence has a tree: the export is the file itself
            assert exported == _normalised(text)
    finally:
        savepoint.rollback()


def _normalised(text: str) -> str:
    """The file as format_conllu writes it back: one blank line after each sentence."""
    body = re.sub(r"\n\n+", "\n\n", text.lstrip("\n")).rstrip("\n")
    return body + "\n\n" if body else ""


@FUZZ
@given(data=valid_conllu())
def test_valid_files_round_trip(fuzz_session: tuple[Session, User], data: str) -> None:
    session, user = fuzz_session
    savepoint = session.begin_nested()
    try:
        result = import_conllu(session, data=data.encode(), filename="ok.conllu", treebank_name="ok",
                               split="train", user=user)
        assert export_conllu(session, result.treebank, source="gold") == data
    finally:
        savepoint.rollback()
