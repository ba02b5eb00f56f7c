"""A round that parsed a sentence before a token edit changed its words stores no tree of the old
words for it (issue #32: every stored tree of a sentence is over its words), and still stores
the others'."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

import app.services.preannotate as preannotate
from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.services.demo import setup_demo
from app.services.parsing_adapter import load_sentences
from app.services.preannotate import TrainedRound, parse_batch
from app.services.token_edits import split_word, token_rows
from app.services.workspace import newest_trees
from parsing.pipeline import load_models
from tests.app.helpers import run_round


def test_a_round_does_not_store_trees_of_words_a_token_edit_replaced(
    app: Flask, session: Session, user: User, fast: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup_demo(session, user=user, sentences=50)  # 30 train, 10 dev, 10 pool
    treebank = session.scalars(select(Treebank)).one()
    first = run_round(app, session, user, treebank, ["graph1", "eager"])
    pool = list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == "pool").order_by(Sentence.id)))
    stale = load_sentences(session, pool)  # what the members read before the edit
    edited = session.get(Sentence, pool[0])
    assert edited is not None
    word = next(i for i, row in enumerate((r for r in token_rows(session, edited.id) if r[0].isdigit()), 1)
                if len(row[1]) >= 2)
    split_word(session, edited, word=word, at=1, user=user)
    session.commit()
    counts = {sid: len(session.scalars(select(TreeVersion.id).where(TreeVersion.sentence_id == sid)).all())
              for sid in pool}
    monkeypatch.setattr(preannotate, "load_sentences", lambda _session, _ids: stale)
    parse_batch(session, TrainedRound(load_models(first.model_dir), list(first.weights)), pool, user=user)
    session.commit()
    for sid in pool:
        total = len(session.scalars(select(TreeVersion.id).where(TreeVersion.sentence_id == sid)).all())
        sentence = session.get(Sentence, sid)
        assert sentence is not None
        assert all(len(tree.heads) == sentence.n_words for tree in newest_trees(session, sid).values())
        assert total == counts[sid] if sid == pool[0] else total > counts[sid], sid
