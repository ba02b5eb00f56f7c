"""Paging of the queue page (``GET /workspace/treebanks/<id>?page=``) with a small page size."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from app.services.demo import setup_demo
from app.services.queue import QueueFilter, build_queue

PAGE_SIZE = 3
EDITOR_LINK = re.compile(r'href="(/workspace/sentences/(\d+)[^"]*)"')


@pytest.fixture
def demo(app: Flask, logged_in: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> tuple[FlaskClient, int]:
    """A signed-in client, the 50-sentence demo treebank (10 in the pool) and 3 items per page."""
    monkeypatch.setitem(app.config, "QUEUE_PAGE_SIZE", PAGE_SIZE)
    with app.app_context():
        counts = setup_demo(db.session, user=db.session.scalars(select(User)).one(), sentences=50)
        db.session.commit()
        assert counts is not None and counts["pool"] == 10
        treebank_id = db.session.scalars(select(Treebank.id)).one()
    return logged_in, treebank_id


def queue_order(app: Flask, treebank_id: int, spec: QueueFilter | None = None) -> list[int]:
    """Sentence ids of the whole queue, in order (what the pages must split up)."""
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        return [item["id"] for item in build_queue(db.session, treebank, spec or QueueFilter()).items]


def get_page(client: FlaskClient, treebank_id: int, query: str = "") -> str:
    response = client.get(f"/workspace/treebanks/{treebank_id}{query}")
    assert response.status_code == 200, query
    return response.get_data(as_text=True)


def listed(body: str) -> list[int]:
    """Ids of the sentences linked to the editor, in page order."""
    return [int(sentence_id) for _, sentence_id in EDITOR_LINK.findall(body)]


def pager_link(body: str, rel: str) -> dict[str, Any] | None:
    """The query arguments of the ``rel`` (prev/next) link of the pager, or None without one."""
    found = re.search(rf'<a rel="{rel}" href="([^"]*)"', body)
    if found is None:
        return None
    url = urlsplit(html.unescape(found.group(1)))
    return {"path": url.path, **{k: v[0] for k, v in parse_qs(url.query).items()}}


def shown_range(body: str) -> str:
    found = re.search(r"Showing (\d+)–(\d+) of (\d+) matching", body)
    assert found, "no 'Showing a–b of N' line"
    return "{}–{} of {}".format(*found.groups())


def test_pages_split_the_queue(app: Flask, demo: tuple[FlaskClient, int]) -> None:
    client, treebank_id = demo
    order = queue_order(app, treebank_id)
    assert len(order) == 10

    first = get_page(client, treebank_id)
    assert listed(first) == order[:3]
    assert shown_range(first) == "1–3 of 10"
    assert "Page 1 of 4" in first
    assert pager_link(first, "prev") is None
    assert pager_link(first, "next") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "2"}

    second = get_page(client, treebank_id, "?page=2")
    assert listed(second) == order[3:6]
    assert not set(listed(second)) & set(listed(first))
    assert shown_range(second) == "4–6 of 10" and "Page 2 of 4" in second
    assert pager_link(second, "prev") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "1"}
    assert pager_link(second, "next") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "3"}


def test_last_page_shows_the_remainder(app: Flask, demo: tuple[FlaskClient, int]) -> None:
    client, treebank_id = demo
    order = queue_order(app, treebank_id)
    last = get_page(client, treebank_id, "?page=4")
    assert listed(last) == order[9:]
    assert shown_range(last) == "10–10 of 10" and "Page 4 of 4" in last
    assert pager_link(last, "next") is None
    assert pager_link(last, "prev") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "3"}
    every = [i for page in range(1, 5) for i in listed(get_page(client, treebank_id, f"?page={page}"))]
    assert every == order


@pytest.mark.parametrize(("page", "expected"), [
    ("0", 1), ("-2", 1), ("abc", 1), ("", 1), ("2.5", 1), ("4", 4), ("999", 4),
    ("99999999999999999999999", 4),
])
def test_out_of_range_pages_are_clamped(
    app: Flask, demo: tuple[FlaskClient, int], page: str, expected: int
) -> None:
    client, treebank_id = demo
    order = queue_order(app, treebank_id)
    body = get_page(client, treebank_id, f"?page={page}")
    assert f"Page {expected} of 4" in body
    assert listed(body) == order[(expected - 1) * PAGE_SIZE:expected * PAGE_SIZE]


def test_filters_are_kept_in_pager_and_editor_links(app: Flask, demo: tuple[FlaskClient, int]) -> None:
    client, treebank_id = demo
    args = {"order": "length", "status": "todo", "split": "all"}
    spec = QueueFilter.from_args(args)
    order = queue_order(app, treebank_id, spec)
    assert len(order) == 50
    query = "?order=length&status=todo&split=all"
    first = get_page(client, treebank_id, query)
    assert listed(first) == order[:3] and shown_range(first) == "1–3 of 50" and "Page 1 of 17" in first
    assert pager_link(first, "next") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "2", **args}

    second = get_page(client, treebank_id, query + "&page=2")
    assert listed(second) == order[3:6]
    assert pager_link(second, "prev") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "1", **args}
    assert pager_link(second, "next") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "3", **args}
    for href, _ in EDITOR_LINK.findall(second):  # the editor's way back returns to this page
        expected = {**args, "page": "2"}
        assert parse_qs(urlsplit(html.unescape(href)).query) == {k: [v] for k, v in expected.items()}

    upos = get_page(client, treebank_id, "?upos=NOUN&split=all&page=2")
    nouns = queue_order(app, treebank_id, QueueFilter(upos="NOUN", split="all"))
    assert listed(upos) == nouns[3:6]
    assert pager_link(upos, "next") == {"path": f"/workspace/treebanks/{treebank_id}", "page": "3",
                                        "upos": "NOUN", "split": "all"}


def test_page_size_defaults_to_queue_page(app: Flask, demo: tuple[FlaskClient, int],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    client, treebank_id = demo
    monkeypatch.delitem(app.config, "QUEUE_PAGE_SIZE")
    body = get_page(client, treebank_id, "?split=all&page=2")
    assert shown_range(body) == "1–50 of 50" and len(listed(body)) == 50
    assert 'class="pager"' not in body
    monkeypatch.setitem(app.config, "QUEUE_PAGE_SIZE", 0)
    assert len(listed(get_page(client, treebank_id, "?split=all"))) == 50


def test_empty_queue(app: Flask, demo: tuple[FlaskClient, int]) -> None:
    client, treebank_id = demo
    body = get_page(client, treebank_id, "?status=reviewed&page=3")
    assert "0 matching." in body and "No sentence matches" in body and listed(body) == []
