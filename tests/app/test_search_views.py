"""The search page (issue #32): who may search, save and delete named queries; what it shows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from app.search_models import SavedQuery
from app.services.imports import import_conllu
from app.services.members import set_role
from app.services.search import SearchResult, search_treebank
from parsing.conllu_io import parse_conllu
from tests.app.conftest import PASSWORD
from tests.app.test_search import AFRIKAANS

PATTERN = "pattern { * -[root]-> R; R [upos=NOUN] }"


def sign_in(app: Flask, name: str) -> FlaskClient:
    client = app.test_client()
    assert client.post("/auth/login", data={"username": name, "password": PASSWORD}).status_code == 302
    return client


@pytest.fixture
def world(app: Flask, make_user: Callable[..., int]) -> tuple[int, dict[str, FlaskClient]]:
    return build_world(app, make_user)


def build_world(app: Flask, make_user: Callable[..., int]) -> tuple[int, dict[str, FlaskClient]]:
    """AfriBooms dev imported by its owner ana; clients of ana, a viewer, a curator and a stranger.

    The database work runs in its own app context, closed before any request: a request made
    while a test holds an app context would share its ``g`` (and the signed-in user) with it."""
    if not AFRIKAANS.exists():
        pytest.skip(f"{AFRIKAANS} not found (../shared/ud beside the repo, or ARCVOTE_UD_ROOT)")
    for name in ("ana", "viewer", "curator", "stranger"):
        make_user(name)
    with app.app_context():
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        treebank = import_conllu(db.session, data=AFRIKAANS.read_bytes(), filename=AFRIKAANS.name,
                                 treebank_name="af", split="dev", user=owner).treebank
        for role in ("viewer", "curator"):
            set_role(db.session, treebank, role, role, by=owner)
        db.session.commit()
        treebank_id = treebank.id
    return treebank_id, {name: sign_in(app, name) for name in ("ana", "viewer", "curator", "stranger")}


def expected_result(app: Flask, treebank_id: int, pattern: str) -> SearchResult:
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        return search_treebank(db.session, treebank, pattern)


def payload(html: str) -> dict[str, object]:
    found = re.search(r"data-search='([^']*)'", html)
    assert found, "no search payload on the page"
    return dict(json.loads(found.group(1).replace("&#39;", "'").replace("&quot;", '"').replace("&amp;", "&")
                           .replace("&lt;", "<").replace("&gt;", ">")))


def test_a_viewer_searches_and_sees_counts_trees_and_matched_nodes(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    expected = expected_result(app, treebank_id, PATTERN)
    response = clients["viewer"].get(f"/treebanks/{treebank_id}/search", query_string={"pattern": PATTERN})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert f"{expected.matches} matches in {len(expected.sentence_ids)} sentences" in " ".join(html.split())
    shown = payload(html)["sentences"]
    assert isinstance(shown, list) and len(shown) == min(10, len(expected.sentence_ids)) > 0
    for item, hit in zip(shown, expected.hits, strict=False):
        assert item["id"] == hit.sentence_id and item["hits"][0] == hit.nodes
        root = item["words"][hit.nodes["R"] - 1]
        assert (root["upos"], root["head"], root["deprel"]) == ("NOUN", 0, "root")
    assert 'id="save-query"' not in html  # viewers do not save queries
    assert "<script>" not in html and "js/search.js" in html


def test_paging_and_the_conllu_download(app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    pattern = "pattern { H -[obl]-> N }"
    expected = expected_result(app, treebank_id, pattern)
    assert len(expected.sentence_ids) > 10
    second = clients["viewer"].get(f"/treebanks/{treebank_id}/search",
                                   query_string={"pattern": pattern, "page": 2})
    shown = payload(second.get_data(as_text=True))["sentences"]
    assert isinstance(shown, list)
    assert [item["id"] for item in shown] == expected.sentence_ids[10:20]
    assert 'rel="prev"' in second.get_data(as_text=True)
    download = clients["viewer"].get(f"/treebanks/{treebank_id}/search.conllu",
                                     query_string={"pattern": pattern, "source": "gold", "split": "dev"})
    assert download.status_code == 200 and "attachment" in download.headers["Content-Disposition"]
    sent_ids = [raw.sent_id for raw in parse_conllu(download.get_data(as_text=True))]
    assert sent_ids == list(dict.fromkeys(hit.sent_id for hit in expected.hits))


def test_a_bad_pattern_or_source_is_shown_with_its_position(
        world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    viewer, url = clients["viewer"], f"/treebanks/{treebank_id}/search"
    response = viewer.get(url, query_string={"pattern": "pattern {\n  N [upos=NOUN\n}"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "Pattern: line 3, column 1: expected &#39;,&#39; or &#39;]&#39; after a feature test" in html
    bad_source = viewer.get(url, query_string={"pattern": PATTERN, "source": "<b>x</b>"})
    assert bad_source.status_code == 400 and "<b>x</b>" not in bad_source.get_data(as_text=True)
    assert viewer.get(f"/treebanks/{treebank_id}/search.conllu").status_code == 400
    assert viewer.get(url, query_string={"pattern": PATTERN, "split": "nope"}).status_code == 400


def test_strangers_do_not_see_a_private_treebank(world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    for path in ("search", "search.conllu"):
        response = clients["stranger"].get(f"/treebanks/{treebank_id}/{path}",
                                           query_string={"pattern": PATTERN})
        assert response.status_code == 404


def test_curators_save_and_delete_named_queries_viewers_only_run_them(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/queries"

    def stored() -> list[tuple[int, str, str, int]]:
        with app.app_context():
            return [(q.id, q.name, q.pattern, q.treebank_id) for q in db.session.scalars(select(SavedQuery))]

    assert clients["viewer"].post(url, data={"name": "noun roots", "pattern": PATTERN}).status_code == 403
    assert clients["curator"].post(url, data={"name": "noun roots", "pattern": PATTERN}).status_code == 302
    [(query_id, name, pattern, treebank_id)] = stored()
    assert (name, pattern, treebank_id) == ("noun roots", PATTERN, treebank_id)
    page = clients["viewer"].get(f"/treebanks/{treebank_id}/search").get_data(as_text=True)
    assert "noun roots" in page and 'class="saved-query"' in page and "Delete" not in page
    bad = clients["ana"].post(url, data={"name": "broken", "pattern": "pattern { N [upos= }"},
                              follow_redirects=True)
    assert "Not saved: line 1, column 20: expected a value" in bad.get_data(as_text=True)
    assert [row[1] for row in stored()] == ["noun roots"]
    assert clients["viewer"].post(f"{url}/delete", data={"query_id": query_id}).status_code == 403
    assert clients["ana"].post(f"{url}/delete", data={"query_id": query_id}).status_code == 302
    assert stored() == []
    missing = clients["ana"].post(f"{url}/delete", data={"query_id": query_id}, follow_redirects=True)
    assert "no such query" in missing.get_data(as_text=True)


def test_the_treebank_page_links_to_search(world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    html = clients["viewer"].get(f"/treebanks/{treebank_id}/sentences").get_data(as_text=True)
    assert f'href="/treebanks/{treebank_id}/search"' in html


def test_a_page_search_stops_at_its_match_limit_and_its_time(world: tuple[int, dict[str, FlaskClient]],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import app.views.search as search_view

    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/search"
    monkeypatch.setattr(search_view, "MAX_MATCHES", 5)
    page = clients["viewer"].get(url, query_string={"pattern": "pattern { N [upos=NOUN] }"})
    html = page.get_data(as_text=True)
    assert "5 matches in" in " ".join(html.split()) and 'id="truncated"' in html
    monkeypatch.setattr(search_view, "SECONDS", 0.0)
    stopped = clients["viewer"].get(url, query_string={"pattern": "pattern { A []; B []; C [] }"})
    assert stopped.status_code == 400
    assert "Stopped: the search took more than 0 s" in stopped.get_data(as_text=True)
