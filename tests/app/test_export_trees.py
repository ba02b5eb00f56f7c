"""Exports that never lie: no ``_`` heads, reviewed-only, and the tags parsers actually used."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import Document, Sentence, SentenceState, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.demo import setup_demo
from app.services.exports import export_treebank, missing_trees
from app.services.imports import import_conllu, import_text
from app.services.parsing_adapter import load_sentences
from app.services.trees import add_version
from app.services.workspace import editor_data
from parsing.conllu_io import UPOS, parse_conllu
from parsing.pipeline import load_models
from tests.app.helpers import run_preannotate

TRAIN = ("# sent_id = t1\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\tyou\tPRON\t_\t_\t1\tobj\t_\t_\n\n"
         "# sent_id = t2\n1\tGo\tgo\tVERB\t_\t_\t0\troot\t_\t_\n\n")
POOL = ("# sent_id = p1\n1\tYes\t_\tINTJ\t_\t_\t_\t_\t_\t_\n\n"
        "# sent_id = p2\n1\tNo\t_\tINTJ\t_\t_\t_\t_\t_\t_\n2\tway\t_\tNOUN\t_\t_\t_\t_\t_\t_\n\n"
        "# sent_id = p3\n1\tMaybe\tmaybe\tADV\t_\t_\t0\troot\t_\t_\n\n")


def _seed(session: DbSession, user: User) -> dict[str, int]:
    """Two train trees, three pool sentences (p3 imported with a tree); sent_id -> id."""
    import_conllu(session, data=TRAIN.encode(), filename="t.conllu", treebank_name="tb", split="train",
                  user=user)
    import_conllu(session, data=POOL.encode(), filename="p.conllu", treebank_name="tb", split="pool",
                  user=user)
    ids = {str(s): i for s, i in session.execute(select(Sentence.sent_id, Sentence.id))}
    add_version(session, sentence_id=ids["p1"], source="ensemble", heads=[0], deprels=["root"], user=user)
    add_version(session, sentence_id=ids["p2"], source="ensemble", heads=[0, 1], deprels=["root", "dep"],
                user=user)
    add_version(session, sentence_id=ids["p2"], source="latest", heads=[2, 0], deprels=["discourse", "root"],
                user=user)
    session.add(SentenceState(sentence_id=ids["p2"], status="reviewed", reviewed_words=[1, 2]))
    session.add(SentenceState(sentence_id=ids["p1"], status="in_progress", reviewed_words=[]))
    session.commit()
    return ids


def _sent_ids(text: str) -> list[str | None]:
    return [sentence.sent_id for sentence in parse_conllu(text)] if text else []


def test_sentences_without_a_tree_are_left_out_and_counted(session: Session, user: User) -> None:
    _seed(session, user)
    treebank = session.scalars(select(Treebank)).one()
    gold = export_treebank(session, treebank)
    assert (_sent_ids(gold.text), gold.omitted) == (["t1", "t2", "p3"], 2)
    ensemble = export_treebank(session, treebank, source="ensemble", split="pool")
    assert (_sent_ids(ensemble.text), ensemble.omitted) == (["p1", "p2"], 1)
    assert all(word[6] != "_" for s in parse_conllu(ensemble.text) for word in s.words)
    latest = export_treebank(session, treebank, source="latest")
    assert (_sent_ids(latest.text), latest.omitted) == (["t1", "t2", "p2", "p3"], 1)
    assert export_treebank(session, treebank, source="graph1") == type(gold)("", 0, 5)


def test_reviewed_only_keeps_reviewed_sentences_and_imported_gold_of_train_dev_test(
    session: Session, user: User,
) -> None:
    _seed(session, user)
    treebank = session.scalars(select(Treebank)).one()
    latest = export_treebank(session, treebank, source="latest", reviewed_only=True)
    assert (_sent_ids(latest.text), latest.omitted) == (["t1", "t2", "p2"], 0)
    assert "1\tNo\t_\tINTJ\t_\t_\t2\tdiscourse\t" in latest.text  # the reviewed correction
    ensemble = export_treebank(session, treebank, source="ensemble", reviewed_only=True)
    assert (_sent_ids(ensemble.text), ensemble.omitted) == (["p2"], 2)  # train has no ensemble tree
    gold = export_treebank(session, treebank, reviewed_only=True, split="pool")
    assert (gold.text, gold.omitted) == ("", 1)  # p2 reviewed but without a gold tree; p3 unreviewed


def test_cli_export_reports_what_it_left_out(
    app: Flask, runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
) -> None:
    make_user("admin", admin=True)
    with app.app_context():
        from app.extensions import db

        admin = db.session.scalars(select(User)).one()
        _seed(db.session, admin)
    out = tmp_path / "pool.conllu"
    result = runner.invoke(args=["treebank", "export", "tb", "--source", "ensemble", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 sentences without a tree from ensemble left out." in result.stderr
    assert _sent_ids(out.read_text(encoding="utf-8")) == ["p1", "p2"]
    reviewed = runner.invoke(args=["treebank", "export", "tb", "--source", "latest", "--reviewed-only"])
    assert _sent_ids(reviewed.stdout) == ["t1", "t2", "p2"] and "left out" not in reviewed.stderr


def test_web_export_sends_the_omitted_count(app: Flask, logged_in: FlaskClient) -> None:
    with app.app_context():
        from app.extensions import db

        ana = db.session.scalars(select(User)).one()
        _seed(db.session, ana)
        treebank_id = db.session.scalar(select(Treebank.id))
    response = logged_in.get(f"/treebanks/{treebank_id}/export?source=ensemble")
    assert response.status_code == 200 and response.headers["X-Arcvote-Omitted"] == "3"
    assert _sent_ids(response.get_data(as_text=True)) == ["p1", "p2"]
    reviewed = logged_in.get(f"/treebanks/{treebank_id}/export?source=ensemble&reviewed_only=1")
    assert _sent_ids(reviewed.get_data(as_text=True)) == ["p2"]
    assert reviewed.headers["X-Arcvote-Omitted"] == "2"
    assert "-reviewed.conllu" in reviewed.headers["Content-Disposition"]
    page = logged_in.get(f"/treebanks/{treebank_id}/sentences").get_data(as_text=True)
    assert 'name="reviewed_only"' in page
    # the page says what an export leaves out before the download (not only the header)
    note = page[page.index('id="export-omitted"'):].split("</p>")[0]
    said = {source: " ".join(text.split()) for source, text in
            re.findall(r'<span data-source="([\w-]+)">(.*?)</span>', note, flags=re.S)}
    assert said == {"gold": "gold: 2 sentences", "latest": "latest correction: 1 sentence",
                    "ensemble": "ensemble: 3 sentences"}


def test_missing_trees_counts_what_each_export_leaves_out(session: Session, user: User) -> None:
    _seed(session, user)
    treebank = session.scalars(select(Treebank)).one()
    sources = ["gold", "latest", "ensemble", "graph1"]
    assert missing_trees(session, treebank, sources) == {
        source: export_treebank(session, treebank, source=source).omitted for source in sources}
    with pytest.raises(ValueError, match="source"):
        missing_trees(session, treebank, ["nobody"])


def _demo_with_raw_text(session: Session, user: User) -> int:
    """The demo's first 50 sentences plus two sentences of raw Turkish text in the pool."""
    setup_demo(session, user=user, sentences=50)
    treebank = session.scalars(select(Treebank)).one()
    import_text(session, data="Bu kitap çok güzel. Ben de okudum!".encode(), filename="raw.txt",
                treebank_name=treebank.name, user=user)
    session.commit()
    return treebank.id


def _run(app: Flask, session: Session, user: User, treebank_id: int, tags: str,
         parsers: Sequence[str] = ("graph1", "eager")) -> Job:
    return run_preannotate(app, session, user, treebank_id, {"parsers": list(parsers), "tags": tags})


def test_predicted_round_stores_exports_and_shows_the_tags_it_parsed_with(
    app: Flask, session: Session, user: User, fast: Path,
) -> None:
    treebank_id = _demo_with_raw_text(session, user)
    done = _run(app, session, user, treebank_id, "predicted")
    assert done.state == "done", done.error
    raw_ids = list(session.scalars(select(Sentence.id).join(Document).where(Document.name == "raw.txt")
                                   .order_by(Sentence.position)))
    bundle = load_models(session.scalars(select(TrainingRound)).one().model_dir)
    expected = [s.upos[1:] for s in bundle.prepare(load_sentences(session, raw_ids))]
    for sentence_id, tags in zip(raw_ids, expected, strict=True):
        versions = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id)).all()
        assert sorted(v.source for v in versions) == ["eager", "ensemble", "graph1"]
        assert all(v.upos == tags for v in versions)
    treebank = session.get(Treebank, treebank_id)
    assert treebank is not None
    export = export_treebank(session, treebank, source="ensemble", split="pool")
    written = {s.sent_id: [w[UPOS] for w in s.words] for s in parse_conllu(export.text)}
    assert [written["raw-1"], written["raw-2"]] == expected
    assert all(tag != "_" for tags in written.values() for tag in tags)
    sentence = session.get(Sentence, raw_ids[0])
    assert sentence is not None
    words = editor_data(session, sentence)["words"]
    assert [w["upos"] for w in words] == expected[0] and all(w["upos_predicted"] for w in words)


def test_gold_round_refuses_untagged_sentences_and_stores_no_tags(
    app: Flask, session: Session, user: User, fast: Path,
) -> None:
    treebank_id = _demo_with_raw_text(session, user)
    refused = _run(app, session, user, treebank_id, "gold")
    assert refused.state == "failed"
    assert "2 of the 12 sentences to parse have words without UPOS (e.g. raw-1)" in (refused.error or "")
    assert "predicted tags" in (refused.error or "")
    assert session.scalars(select(TreeVersion).where(TreeVersion.kind != "gold")).all() == []
    raw = session.scalars(select(Document).where(Document.name == "raw.txt")).one()
    session.delete(raw)
    session.commit()
    done = _run(app, session, user, treebank_id, "gold")
    assert done.state == "done", done.error
    parsed = session.scalars(select(TreeVersion).where(TreeVersion.kind != "gold")).all()
    assert parsed and all(version.upos is None for version in parsed)
