"""Raw text gets every column (issue #33): a predicted-tag round with the self-tagging ``biaffine``
member stores its XPOS, lemmas and FEATS beside its tree and the ensemble's; the editor shows them
where the imported word has ``_``, a save keeps them, and exports write them."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.services.exports import export_treebank
from app.services.token_columns import value_problem
from app.services.workspace import editor_data, save_annotation
from parsing.conllu_io import FEATS, LEMMA, UPOS, XPOS, parse_conllu
from tests.app.test_export_trees import _demo_with_raw_text, _run

pytest.importorskip("torch")


def newest(session: Session, sentence_id: int, kind: str, name: str = "") -> TreeVersion:
    version = session.scalars(select(TreeVersion).where(
        TreeVersion.sentence_id == sentence_id, TreeVersion.kind == kind, TreeVersion.name == name)
        .order_by(TreeVersion.version.desc())).first()
    assert version is not None, (kind, name)
    return version


def raw_sentences(session: Session) -> list[Sentence]:
    return list(session.scalars(select(Sentence).join(Document).where(Document.name == "raw.txt")
                                .order_by(Sentence.position)))


@pytest.fixture
def parsed(app: Flask, session: Session, user: User, fast: Path) -> list[Sentence]:
    """The demo with two raw sentences in its pool, pre-annotated by graph1 and biaffine (predicted tags)."""
    treebank_id = _demo_with_raw_text(session, user)
    done = _run(app, session, user, treebank_id, "predicted", parsers=["graph1", "biaffine"])
    assert done.state == "done", done.error
    return raw_sentences(session)


def test_the_self_tagging_member_and_the_ensemble_keep_its_columns(
        session: Session, parsed: list[Sentence]) -> None:
    for sentence in parsed:
        n = sentence.n_words
        member = newest(session, sentence.id, "parser", "biaffine")
        ensemble = newest(session, sentence.id, "ensemble")
        assert newest(session, sentence.id, "parser", "graph1").lemmas is None  # it predicts none
        for version in (member, ensemble):
            stored = {"xpos": version.xpos, "lemma": version.lemmas, "feats": version.feats}
            for column, values in stored.items():
                assert values is not None and len(values) == n, column
                assert all(value_problem(column, value) is None for value in values), (column, values)
        assert member.lemmas == ensemble.lemmas  # the only member that predicts them
        assert member.upos is not None and ensemble.upos is not None
        pairs = list(zip(ensemble.xpos or [], ensemble.feats or [], strict=True))
        own = list(zip(member.xpos or [], member.feats or [], strict=True))
        for word in range(n):  # XPOS and FEATS describe the member's tag: kept where the ensemble's agrees
            assert pairs[word] == (own[word] if member.upos[word] == ensemble.upos[word] else ("_", "_"))
    lemmatised = [lemma for sentence in parsed
                  for lemma in newest(session, sentence.id, "ensemble").lemmas or []]
    assert any(lemma != "_" for lemma in lemmatised)


def test_the_editor_shows_them_a_save_keeps_them_and_exports_write_them(
        session: Session, user: User, parsed: list[Sentence]) -> None:
    sentence = parsed[0]
    ensemble = newest(session, sentence.id, "ensemble")
    data = editor_data(session, sentence)
    shown = data["current"]["columns"]
    assert shown["lemma"] == ensemble.lemmas and shown["xpos"] == ensemble.xpos
    assert shown["feats"] == ensemble.feats
    for word, lemma in zip(data["words"], ensemble.lemmas or [], strict=True):
        assert word["lemma"] == lemma and ("lemma" in word["predicted"]) == (lemma != "_")

    saved = save_annotation(session, sentence, heads=ensemble.heads, deprels=ensemble.deprels,
                            expected_version=0, user=user, columns=shown)  # no edit: what was shown
    session.commit()
    assert saved.created and editor_data(session, sentence)["current"]["columns"] == shown
    assert saved.tree.lemmas == (None if all(v == "_" for v in shown["lemma"]) else shown["lemma"])

    treebank = session.scalars(select(Treebank)).one()
    for source in ("ensemble", "latest"):
        written = {s.sent_id: s for s in parse_conllu(export_treebank(session, treebank, source=source,
                                                                      split="pool").text)}
        words = written[sentence.sent_id].words
        assert [w[LEMMA] for w in words] == shown["lemma"], source
        assert [w[XPOS] for w in words] == shown["xpos"] and [w[FEATS] for w in words] == shown["feats"]
        assert [w[UPOS] for w in words] == shown["upos"]


def test_search_reads_what_the_editor_shows(session: Session, user: User, parsed: list[Sentence]) -> None:
    """A pattern over the ensemble's trees finds raw text by its predicted UPOS and lemma, and over
    the latest trees once an annotator saved what was shown; the gold trees have no such words."""
    from app.services.search import search_treebank

    treebank = session.scalars(select(Treebank)).one()
    sentence = parsed[0]
    shown = editor_data(session, sentence)["current"]["columns"]
    word = next(i for i, lemma in enumerate(shown["lemma"]) if lemma != "_")
    pattern = f'pattern {{ N [upos={shown["upos"][word]}, lemma="{shown["lemma"][word]}"] }}'

    def found(source: str) -> bool:
        hits = search_treebank(session, treebank, pattern, source=source).hits
        return any(hit.sentence_id == sentence.id and hit.nodes["N"] == word + 1 for hit in hits)

    assert found("ensemble") and not found("gold") and not found("latest")  # no latest tree yet
    ensemble = newest(session, sentence.id, "ensemble")
    save_annotation(session, sentence, heads=ensemble.heads, deprels=ensemble.deprels, expected_version=0,
                    user=user, columns=shown)
    session.commit()
    assert found("latest")
