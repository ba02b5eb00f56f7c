"""Import and export of CoNLL-U: the lossless round trip and tree sources."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import Sentence, Token, Treebank, TreeVersion, User
from app.services.exports import Export, export_conllu, export_treebank
from app.services.imports import detect_direction, guess_language, import_conllu
from app.services.trees import add_version
from app.wording import counted

SMALL = (
    "# sent_id = s1\n# text = Hi there\n"
    "1-2\tHithere\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tHi\thi\tINTJ\t_\t_\t0\troot\t0:root\tSpaceAfter=No\n"
    "2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t1:advmod\t_\n"
    "2.1\tgo\tgo\tVERB\t_\t_\t_\t_\t1:conj\t_\n\n"
    "# sent_id = s2\n"
    "1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\t_\n\n"
)


def _import(session: Session, user: User, text: str | bytes, name: str = "tb",
            split: str = "train", filename: str = "x.conllu") -> Treebank:
    data = text.encode("utf-8") if isinstance(text, str) else text
    result = import_conllu(session, data=data, filename=filename, treebank_name=name,
                           split=split, user=user)
    session.commit()
    return result.treebank


def test_import_keeps_every_line_and_column(session: Session, user: User) -> None:
    treebank = _import(session, user, SMALL)
    tokens = session.scalars(select(Token).order_by(Token.id)).all()
    assert [t.ident for t in tokens] == ["1-2", "1", "2", "2.1", "1"]
    assert [t.word for t in tokens] == [None, 1, 2, None, 1]
    assert tokens[1].misc == "SpaceAfter=No" and tokens[1].deps == "0:root"
    sentences = session.scalars(select(Sentence).order_by(Sentence.position)).all()
    assert sentences[0].sent_id == "s1" and sentences[0].text == "Hi there"
    assert sentences[0].comments == ["# sent_id = s1", "# text = Hi there"]
    assert sentences[0].n_words == 2
    assert treebank.labels == ["advmod", "root"]
    gold = session.scalars(select(TreeVersion).order_by(TreeVersion.id)).all()
    assert [(g.kind, g.heads, g.deprels, g.user_id) for g in gold] == [
        ("gold", [0, 1], ["root", "advmod"], user.id), ("gold", [0], ["root"], user.id)]
    assert export_conllu(session, treebank) == SMALL


def test_second_import_adds_a_document_to_the_same_treebank(session: Session, user: User) -> None:
    treebank = _import(session, user, SMALL, split="train")
    _import(session, user, SMALL.replace("s1", "d1"), split="dev")
    assert [d.split for d in treebank.documents] == ["train", "dev"]
    assert export_conllu(session, treebank, split="dev") == SMALL.replace("s1", "d1")
    assert export_conllu(session, treebank) == SMALL + SMALL.replace("s1", "d1")


def test_export_other_sources_replaces_head_and_deprel(session: Session, user: User) -> None:
    treebank = _import(session, user, SMALL)
    first, second = session.scalars(select(Sentence.id).order_by(Sentence.position)).all()
    add_version(session, sentence_id=first, source="graph2", heads=[2, 0], deprels=["dep", "root"],
                user=user, scores=[0.5, 0.9])
    add_version(session, sentence_id=first, source="latest", heads=[0, 1], deprels=["root", "obj"],
                user=user)
    session.commit()
    parser = export_conllu(session, treebank, source="graph2")
    assert "1\tHi\thi\tINTJ\t_\t_\t2\tdep\t0:root\tSpaceAfter=No\n" in parser
    assert "\tYes\t" not in parser  # no graph2 tree: left out, never written with _ heads
    assert export_treebank(session, treebank, source="graph2").omitted == 1
    assert "1-2\tHithere" in parser and "2.1\tgo" in parser
    latest = export_conllu(session, treebank, source="latest")
    assert "2\tthere\tthere\tADV\t_\t_\t1\tobj\t" in latest
    assert "1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\t_\n" in latest  # falls back to gold


def test_unannotated_sentences_get_no_gold_tree(session: Session, user: User) -> None:
    raw = "1\tHi\t_\t_\t_\t_\t_\t_\t_\t_\n2\tyou\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    treebank = _import(session, user, raw, split="pool")
    assert session.scalars(select(TreeVersion)).all() == []
    assert export_treebank(session, treebank) == Export("", 0, 1)  # no tree: left out of a gold export


def test_direction_and_language_detection() -> None:
    assert detect_direction(["שלום", "עולם", "3"]) == "rtl"
    assert detect_direction(["مرحبا", "بالعالم"]) == "rtl"
    assert detect_direction(["hello", "שלום"]) == "ltr"
    assert guess_language("tr_imst-ud-train.conllu") == "tr"
    assert guess_language("mine.conllu") == ""


def test_rtl_treebank_is_flagged_on_import(session: Session, user: User) -> None:
    text = "1\tשלום\t_\tINTJ\t_\t_\t0\troot\t_\t_\n2\tעולם\t_\tNOUN\t_\t_\t1\tvocative\t_\t_\n\n"
    assert _import(session, user, text, filename="he_htb-ud-dev.conllu").direction == "rtl"
    assert session.scalar(select(Treebank.language)) == "he"


@pytest.mark.slow
def test_round_trip_is_byte_identical_for_every_ud_file(
    session: Session, user: User, ud_dir: Path
) -> None:
    files = sorted(ud_dir.glob("*/*.conllu"))
    assert len(files) == 20, f"expected the 20 UD files in {ud_dir}, found {len(files)}"
    for number, path in enumerate(files):
        data = path.read_bytes()
        treebank = _import(session, user, data, name=f"ud{number}", filename=path.name)
        exported = export_conllu(session, treebank).encode("utf-8")
        assert exported == data, f"{path.name}: export differs from the imported file"


def test_odd_characters_survive_the_round_trip(session: Session, user: User) -> None:
    odd = (
        "# text = \\N back\\slash\n"
        "1\t\\N\t\\\\\tSYM\t_\t_\t0\troot\t_\tNote=a\\tb\n"
        "2\tq\"uote'\t<b>\tX\t_\t_\t1\tdep\t_\tSpacesAfter=\\s\\n\n\n"
    )
    treebank = _import(session, user, odd)
    assert export_conllu(session, treebank) == odd
    assert session.scalars(select(Token.form).order_by(Token.id)).all() == ["\\N", "q\"uote'"]


def test_cli_import_then_export(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path
) -> None:
    make_user("admin", admin=True)
    source = tmp_path / "tr_demo-ud-train.conllu"
    source.write_text(SMALL, encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(source), "--name", "Mini",
                                 "--split", "dev"])
    assert result.exit_code == 0, result.output
    assert "Imported 2 sentences (3 words, 2 trees) into Mini [dev]." in result.output
    out = tmp_path / "out.conllu"
    result = runner.invoke(args=["treebank", "export", "Mini", "--source", "gold",
                                 "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == source.read_bytes()
    latest = runner.invoke(args=["treebank", "export", "Mini", "--source", "latest"])
    assert latest.output == SMALL  # no correction yet: the gold trees
    missing = runner.invoke(args=["treebank", "export", "Nope"])
    assert missing.exit_code == 1 and "no treebank called 'Nope'" in missing.output


def test_demo_setup_is_idempotent(
    app: Flask, runner: FlaskCliRunner, make_user: Callable[..., int]
) -> None:
    make_user("admin", admin=True)
    first = runner.invoke(args=["demo", "setup", "--sentences", "50", "--test-sentences", "5"])
    assert first.exit_code == 0, first.output
    assert "train 30, dev 10, pool 10, test 5 sentences" in first.output
    second = runner.invoke(args=["demo", "setup", "--sentences", "50"])
    assert "already imported" in second.output
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        assert (treebank.language, treebank.direction) == ("tr", "ltr")
        assert [d.split for d in treebank.documents] == ["train", "dev", "pool", "test"]
        assert db.session.scalar(select(func.count()).select_from(TreeVersion)) == 45


def test_one_sentence_is_counted_in_the_singular(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path, logged_in: FlaskClient,
) -> None:
    """Issue #30: "Imported 1 sentences" (CLI, web flash, sentence list, export)."""
    make_user("admin", admin=True)
    one = SMALL.split("\n\n")[0] + "\n\n"
    source = tmp_path / "one.conllu"
    source.write_text(one, encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(source), "--name", "One", "--split", "dev"])
    assert "Imported 1 sentence (2 words, 1 tree) into One [dev]." in result.output
    wrote = runner.invoke(args=["treebank", "export", "One", "--output", str(tmp_path / "out.conllu")])
    assert "Wrote 1 sentence to " in wrote.stderr
    reply = logged_in.post("/treebanks/import", data={
        "file": (io.BytesIO(b"# text = Hi\n1\tHi\t_\tINTJ\t_\t_\t_\t_\t_\t_\n\n"), "hi.conllu"), "name": "Hi",
        "split": "pool"}, content_type="multipart/form-data", follow_redirects=True)
    page = reply.get_data(as_text=True)
    assert "Imported 1 sentence (1 word) into Hi (pool)." in page
    assert "1 sentence · 1 word" in page and ">1 word</span>" in page
    assert counted(1, "sentence") == "1 sentence" and counted(0, "tree") == "0 trees"
    assert counted(12345, "word") == "12,345 words" and counted(2, "child", "children") == "2 children"
