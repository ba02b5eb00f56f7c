"""The search page in a real browser, under the Content-Security-Policy (issue #32): a pattern
typed into the box, the counts, the matched words highlighted in the drawn trees, a named query
saved and run.

The treebank: the demo file's first 40 sentences as a test split with their gold trees.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.models import Treebank
from app.services.search import SearchResult, search_treebank
from tests.browser.helpers import import_demo_test_split

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
PATTERN = "pattern { V [upos=VERB]; V -[nsubj]-> S; S [upos=NOUN] }\nwithout { S -[amod]-> A }"


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    return import_demo_test_split(live_app, "search demo")


def expected(live_app: Flask, treebank_id: int) -> SearchResult:
    with live_app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        return search_treebank(db.session, treebank, PATTERN, source="gold")


def test_search_draws_the_matched_nodes(enforced_ui: Any, live_app: Flask, treebank_id: int,
                                        screenshot: Shot) -> None:
    ui = enforced_ui
    result = expected(live_app, treebank_id)
    assert result.matches > 1
    ui.goto(f"/treebanks/{treebank_id}/sentences")
    ui.click("#search-trees")
    ui.fill("#pattern", PATTERN)
    ui.select_option("#source", "gold")
    ui.click("#search-form button[type=submit]")
    ui.wait_for_selector("svg.tree .token.grew-match")
    summary = " ".join(ui.inner_text("#summary").split())
    assert summary == f"{result.matches} matches in {len(result.sentence_ids)} sentences"
    figures = ui.locator("figure.search-hit")
    assert figures.count() == min(10, len(result.sentence_ids))
    for index, sentence_id in enumerate(result.sentence_ids[:3]):
        figure = figures.nth(index)
        hits = [hit.nodes for hit in result.hits if hit.sentence_id == sentence_id]
        marked = {int(figure.locator("svg.tree .token.grew-match").nth(k).get_attribute("data-id"))
                  for k in range(figure.locator("svg.tree .token.grew-match").count())}
        assert marked == {word for nodes in hits for word in nodes.values()}
        subject = figure.locator(f'svg.tree .token[data-id="{hits[0]["S"]}"] .upos')
        assert subject.text_content() == "S · NOUN"
        verb = figure.locator(f'svg.tree .token[data-id="{hits[0]["V"]}"] .upos')
        assert verb.text_content() == "V · VERB"
        # the nsubj arc between two matched words is marked too
        assert figure.locator("svg.tree .arc.grew-match-arc").count() >= 1
        unmatched = figure.locator("svg.tree .token:not(.grew-match)")
        assert unmatched.count() > 0 and "·" not in unmatched.first.locator(".upos").text_content()
    download = ui.locator("#download").get_attribute("href")
    assert download.startswith(f"/treebanks/{treebank_id}/search.conllu?")
    screenshot(ui, "search-matches")


def test_a_bad_pattern_shows_its_position_and_a_named_query_runs(enforced_ui: Any, treebank_id: int,
                                                                  screenshot: Shot) -> None:
    ui = enforced_ui
    ui.goto(f"/treebanks/{treebank_id}/search")
    ui.fill("#pattern", "pattern {\n  V [upos=VERB\n}")
    ui.click("#search-form button[type=submit]")
    error = ui.inner_text("#search-error")
    assert "line 3, column 1: expected ',' or ']' after a feature test" in error
    assert ui.locator("svg.tree").count() == 0
    screenshot(ui, "search-error")
    ui.fill("#pattern", PATTERN)
    ui.click("#search-form button[type=submit]")
    ui.fill("#query-name", "bare noun subjects")
    ui.click("#save-query button[type=submit]")
    ui.wait_for_selector("a.saved-query")
    ui.goto(f"/treebanks/{treebank_id}/search")
    assert ui.locator("svg.tree").count() == 0
    ui.click("a.saved-query:has-text('bare noun subjects')")
    ui.wait_for_selector("svg.tree .token.grew-match")
    assert ui.input_value("#pattern") == PATTERN
