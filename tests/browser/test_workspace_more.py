"""More of the workspace in a real browser: notes, history and revert, click-to-attach, queue paging.

One live server and the 50-sentence demo treebank for the module. Its 10 pool sentences get
parser and ensemble trees straight from the database (the demo's own gold trees, one member
perturbed), as a pre-annotation run started by ``bo`` would store them, so no model is trained
here (tests/browser/test_editor.py covers pre-annotating from the queue page). Each test works
on its own pool sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import SentenceNote, TreeVersion
from tests.browser.helpers import committed_pool_trees, editor_state, leaves, open_editor, queue_listed

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@dataclass(frozen=True)
class Demo:
    treebank_id: int
    pool: list[int]
    """Pool sentence ids in document order (the queue's ``position`` order)."""
    ensemble: dict[int, tuple[list[int], list[str]]]
    """Sentence id → the ensemble's (heads, deprels)."""


@pytest.fixture(scope="module")
def demo(live_app: Flask) -> Demo:
    stored = committed_pool_trees(live_app)
    treebank_id, pool, ensemble = stored.treebank_id, stored.pool, stored.ensemble
    assert len(pool) == 10
    return Demo(treebank_id, pool, ensemble)


def stored_annotations(live_app: Flask, sentence_id: int) -> list[TreeVersion]:
    """The stored annotation versions of the sentence, oldest first (detached, read-only)."""
    with live_app.app_context():
        trees = list(db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "annotation")
            .order_by(TreeVersion.version)))
        for tree in trees:
            _ = tree.user.username
        db.session.expunge_all()
        return trees


def history_entry(page: Any, title: str) -> Any:
    """The top-level history item whose heading is ``title`` (e.g. ``annotation v1``)."""
    return page.locator("#history-list > li").filter(
        has=page.locator(":scope > strong", has_text=title))


def test_note_is_kept_after_a_reload(ui: Any, live_app: Flask, demo: Demo, screenshot: Shot) -> None:
    page = ui
    sentence_id = demo.pool[0]
    open_editor(page, sentence_id)
    assert page.locator("#notes-list li").count() == 0
    text = "Is word 3 <b>obl</b> or obj? Ask bo & check the guidelines."
    page.fill("#note-body", text)
    page.click("#note-form button[type=submit]")
    page.wait_for_selector("#notes-list li")
    assert page.input_value("#note-body") == ""

    page.reload()
    page.wait_for_selector("#tree svg")
    notes = page.locator("#notes-list li")
    assert notes.count() == 1
    assert notes.locator(".note-body").inner_text() == text
    assert notes.locator("strong").inner_text() == "ana"
    assert page.locator("#notes-list b").count() == 0, "the note must be shown as text, not HTML"
    with live_app.app_context():
        stored = db.session.scalars(select(SentenceNote).where(SentenceNote.sentence_id == sentence_id)).all()
        assert [(n.body, n.user.username) for n in stored] == [(text, "ana")]
    page.locator("#note-form").scroll_into_view_if_needed()
    screenshot(page, "editor-note")


def test_history_shows_versions_and_revert_adds_one(
    ui: Any, live_app: Flask, demo: Demo, screenshot: Shot
) -> None:
    page = ui
    sentence_id = demo.pool[1]
    ensemble_heads, ensemble_deprels = demo.ensemble[sentence_id]
    state = open_editor(page, sentence_id)
    assert state["version"] == 0 and state["heads"] == ensemble_heads

    word = leaves(state["heads"])[-1]
    root = state["heads"].index(0) + 1
    label = "dep" if state["deprels"][word - 1] != "dep" else "obl"
    page.click(f"#tokens tr[data-word='{word}']")
    page.fill("#head-input", str(root))
    page.fill("#label-input", label)
    page.click(".arc-form button[type=submit]")
    corrected = editor_state(page)
    assert corrected["heads"][word - 1] == root and corrected["deprels"][word - 1] == label
    page.click("#tokens tr[data-word='1']")
    page.locator("#tree").focus()
    page.keyboard.press("a")  # accept word 1's arc: one word reviewed
    page.click("#save")
    page.wait_for_selector("#message:has-text('Saved version 1')")
    assert " 1 of " in page.locator("#status").inner_text()

    page.click("#history summary")
    page.wait_for_selector("#history-list > li")
    mine, theirs = history_entry(page, "annotation v1"), history_entry(page, "ensemble v1")
    assert mine.count() == 1 and theirs.count() == 1
    # a parser's or the ensemble's tree names its source, not who started the job (issue 12)
    assert " by ana, " in mine.inner_text() and " by the ensemble, " in theirs.inner_text()
    change = mine.locator("ul li").inner_text()
    assert change.startswith(f"word {word} {state['words'][word - 1]}: ")
    assert change.endswith(f"→ {root} {label}")
    history_entry(page, "graph1 v1").first.wait_for()
    screenshot(page, "editor-history")

    theirs.get_by_role("button", name="Revert to this").click()
    page.wait_for_selector("#message:has-text('Reverted to ensemble v1 (saved as version 2)')")
    history_entry(page, "annotation v2").wait_for()
    # the ensemble's tree carries no review ticks (issue #30): none stays, now or after a reload
    n_words = len(state["heads"])
    assert f"0 of {n_words} words reviewed · sentence: in progress" in page.locator("#status").inner_text()
    assert page.locator("#tree .token.reviewed").count() == 0

    page.reload()
    page.wait_for_selector("#tree svg")
    after = editor_state(page)
    assert after["heads"] == ensemble_heads and after["deprels"] == ensemble_deprels
    assert after["version"] == 2 and not after["dirty"]
    assert f"0 of {n_words} words reviewed" in page.locator("#status").inner_text()
    page.click("#history summary")
    history_entry(page, "annotation v2").wait_for()
    newest = page.locator("#history-list > li").first
    assert newest.locator(":scope > strong").inner_text() == "annotation v2"
    assert " by ana, " in newest.inner_text() and "(from ensemble v1)" in newest.inner_text()
    assert history_entry(page, "annotation v1").count() == 1
    assert history_entry(page, "ensemble v1").count() == 1

    stored = stored_annotations(live_app, sentence_id)
    assert [t.version for t in stored] == [1, 2]
    assert stored[0].heads == corrected["heads"] and stored[0].deprels == corrected["deprels"]
    assert stored[1].heads == ensemble_heads and stored[1].deprels == ensemble_deprels
    assert all(t.user.username == "ana" for t in stored)
    screenshot(page, "editor-reverted")


def test_click_dependent_then_head(ui: Any, live_app: Flask, demo: Demo, screenshot: Shot) -> None:
    page = ui
    sentence_id = demo.pool[2]
    state = open_editor(page, sentence_id)
    heads = state["heads"]
    word = leaves(heads)[0]
    head = next(h for h in range(1, len(heads) + 1) if h not in (word, heads[word - 1]))
    label = state["deprels"][word - 1]

    def token(word_id: int) -> Any:
        return page.locator(f"#tree .token[data-id='{word_id}']")

    token(word).click()
    page.wait_for_selector(f"#tree .token.pending[data-id='{word}']")
    assert "Click the head of" in page.inner_text("#message")
    assert editor_state(page)["heads"] == heads
    token(head).click()
    clicked = editor_state(page)
    assert clicked["heads"][word - 1] == head and clicked["pending"] is None and clicked["dirty"]
    assert [h for i, h in enumerate(clicked["heads"]) if i != word - 1] == \
           [h for i, h in enumerate(heads) if i != word - 1]
    page.click("#save")
    page.wait_for_selector("#message:has-text('Saved version 1')")

    page.reload()
    page.wait_for_selector("#tree svg")
    after = editor_state(page)
    assert after["heads"][word - 1] == head and after["deprels"][word - 1] == label
    assert after["version"] == 1
    assert page.locator(f"#tokens tr[data-word='{word}'] td.current").inner_text() == f"{head} {label}"
    # the drawn arc of ``word`` starts at the centre of the new head's box
    arc_start, head_centre = page.evaluate("""([word, head]) => {
        const d = document.querySelector(`#tree .arc[data-dep="${word}"] path`).getAttribute("d");
        const box = document.querySelector(`#tree .token[data-id="${head}"] rect`);
        const centre = Number(box.getAttribute("x")) + Number(box.getAttribute("width")) / 2;
        return [Number(d.split(" ")[1]), centre];
    }""", [word, head])
    assert abs(arc_start - head_centre) < 0.5
    assert stored_annotations(live_app, sentence_id)[-1].heads[word - 1] == head
    page.click(f"#tokens tr[data-word='{word}']")
    assert f"Head {head} {state['words'][head - 1]}" in page.inner_text("#panel .current-arc")
    screenshot(page, "editor-click-to-attach")


def test_queue_next_and_previous_pages(
    ui: Any, live_app: Flask, demo: Demo, monkeypatch: pytest.MonkeyPatch, screenshot: Shot
) -> None:
    page = ui
    monkeypatch.setitem(live_app.config, "QUEUE_PAGE_SIZE", 4)

    page.goto(f"/workspace/treebanks/{demo.treebank_id}?order=position")
    assert queue_listed(page) == demo.pool[:4]
    assert page.inner_text(".queue-range") == "Showing 1–4 of 10 matching."
    assert "Page 1 of 3" in page.inner_text("nav.pager")
    assert page.locator("nav.pager a[rel=prev]").count() == 0

    page.click("nav.pager a[rel=next]")
    page.wait_for_url(lambda url: "page=2" in url)
    assert "order=position" in page.url
    assert queue_listed(page) == demo.pool[4:8]
    assert page.inner_text(".queue-range") == "Showing 5–8 of 10 matching."
    assert "Page 2 of 3" in page.inner_text("nav.pager")
    assert page.locator("select[name=order]").input_value() == "position"
    screenshot(page, "queue-page-2")

    page.click("nav.pager a[rel=next]")
    page.wait_for_url(lambda url: "page=3" in url)
    assert queue_listed(page) == demo.pool[8:]
    assert page.inner_text(".queue-range") == "Showing 9–10 of 10 matching."
    assert page.locator("nav.pager a[rel=next]").count() == 0

    page.click("nav.pager a[rel=prev]")
    page.wait_for_url(lambda url: "page=2" in url and "order=position" in url)
    assert queue_listed(page) == demo.pool[4:8]
    page.click("ol.queue li:first-child a")
    page.wait_for_selector("#tree svg")
    assert page.url.endswith(f"/workspace/sentences/{demo.pool[4]}?order=position&page=2")
