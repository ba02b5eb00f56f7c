"""The ROOT box of the editor tree (click-to-attach to ROOT) and the queue page kept by the editor.

One live server and the 50-sentence demo treebank for the module; its 10 pool sentences get
parser and ensemble trees straight from the database (the demo's gold trees, one member
perturbed), as tests/browser/test_workspace_more.py does, so no model is trained here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, TreeVersion, User
from app.services.imports import import_conllu
from app.services.trees import add_version
from tests.browser.helpers import editor_state, leaves, open_editor, queue_listed, store_pool_trees

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
ROOT_BUTTON = "ROOT: click a word, then ROOT, to make it the root of the sentence"


@dataclass(frozen=True)
class Demo:
    treebank_id: int
    pool: list[int]
    """Pool sentence ids in document order (the queue's ``position`` order)."""
    rtl_sentence: int
    """A short right-to-left (Hebrew) pool sentence of its own treebank."""


@pytest.fixture(scope="module")
def demo(live_app: Flask) -> Demo:
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        stored = store_pool_trees(db.session, ana)
        treebank_id, bo = stored.treebank_id, stored.bo
        rows_he = "".join(f"{i}\tמילה{i}\t_\tNOUN\t_\t_\t_\t_\t_\t_\n" for i in range(1, 5))
        import_conllu(db.session, data=f"# sent_id = he\n{rows_he}\n".encode(), filename="he.conllu",
                      treebank_name="Hebrew short", split="pool", user=ana)
        document_id = db.session.scalar(select(Document.id).where(Document.name == "he.conllu"))
        rtl = db.session.scalars(select(Sentence.id).where(Sentence.document_id == document_id)).one()
        add_version(db.session, sentence_id=rtl, source="ensemble", heads=[0, 1, 2, 3],
                    deprels=["root", "dep", "dep", "dep"], user=bo, scores=[1.0] * 4)
        db.session.commit()
        pool = stored.pool
    assert len(pool) == 10
    return Demo(treebank_id, pool, rtl)


def token(page: Any, word: int) -> Any:
    return page.locator(f"#tree .token[data-id='{word}']")


def root_box(page: Any) -> Any:
    return page.get_by_role("button", name=ROOT_BUTTON)


def centre(page: Any, selector: str) -> float:
    """Centre x (SVG user units) of the first ``rect`` under ``selector`` in the editor tree."""
    return float(page.evaluate("""(selector) => {
        const box = document.querySelector(`#tree ${selector} rect`);
        return Number(box.getAttribute("x")) + Number(box.getAttribute("width")) / 2; }""", selector))


def root_arc_start(page: Any, word: int) -> float:
    """Where the drawn root arc of ``word`` starts (the x of its path's ``M``)."""
    d = page.locator(f"#tree .arc.root[data-dep='{word}'] path").get_attribute("d")
    return float(d.split(" ")[1])


def stored_annotations(live_app: Flask, sentence_id: int) -> list[TreeVersion]:
    with live_app.app_context():
        trees = list(db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "annotation")
            .order_by(TreeVersion.version)))
        db.session.expunge_all()
        return trees


def test_root_box_is_drawn_first_and_the_root_arc_starts_there(ui: Any, demo: Demo) -> None:
    page = ui
    state = open_editor(page, demo.pool[0])
    root = state["heads"].index(0) + 1
    assert page.locator("#tree .root-node").count() == 1
    assert root_box(page).count() == 1, "the ROOT box is a button with an accessible name"
    root_x = centre(page, ".root-node")
    assert all(root_x < centre(page, f".token[data-id='{w}']") for w in range(1, len(state["heads"]) + 1))
    assert page.locator("#tree .arc.root").count() == 1
    assert abs(root_arc_start(page, root) - root_x) < 0.5
    # the small multiples have a ROOT box too, not a button
    assert page.locator("#members .root-node").count() == 2
    assert page.locator("#members .root-node[role=button]").count() == 0

    # ROOT first, with no word picked: a hint, nothing changes
    root_box(page).click()
    assert "Click a word first" in page.inner_text("#message")
    assert editor_state(page)["heads"] == state["heads"] and not editor_state(page)["dirty"]


def test_click_word_then_root_makes_it_the_root(
    ui: Any, live_app: Flask, demo: Demo, screenshot: Shot
) -> None:
    page = ui
    sentence_id = demo.pool[1]
    state = open_editor(page, sentence_id)
    heads = state["heads"]
    old_root = heads.index(0) + 1
    word = leaves(heads)[0]

    token(page, word).click()
    page.wait_for_selector(f"#tree .token.pending[data-id='{word}']")
    assert "ROOT box" in page.inner_text("#message")
    root_box(page).click()
    clicked = editor_state(page)
    assert clicked["heads"][word - 1] == 0 and clicked["deprels"][word - 1] == "root"
    assert clicked["pending"] is None and clicked["selected"] == word and clicked["dirty"]
    assert [h for i, h in enumerate(clicked["heads"]) if i != word - 1] == \
           [h for i, h in enumerate(heads) if i != word - 1]
    # two roots: the editor says so and refuses to save
    first, second = sorted((old_root, word))
    errors = page.inner_text("#errors")
    assert f"exactly one word must attach to ROOT (found {first}, {second})" in errors
    assert page.locator("#tree .arc.root").count() == 2
    root_x = centre(page, ".root-node")
    assert abs(root_arc_start(page, word) - root_x) < 0.5
    screenshot(page, "editor-two-roots")
    page.click("#save")
    assert "Not saved: fix the problems listed above." in page.inner_text("#message")
    assert stored_annotations(live_app, sentence_id) == []

    # the old root now depends on the new one; it gets a voted label instead of root (issue 12)
    token(page, old_root).click()
    token(page, word).click()
    moved = editor_state(page)
    assert moved["heads"][old_root - 1] == word and moved["deprels"][old_root - 1] != "root"
    assert page.locator("#errors").count() == 0
    page.click(f"#tokens tr[data-word='{old_root}']")
    assert page.input_value("#head-input") == str(word)
    page.fill("#label-input", "parataxis")
    page.click(".arc-form button[type=submit]")
    assert page.locator("#errors").count() == 0
    page.click("#save")
    page.wait_for_selector("#message:has-text('Saved version 1')")

    page.reload()
    page.wait_for_selector("#tree svg")
    after = editor_state(page)
    assert after["version"] == 1 and not after["dirty"]
    assert after["heads"][word - 1] == 0 and after["deprels"][word - 1] == "root"
    assert after["heads"][old_root - 1] == word and after["deprels"][old_root - 1] == "parataxis"
    assert [w for w, h in enumerate(after["heads"], start=1) if h == 0] == [word]
    assert page.locator("#tree .arc.root").count() == 1
    assert abs(root_arc_start(page, word) - centre(page, ".root-node")) < 0.5
    assert page.locator(f"#tokens tr[data-word='{word}'] td.current").inner_text() == "0 root"
    page.click(f"#tokens tr[data-word='{word}']")
    assert "Head ROOT" in page.inner_text("#panel .current-arc")
    stored = stored_annotations(live_app, sentence_id)
    assert [t.version for t in stored] == [1]
    assert stored[0].heads == after["heads"] and stored[0].deprels == after["deprels"]
    screenshot(page, "editor-new-root")


def test_root_box_by_keyboard_and_on_the_right_for_rtl(ui: Any, demo: Demo, screenshot: Shot) -> None:
    page = ui
    state = open_editor(page, demo.rtl_sentence)
    assert state["heads"] == [0, 1, 2, 3]
    root_x = centre(page, ".root-node")
    assert all(root_x > centre(page, f".token[data-id='{w}']") for w in range(1, 5))
    assert centre(page, ".token[data-id='1']") > centre(page, ".token[data-id='4']")
    assert abs(root_arc_start(page, 1) - root_x) < 0.5

    token(page, 4).click()
    page.wait_for_selector("#tree .token.pending[data-id='4']")
    root_box(page).focus()
    page.keyboard.press("Enter")
    after = editor_state(page)
    assert after["heads"] == [0, 1, 2, 0] and after["deprels"][3] == "root"
    assert page.evaluate("() => document.activeElement.id") == "tree", "focus goes back to the tree"
    assert "found 1, 4" in page.inner_text("#errors")
    screenshot(page, "editor-root-rtl")
    page.keyboard.press("u")
    assert editor_state(page)["heads"] == [0, 1, 2, 3]


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def test_back_to_the_queue_page(
    ui: Any, live_app: Flask, demo: Demo, monkeypatch: pytest.MonkeyPatch, screenshot: Shot
) -> None:
    page = ui
    monkeypatch.setitem(live_app.config, "QUEUE_PAGE_SIZE", 4)

    page.goto(f"/workspace/treebanks/{demo.treebank_id}?order=position")
    page.click("nav.pager a[rel=next]")
    page.wait_for_url(lambda url: "page=2" in url)
    assert queue_listed(page) == demo.pool[4:8] and "Page 2 of 3" in page.inner_text("nav.pager")

    # the queue's link carries the filters and its page; the editor's way back keeps both
    page.click("ol.queue li:nth-child(2) a")
    page.wait_for_selector("#tree svg")
    assert query_of(page.url) == {"order": "position", "page": "2"}
    back = page.locator("#back-to-queue")
    assert query_of(back.get_attribute("href")) == {"order": "position", "page": "2"}
    screenshot(page, "editor-back-to-queue-page-2")
    back.click()
    page.wait_for_url(lambda url: "/workspace/treebanks/" in url)
    assert query_of(page.url) == {"order": "position", "page": "2"}
    assert queue_listed(page) == demo.pool[4:8]
    assert "Page 2 of 3" in page.inner_text("nav.pager")
    assert page.locator("select[name=order]").input_value() == "position"

    # "next in queue" keeps the filters and the page; so does the way back from there
    page.click("ol.queue li:nth-child(3) a")
    page.wait_for_selector("#tree svg")
    page.keyboard.press("]")
    page.wait_for_url(lambda url: f"/workspace/sentences/{demo.pool[7]}?" in url)
    page.wait_for_selector("#tree svg")
    assert query_of(page.url) == {"order": "position", "page": "2"}
    page.click("#next-sentence")
    page.wait_for_url(lambda url: f"/workspace/sentences/{demo.pool[8]}?" in url)
    page.wait_for_selector("#tree svg")
    assert query_of(page.url) == {"order": "position", "page": "2"}
    page.click("#back-to-queue")
    page.wait_for_url(lambda url: "/workspace/treebanks/" in url)
    assert query_of(page.url) == {"order": "position", "page": "2"}
    assert queue_listed(page) == demo.pool[4:8]

    # from page 1 there is no page to keep
    page.click("nav.pager a[rel=prev]")
    page.wait_for_url(lambda url: "page=1" in url)
    page.click("ol.queue li:first-child a")
    page.wait_for_selector("#tree svg")
    assert query_of(page.locator("#back-to-queue").get_attribute("href")) == {"order": "position"}
