"""A sentence has at most 500 words: a longer one is refused on import, naming it, and nothing of
the file is stored."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from flask.testing import FlaskClient, FlaskCliRunner
from markupsafe import escape

from app.services.imports import MAX_SENTENCE_WORDS


def _sentence(sent_id: str, n: int) -> str:
    rows = [f"{i}\tw{i}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_"
            for i in range(1, n + 1)]
    return f"# sent_id = {sent_id}\n" + "\n".join(rows) + "\n\n"


def _upload(client: FlaskClient, data: bytes, name: str = "x.conllu", file_format: str = "conllu") -> str:
    response = client.post("/treebanks/import", data={
        "file": (io.BytesIO(data), name), "name": "tb", "split": "pool", "file_format": file_format,
    }, content_type="multipart/form-data")
    return f"{response.status_code} {response.get_data(as_text=True)}"


def test_a_sentence_of_500_words_is_imported(logged_in: FlaskClient) -> None:
    data = (_sentence("short", 3) + _sentence("longest", MAX_SENTENCE_WORDS)).encode()
    assert _upload(logged_in, data).startswith("302")


def test_a_longer_sentence_is_refused_naming_it(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]]
) -> None:
    first = _sentence("short", 3)
    data = (first + _sentence("too-long", 10_000)).encode()
    answer = _upload(logged_in, data)
    line = first.count("\n") + 1
    expected = (f"Line {line}: sentence too-long has 10,000 words; a sentence may have at most 500 "
                "(split it into shorter sentences)")
    assert answer.startswith("422") and str(escape(expected)) in answer
    assert set(row_counts().values()) == {0}


def test_plain_text_sentences_are_limited_too(
    logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]]
) -> None:
    text = ("Fine. " + "word " * 600).encode()  # one line: 602 words
    answer = _upload(logged_in, text, name="essay.txt", file_format="lines")
    assert answer.startswith("422") and "sentence essay-1 has 602 words" in answer
    assert set(row_counts().values()) == {0}


def test_the_cli_refuses_it_too(
    runner: FlaskCliRunner, make_user: Callable[..., int], tmp_path: Path,
    row_counts: Callable[[], dict[str, int]],
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "long.conllu"
    path.write_text(_sentence("too-long", 501))
    result = runner.invoke(args=["treebank", "import", str(path), "--name", "tb", "--split", "pool"])
    assert result.exit_code == 1
    assert "long.conllu, line 1: sentence too-long has 501 words" in result.output
    assert set(row_counts().values()) == {0}
