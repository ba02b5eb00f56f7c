"""Treebank list, sentence search, the sentence page and the browser export."""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import Sentence, Treebank

EVIL = "<script>alert(1)</script>"


def _sentence(sent_id: str, words: list[tuple[str, str, str, int, str]]) -> str:
    lines = [f"# sent_id = {sent_id}", "# text = " + " ".join(w[0] for w in words)]
    for number, (form, lemma, upos, head, deprel) in enumerate(words, start=1):
        lines.append(f"{number}\t{form}\t{lemma}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n\n"


TEXT = (
    _sentence("a-1", [("Dogs", "dog", "NOUN", 2, "nsubj"), ("bark", "bark", "VERB", 0, "root")])
    + _sentence("a-2", [("Cats", "cat", "NOUN", 2, "nsubj"), ("sleep", "sleep", "VERB", 0, "root")])
    + _sentence("b-1", [(EVIL, "x", "X", 0, "root")])
)


def _upload(client: FlaskClient, text: str, name: str = "Demo", split: str = "train") -> None:
    response = client.post("/treebanks/import", data={
        "file": (io.BytesIO(text.encode()), "demo.conllu"), "name": name, "split": split,
    }, content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)


def _treebank_id(app: Flask, name: str = "Demo") -> int:
    with app.app_context():
        return db.session.scalars(select(Treebank.id).where(Treebank.name == name)).one()


def _sentence_id(app: Flask, sent_id: str) -> int:
    with app.app_context():
        return db.session.scalars(select(Sentence.id).where(Sentence.sent_id == sent_id)).one()


def test_treebank_list_shows_counts(app: Flask, logged_in: FlaskClient) -> None:
    assert "You are not a member of any treebank yet" in logged_in.get("/").get_data(as_text=True)
    _upload(logged_in, TEXT)
    _upload(logged_in, TEXT.replace("a-", "d-").replace("b-", "e-"), split="dev")
    page = logged_in.get("/").get_data(as_text=True)
    assert "Demo" in page
    assert '<td class="num">6</td>' in page and '<td class="num">10</td>' in page
    assert "train 3 / 5" in page and "dev 3 / 5" in page and "gold 6" in page


@pytest.mark.parametrize(("field", "query", "expected"), [
    ("form", "Cats", ["a-2"]), ("lemma", "dog", ["a-1"]), ("upos", "VERB", ["a-1", "a-2"]),
    ("deprel", "nsubj", ["a-1", "a-2"]), ("sent_id", "b-", ["b-1"]), ("form", "none", []),
    ("form", "", ["a-1", "a-2", "b-1"]),
])
def test_sentence_search(
    app: Flask, logged_in: FlaskClient, field: str, query: str, expected: list[str]
) -> None:
    _upload(logged_in, TEXT)
    url = f"/treebanks/{_treebank_id(app)}/sentences"
    page = logged_in.get(url, query_string={"q": query, "field": field}).get_data(as_text=True)
    found = [sid for sid in ("a-1", "a-2", "b-1") if f'<span class="sent-id">{sid}</span>' in page]
    assert found == expected


def test_sentence_list_is_paginated(app: Flask, logged_in: FlaskClient) -> None:
    app.config["SENTENCES_PER_PAGE"] = 2
    try:
        _upload(logged_in, TEXT)
        url = f"/treebanks/{_treebank_id(app)}/sentences"
        first = logged_in.get(url).get_data(as_text=True)
        second = logged_in.get(url, query_string={"page": 2}).get_data(as_text=True)
    finally:
        app.config["SENTENCES_PER_PAGE"] = 50
    listed = [re.findall(r'<span class="sent-id">([^<]*)</span>', page) for page in (first, second)]
    assert "Page 1 of 2" in first  # sent_ids read from the list itself: a CSRF token may hold "a-1"
    assert listed == [["a-1", "a-2"], ["b-1"]]


def tree_words(page: str) -> list[dict[str, Any]]:
    """The words the sentence page hands to static/js/tree.js (``data-words`` of #tree)."""
    found = re.search(r'<div id="tree"[^>]* data-words="([^"]*)"', page)
    assert found
    words: list[dict[str, Any]] = json.loads(html.unescape(found.group(1)))
    return words


def test_sentence_page_hands_the_tree_to_the_script(app: Flask, logged_in: FlaskClient) -> None:
    _upload(logged_in, TEXT)
    page = logged_in.get(f"/sentences/{_sentence_id(app, 'a-1')}").get_data(as_text=True)
    assert "static/js/page-sentence.js" in page and 'data-direction="ltr"' in page
    words = tree_words(page)
    assert [(w["form"], w["head"], w["deprel"]) for w in words] == [
        ("Dogs", 2, "nsubj"), ("bark", 0, "root")]
    assert "<td>nsubj</td>" in page  # the token table


def test_tokens_are_escaped(app: Flask, logged_in: FlaskClient) -> None:
    _upload(logged_in, TEXT)
    page = logged_in.get(f"/sentences/{_sentence_id(app, 'b-1')}").get_data(as_text=True)
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # token table and title
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page  # |tojson data
    listing = logged_in.get(f"/treebanks/{_treebank_id(app)}/sentences").get_data(as_text=True)
    assert EVIL not in listing


def test_rtl_sentences_are_drawn_right_to_left(app: Flask, logged_in: FlaskClient) -> None:
    _upload(logged_in, _sentence("he-1", [("שלום", "_", "INTJ", 0, "root")]), name="Hebrew")
    page = logged_in.get(f"/sentences/{_sentence_id(app, 'he-1')}").get_data(as_text=True)
    assert 'data-direction="rtl"' in page and 'dir="rtl"' in page


def test_sentence_navigation_and_404(app: Flask, logged_in: FlaskClient) -> None:
    _upload(logged_in, TEXT)
    page = logged_in.get(f"/sentences/{_sentence_id(app, 'a-2')}").get_data(as_text=True)
    assert f'href="/sentences/{_sentence_id(app, "a-1")}' in page
    assert f'href="/sentences/{_sentence_id(app, "b-1")}' in page
    missing = logged_in.get("/sentences/999999")
    assert missing.status_code == 404 and "Page not found" in missing.get_data(as_text=True)


def test_browser_export_downloads_the_file(app: Flask, logged_in: FlaskClient) -> None:
    _upload(logged_in, TEXT)
    response = logged_in.get(f"/treebanks/{_treebank_id(app)}/export?source=gold")
    assert response.status_code == 200
    assert response.data == TEXT.encode()
    assert "attachment" in response.headers["Content-Disposition"]
    none_yet = logged_in.get(f"/treebanks/{_treebank_id(app)}/export?source=graph1&split=dev")
    assert none_yet.status_code == 200 and none_yet.data == b""
    unknown = logged_in.get(f"/treebanks/{_treebank_id(app)}/export?source=mst&split=dev")
    assert unknown.status_code == 400


def test_import_records_the_user(
    app: Flask, logged_in: FlaskClient, row_counts: Callable[[], dict[str, int]]
) -> None:
    _upload(logged_in, TEXT)
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        assert treebank.created_by.username == "ana"
        assert treebank.documents[0].imported_by.username == "ana"
    assert row_counts()["tree_versions"] == 3


def test_sentence_page_shows_the_chosen_source(app: Flask, logged_in: FlaskClient) -> None:
    from app.models import User
    from app.services.trees import add_version

    _upload(logged_in, TEXT)
    sentence_id = _sentence_id(app, "a-1")
    with app.app_context():
        user = db.session.scalars(select(User)).one()
        add_version(db.session, sentence_id=sentence_id, source="mst", heads=[0, 1],
                    deprels=["root", "obj"], scores=[0.3, 0.8], user=user)
        db.session.commit()
    page = logged_in.get(f"/sentences/{sentence_id}?source=mst").get_data(as_text=True)
    assert 'aria-current="page">mst</a>' in page and "<td>obj</td>" in page
    assert [word["score"] for word in tree_words(page)] == [0.3, 0.8]
    gold = logged_in.get(f"/sentences/{sentence_id}").get_data(as_text=True)
    assert 'aria-current="page">gold</a>' in gold and "<td>obj</td>" not in gold
