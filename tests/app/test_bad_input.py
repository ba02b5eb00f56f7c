"""Malformed CoNLL-U is refused with the line and the problem, and nothing is stored."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from flask.testing import FlaskClient, FlaskCliRunner
from markupsafe import escape

from app import MAX_UPLOAD_BYTES

GOOD = "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\tyou\tPRON\t_\t_\t1\tobj\t_\t_\n\n"



def _row(ident: str, form: str, head: str, deprel: str = "dep") -> str:
    return f"{ident}\t{form}\t_\t_\t_\t_\t{head}\t{deprel}\t_\t_\n"


# (case, file bytes, expected line, expected problem text)
CASES = [
    ("wrong column count", GOOD + "1\tHi\tINTJ\t0\troot\n\n", 4,
     "expected 10 tab-separated columns, found 5"),
    ("non-integer head", GOOD + _row("1", "Hi", "x") + "\n", 4, "HEAD 'x' is not an integer"),
    ("head out of range", GOOD + _row("1", "Hi", "7") + "\n", 4,
     "HEAD 7 is out of range (sentence has 1 word)"),
    ("cycle", _row("1", "A", "2") + _row("2", "B", "1") + _row("3", "C", "0", "root") + "\n", 1,
     "the heads form a cycle: 1 -> 2 -> 1"),
    ("duplicate ID", _row("1", "A", "0", "root") + _row("1", "B", "1") + "\n", 2,
     "duplicate word ID 1 (expected 2)"),
    ("bad encoding", GOOD.encode() + _row("1", "g\xe9", "0").encode("latin-1") + b"\n", 4,
     "not UTF-8 (byte 0xe9)"),
    ("empty file", b"", 0, "the input is empty: no sentence found"),
]
IDS = [case[0] for case in CASES]


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


@pytest.mark.parametrize(("case", "data", "line", "problem"), CASES, ids=IDS)
def test_upload_is_refused_with_line_and_problem(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]],
    case: str, data: str | bytes, line: int, problem: str,
) -> None:
    response = logged_in.post("/treebanks/import", data={
        "file": (io.BytesIO(_bytes(data)), "bad.conllu"), "name": "tb", "split": "train",
    }, content_type="multipart/form-data")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "The file was not imported." in page
    expected = f"Line {line}: {problem}" if line else problem
    assert str(escape(expected)) in page
    assert set(row_counts().values()) == {0}


@pytest.mark.parametrize(("case", "data", "line", "problem"), CASES, ids=IDS)
def test_cli_import_is_refused_with_line_and_problem(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
    row_counts: Callable[[], dict[str, int]], case: str, data: str | bytes, line: int, problem: str,
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "bad.conllu"
    path.write_bytes(_bytes(data))
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb"])
    assert result.exit_code == 1
    where = f"bad.conllu, line {line}" if line else "bad.conllu"
    assert f"Error: {where}: {problem}" in result.output
    assert set(row_counts().values()) == {0}


def test_a_bad_sentence_after_good_ones_stores_none_of_them(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "late.conllu"
    path.write_text(GOOD * 500 + "1\tHi\t_\t_\t_\t_\t3\troot\t_\t_\n\n", encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb"])
    assert "late.conllu, line 1501: HEAD 3 is out of range" in result.output
    assert set(row_counts().values()) == {0}


def test_upload_above_50_mb_gets_a_413_page(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]]
) -> None:
    big = GOOD.encode() * (MAX_UPLOAD_BYTES // len(GOOD) + 10)
    response = logged_in.post("/treebanks/import", data={
        "file": (io.BytesIO(big), "big.conllu"), "name": "tb", "split": "train",
    }, content_type="multipart/form-data")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "File too large" in page and "larger than the 50 MB limit" in page
    assert set(row_counts().values()) == {0}


def test_cli_refuses_files_above_the_limit(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "big.conllu"
    with path.open("wb") as handle:
        handle.truncate(MAX_UPLOAD_BYTES + 1)  # sparse: no 50 MB written to disk
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb"])
    assert result.exit_code == 1
    assert "big.conllu: file is larger than the 50 MB limit" in result.output
    assert set(row_counts().values()) == {0}


def test_unknown_split_and_missing_user_are_refused(
    runner: FlaskCliRunner, tmp_path: Path, row_counts: Callable[[], dict[str, int]]
) -> None:
    path = tmp_path / "ok.conllu"
    path.write_text(GOOD, encoding="utf-8")
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb", "--split", "x"])
    assert result.exit_code == 2 and "'x' is not one of" in result.output
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb", "--user", "zoe"])
    assert result.exit_code == 1 and "no user 'zoe'" in result.output
    assert set(row_counts().values()) == {0}
