"""The editor keeps the queue page (``?page=``, else the queue page it was opened from) in its way back."""

from __future__ import annotations

import html
import json
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
from app.services.queue import QueueFilter, build_queue, queue_page_arg

FILTERS = {"order": "length", "status": "todo", "split": "all"}
QUERY = "order=length&status=todo&split=all"


@pytest.fixture
def demo(app: Flask, logged_in: FlaskClient) -> tuple[FlaskClient, int, list[int]]:
    """A signed-in client, the 50-sentence demo treebank and its queue under :data:`FILTERS`."""
    with app.app_context():
        setup_demo(db.session, user=db.session.scalars(select(User)).one(), sentences=50)
        db.session.commit()
        treebank = db.session.scalars(select(Treebank)).one()
        found = build_queue(db.session, treebank, QueueFilter.from_args(FILTERS))
        order = [item["id"] for item in found.items]
        return logged_in, treebank.id, order


def args_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def back_link(body: str) -> str:
    found = re.search(r'<a id="back-to-queue" href="([^"]*)"', body)
    assert found, "no back-to-queue link"
    return html.unescape(found.group(1))


def editor_urls(body: str) -> dict[str, Any]:
    """The ``urls`` object the editor page hands to static/js/editor.js (``data-urls`` of #editor)."""
    found = re.search(r'<div id="editor"[^>]* data-urls="([^"]*)"', body)
    assert found
    urls: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return urls


def open_editor(client: FlaskClient, sentence_id: int, query: str, referrer: str | None = None) -> str:
    headers = {"Referer": referrer} if referrer else {}
    response = client.get(f"/workspace/sentences/{sentence_id}?{query}", headers=headers)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_back_link_keeps_page_and_filters(demo: tuple[FlaskClient, int, list[int]]) -> None:
    client, treebank_id, order = demo
    body = open_editor(client, order[4], QUERY + "&page=2")
    link = back_link(body)
    assert urlsplit(link).path == f"/workspace/treebanks/{treebank_id}"
    assert args_of(link) == {**FILTERS, "page": "2"}
    urls = editor_urls(body)
    # the next sentence opens with the same filters and page; the queue API gets the filters only
    assert urlsplit(urls["editor"]).path == "/workspace/sentences/0"
    assert args_of(urls["editor"]) == {**FILTERS, "page": "2"}
    assert args_of(urls["next"]) == {**FILTERS, "after": str(order[4])}


def test_back_link_lands_on_that_page(app: Flask, demo: tuple[FlaskClient, int, list[int]],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    client, treebank_id, order = demo
    monkeypatch.setitem(app.config, "QUEUE_PAGE_SIZE", 3)
    link = back_link(open_editor(client, order[4], QUERY + "&page=2"))
    queue = client.get(link).get_data(as_text=True)
    assert "Page 2 of 17" in queue
    assert f'href="/workspace/sentences/{order[4]}?' in queue


@pytest.mark.parametrize("page", ["", "1", "0", "-3", "abc", "2.5", "²", "9999999999"])
def test_page_one_or_invalid_pages_are_left_out(demo: tuple[FlaskClient, int, list[int]], page: str) -> None:
    client, treebank_id, order = demo
    body = open_editor(client, order[0], f"{QUERY}&page={page}")
    assert args_of(back_link(body)) == FILTERS
    assert args_of(editor_urls(body)["editor"]) == FILTERS


def test_without_filters_or_page_the_links_are_plain(demo: tuple[FlaskClient, int, list[int]]) -> None:
    client, treebank_id, order = demo
    body = open_editor(client, order[0], "")
    assert back_link(body) == f"/workspace/treebanks/{treebank_id}"
    assert editor_urls(body)["editor"] == "/workspace/sentences/0"
    assert args_of(back_link(open_editor(client, order[0], "page=3"))) == {"page": "3"}


def test_queue_links_carry_their_page(demo: tuple[FlaskClient, int, list[int]],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Page 2 of the queue links to editors with page=2, whose back link returns to page 2."""
    client, treebank_id, order = demo
    monkeypatch.setitem(client.application.config, "QUEUE_PAGE_SIZE", 4)
    queue = client.get(f"/workspace/treebanks/{treebank_id}?{QUERY}&page=2").get_data(as_text=True)
    links = [html.unescape(h) for h in re.findall(r'href="(/workspace/sentences/[^"]+)"', queue)]
    assert links and all(args_of(link) == {**FILTERS, "page": "2"} for link in links)
    assert int(links[0].split("?")[0].rsplit("/", 1)[1]) == order[4]
    body = open_editor(client, order[4], urlsplit(links[0]).query)
    assert args_of(back_link(body)) == {**FILTERS, "page": "2"}
    assert args_of(editor_urls(body)["editor"]) == {**FILTERS, "page": "2"}
    first = client.get(f"/workspace/treebanks/{treebank_id}?{QUERY}").get_data(as_text=True)
    links = [html.unescape(h) for h in re.findall(r'href="(/workspace/sentences/[^"]+)"', first)]
    assert links and all(args_of(link) == FILTERS for link in links)  # page 1 is the default


def test_helpers() -> None:
    assert [queue_page_arg(v) for v in (None, "", "1", "2", 5, "07", " 2", "+2", "1e3")] == \
        [None, None, None, 2, 5, 7, None, None, None]
