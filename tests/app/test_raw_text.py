"""Raw text and tree-less CoNLL-U go into the pool; the other splits need trees."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from markupsafe import escape
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import Document, Sentence, Token, TreeVersion, User
from app.services.exports import export_treebank
from app.services.imports import import_conllu, import_text
from parsing.conllu_io import parse_conllu
from parsing.members import missing_requirement

TEXT = "Dr. Ada ate 3.5 apples, didn't she?  “Yes!” she said.\n\nA heading\n\nSee www.ud.org now."
TREE = "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\tyou\tPRON\t_\t_\t1\tobj\t_\t_\n\n"
NO_TREE = ("1\tHo\t_\t_\t_\t_\t_\t_\t_\t_\n2\thum\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
           "3\t.\t_\t_\t_\t_\t_\t_\t_\t_\n\n")


def _pool_sentences(app: Flask) -> list[tuple[str, str, int]]:
    with app.app_context():
        return [tuple(row) for row in db.session.execute(  # type: ignore[misc]
            select(Sentence.sent_id, Sentence.text, Sentence.n_words).join(Document)
            .where(Document.split == "pool").order_by(Document.position, Sentence.position))]


def _rebuilt(session: Session, sentence_id: int) -> str:
    tokens = session.scalars(select(Token).where(Token.sentence_id == sentence_id).order_by(Token.position))
    return "".join(t.form + ("" if "SpaceAfter=No" in t.misc else " ") for t in tokens).rstrip()


def test_text_is_tokenized_into_the_pool_keeping_its_text(session: Session, user: User) -> None:
    result = import_text(session, data=TEXT.encode(), filename="notes.txt", treebank_name="tb", user=user)
    session.commit()
    assert (result.document.split, result.sentences, result.trees) == ("pool", 5, 0)
    sentences = session.scalars(select(Sentence).order_by(Sentence.position)).all()
    assert [s.text for s in sentences] == [
        "Dr.", "Ada ate 3.5 apples, didn't she?", "“Yes!” she said.", "A heading", "See www.ud.org now."]
    assert [s.sent_id for s in sentences] == [f"notes-{k}" for k in range(1, 6)]
    assert all(_rebuilt(session, s.id) == s.text for s in sentences)
    forms = session.scalars(select(Token.form).where(Token.sentence_id == sentences[1].id)
                            .order_by(Token.position)).all()
    assert forms == ["Ada", "ate", "3.5", "apples", ",", "didn't", "she", "?"]
    assert session.scalars(select(TreeVersion)).all() == []
    assert sentences[1].n_words == 8 and sentences[1].comments[1] == f"# text = {sentences[1].text}"


def test_text_one_sentence_per_line_and_refused_outside_the_pool(session: Session, user: User) -> None:
    result = import_text(session, data=b"one. two\nthree\n\n", filename="l.txt", treebank_name="tb",
                         user=user, one_per_line=True)
    assert result.sentences == 2
    session.rollback()
    try:
        import_text(session, data=b"Hello.", filename="l.txt", treebank_name="tb", user=user, split="train")
    except ValueError as error:
        assert "pool" in str(error) and "train" in str(error)
    else:
        raise AssertionError("text imported into train")


def test_cli_imports_text_into_the_pool(
    app: Flask, runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "raw.txt"
    path.write_text("First line here\nSecond, line.\n", encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "Raw", "--format", "text",
                                 "--one-per-line"])
    assert result.exit_code == 0, result.output
    assert "Imported 2 sentences (7 words, 0 trees) into Raw [pool]." in result.output
    assert _pool_sentences(app) == [("raw-1", "First line here", 3), ("raw-2", "Second, line.", 4)]
    refused = runner.invoke(args=["treebank", "import", str(path), "--name", "Raw", "--format", "text",
                                  "--split", "dev"])
    assert refused.exit_code == 1 and "goes into the pool split, not dev" in refused.output


def test_control_character_is_refused_with_its_line(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "bad.txt"
    path.write_text("Fine.\nAlso fine.\nNot \x07 fine.\n", encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "Raw", "--format", "text"])
    assert result.exit_code == 1
    assert "bad.txt, line 3: control character U+0007" in result.output
    assert set(row_counts().values()) == {0}


def test_pasted_text_is_imported_through_the_form(app: Flask, logged_in: FlaskClient) -> None:
    response = logged_in.post("/treebanks/import", data={
        "text": "Ọ̀rọ̀ kan. Ọ̀rọ̀ méjì!", "file_format": "text", "name": "Pasted", "split": "pool",
    }, content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)
    assert [text for _, text, _ in _pool_sentences(app)] == ["Ọ̀rọ̀ kan.", "Ọ̀rọ̀ méjì!"]
    page = logged_in.get(response.headers["Location"]).get_data(as_text=True)
    assert "Ọ̀rọ̀ méjì!" in page and "pasted-2" in page


def test_uploaded_text_file_one_per_line(app: Flask, logged_in: FlaskClient) -> None:
    response = logged_in.post("/treebanks/import", data={
        "file": (io.BytesIO(b"a b. c\nd\n"), "lines.txt"), "file_format": "lines",
        "name": "Lines", "split": "pool",
    }, content_type="multipart/form-data")
    assert response.status_code == 302
    assert [text for _, text, _ in _pool_sentences(app)] == ["a b. c", "d"]


def test_form_refuses_text_outside_the_pool_and_an_empty_form(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]],
) -> None:
    response = logged_in.post("/treebanks/import", data={
        "text": "Hello there.", "file_format": "text", "name": "X", "split": "train",
    }, content_type="multipart/form-data")
    assert response.status_code == 422
    assert "goes into the pool split, not train" in response.get_data(as_text=True)
    empty = logged_in.post("/treebanks/import", data={"name": "X", "split": "pool", "text": "  "},
                           content_type="multipart/form-data")
    assert empty.status_code == 400 and "Choose a file or paste text." in empty.get_data(as_text=True)
    assert set(row_counts().values()) == {0}


def test_conllu_without_trees_is_refused_outside_the_pool(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]],
) -> None:
    for split in ("train", "dev", "test"):
        response = logged_in.post("/treebanks/import", data={
            "file": (io.BytesIO((TREE + "# sent_id = x\n" + NO_TREE).encode()), "m.conllu"),
            "name": "tb", "split": split}, content_type="multipart/form-data")
        assert response.status_code == 422
        problem = (f"Line 5: this sentence has no tree (HEAD is _): the {split} split needs trees; "
                   "import sentences without trees into the pool")
        assert str(escape(problem)) in response.get_data(as_text=True)
    assert set(row_counts().values()) == {0}


def test_pool_takes_conllu_mixing_trees_and_none(session: Session, user: User) -> None:
    result = import_conllu(session, data=(TREE + NO_TREE + TREE).encode(), filename="m.conllu",
                           treebank_name="tb", split="pool", user=user)
    session.commit()
    assert (result.sentences, result.trees) == (3, 2)
    export = export_treebank(session, result.treebank)
    assert export.omitted == 1 and export.text == TREE + TREE
    assert [s.words[0][1] for s in parse_conllu(export.text)] == ["Hi", "Hi"]


def test_queue_form_defaults_to_predicted_tags_for_untagged_pool(
    app: Flask, logged_in: FlaskClient,
) -> None:
    logged_in.post("/treebanks/import", data={"file": (io.BytesIO(TREE.encode()), "t.conllu"),
                                               "name": "tb", "split": "train"},
                   content_type="multipart/form-data")
    with app.app_context():
        treebank_id = db.session.scalar(select(Document.treebank_id))
    tagged = logged_in.get(f"/workspace/treebanks/{treebank_id}").get_data(as_text=True)
    assert '<option value="predicted">predicted' in tagged
    logged_in.post("/treebanks/import", data={"text": "Raw words here.", "file_format": "text",
                                               "name": "tb", "split": "pool"},
                   content_type="multipart/form-data")
    untagged = logged_in.get(f"/workspace/treebanks/{treebank_id}").get_data(as_text=True)
    assert '<option value="predicted" selected>predicted' in untagged
    neural = '<input type="checkbox" name="parsers" value="biaffine" checked>'
    transition = '<input type="checkbox" name="parsers" value="lstm-hybrid" checked>'
    if missing_requirement("biaffine") is None:  # biaffine a default in both; lstm-hybrid with predicted
        assert neural in untagged and neural in tagged
        assert transition in untagged and transition not in tagged
        assert '<input type="checkbox" name="parsers" value="graph1" checked>' in untagged


def test_text_over_the_size_limit_stores_nothing(
    session: Session, user: User, row_counts: Callable[[], dict[str, int]],
) -> None:
    from parsing.conllu_io import ConlluError

    try:
        import_text(session, data=b"Far too long. " * 10, filename="big.txt", treebank_name="tb", user=user,
                    max_bytes=100)
    except ConlluError as error:
        assert "file is larger than the" in str(error) and error.source == "big.txt"
    else:
        raise AssertionError("oversized text imported")
    session.rollback()
    assert set(row_counts().values()) == {0}
