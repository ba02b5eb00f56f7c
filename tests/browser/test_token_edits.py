"""Token and sentence split and merge in the editor (issue #32), in a real browser: the Tokens menu
is reached by keyboard (T), splitting a word draws one more word and one more arc (the new word
hangs from the first part), merging it back draws the original words and arcs, a multiword token
is made and undone, the sentence is split in two (the second part its own sentence), merged again
and the merge undone, and a refused edit names what is wrong. Screenshots under test-artifacts/
(token-*.png)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.models import Sentence
from app.services.trees import add_version
from tests.browser.helpers import editor_state, import_one_sentence, open_editor

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]

ROWS = [
    ("We", "we", "PRON", 3, "nsubj"),
    ("will", "will", "AUX", 3, "aux"),
    ("stop", "stop", "VERB", 0, "root"),
    ("thecat", "thecat", "NOUN", 3, "obj"),
    ("now", "now", "ADV", 3, "advmod"),
    (".", ".", "PUNCT", 3, "punct"),
]


@pytest.fixture(scope="module")
def sentence_id(live_app: Flask) -> int:
    """One pool sentence ("We will stop thecat now.") with a member's and the ensemble's tree."""
    lines = [
        f"{i}\t{form}\t{lemma}\t{upos}\t_\t_\t_\t_\t_\t{'SpaceAfter=No' if i == 5 else '_'}"
        for i, (form, lemma, upos, _, _) in enumerate(ROWS, start=1)
    ]
    text = "# sent_id = tok\n# text = We will stop thecat now.\n" + "\n".join(lines) + "\n\n"
    with live_app.app_context():
        ana, sid = import_one_sentence(db.session, text, "tokens")
        heads, labels = [r[3] for r in ROWS], [r[4] for r in ROWS]
        for source in ("graph1", "ensemble"):
            add_version(
                db.session,
                sentence_id=sid,
                source=source,
                heads=heads,
                deprels=labels,
                user=ana,
                scores=[1.0] * len(ROWS) if source == "ensemble" else None,
            )
        db.session.commit()
    return int(sid)


def drawn(page: Any) -> tuple[list[str], int]:
    """The forms of the words drawn in the editor's tree, and the number of arcs drawn."""
    forms = page.locator("#tree .token .form").evaluate_all("nodes => nodes.map((n) => n.textContent)")
    arcs = page.locator("#tree .arcs .arc-line").count()
    return forms, arcs


def reload_done(page: Any, action: Callable[[], None]) -> None:
    """Do ``action`` (a token edit) and wait for the reloaded editor."""
    with page.expect_navigation():
        action()
    page.wait_for_selector("#tree svg")


def test_split_and_merge_a_word_redraw_the_tree(ui: Any, sentence_id: int, screenshot: Shot) -> None:
    page = ui
    open_editor(page, sentence_id)
    forms, arcs = drawn(page)
    assert forms == ["We", "will", "stop", "thecat", "now", "."] and arcs == 6
    for _ in range(3):
        page.keyboard.press("j")  # word 4, "thecat"
    page.keyboard.press("T")  # the Tokens menu opens, its first control focused
    assert page.evaluate("() => document.querySelector('#tokens-menu').open")
    assert page.evaluate("() => document.activeElement.id") == "split-at"
    assert page.inner_text("#tokens-word") == "4 thecat"
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # fits the page
    screenshot(page, "token-menu")
    page.keyboard.press("Control+A")
    page.keyboard.type("3")
    page.keyboard.press("Tab")  # on to the Split word button
    assert page.evaluate("() => document.activeElement.id") == "split-word"
    reload_done(page, lambda: page.keyboard.press("Enter"))
    forms, arcs = drawn(page)
    assert forms == ["We", "will", "stop", "the", "cat", "now", "."] and arcs == 7
    state = editor_state(page)
    assert state["heads"][4] == 4 and state["deprels"][4] == "dep"  # cat hangs from the
    assert state["heads"][3] == 3 and state["deprels"][3] == "obj"  # the keeps thecat's arc
    assert "Split word 4" in page.inner_text("#status")
    assert page.inner_text(".sentence-text") == "We will stop thecat now."  # the text is kept
    assert "5 cat" in page.inner_text("#notes-list")  # the arc to check, in a note
    screenshot(page, "token-split")

    for _ in range(3):
        page.keyboard.press("j")  # the reloaded editor starts on word 1: to word 4, "the"
    assert editor_state(page)["selected"] == 4
    page.keyboard.press("T")
    reload_done(page, lambda: page.click("#merge-words"))
    forms, arcs = drawn(page)
    assert forms == ["We", "will", "stop", "thecat", "now", "."] and arcs == 6
    assert editor_state(page)["heads"] == [r[3] for r in ROWS]
    page.click("#history summary")
    page.wait_for_selector("#history-list li")
    history = page.inner_text("#history-list")
    assert "token edit: merge words" in history and "for the earlier tokens" in history
    screenshot(page, "token-merge")


def test_multiword_token_sentence_split_and_refusals(
    ui: Any, live_app: Flask, sentence_id: int, screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentence_id)
    page.keyboard.press("j")  # word 2, "will"
    page.keyboard.press("T")
    page.fill("#mwt-last", "3")
    page.fill("#mwt-form", "willstop")
    reload_done(page, lambda: page.click("#add-multiword"))
    assert page.inner_text(".sentence-text") == "We willstop thecat now."
    page.keyboard.press("j")
    page.keyboard.press("T")
    assert page.inner_text("#mwt-shown") == "2-3 willstop"
    screenshot(page, "token-multiword")
    reload_done(page, lambda: page.click("#remove-multiword"))
    assert page.inner_text(".sentence-text") == "We willstop thecat now."  # its words written together

    # a refused edit: the split point is outside the form; nothing changes, the error is shown
    page.keyboard.press("T")
    page.fill("#split-at", "9")
    page.click("#split-word")
    page.wait_for_selector("#status:has-text('Tokens not changed')")
    assert "at:" in page.inner_text("#status") and drawn(page)[1] == 6

    page.keyboard.press("Escape")  # out of the field the refusal focused, back to the tree
    for _ in range(2):
        page.keyboard.press("j")  # from word 1 to word 3, "stop"
    selected = editor_state(page)["selected"]
    assert selected == 3
    page.keyboard.press("T")
    reload_done(page, lambda: page.click("#split-sentence"))
    forms, arcs = drawn(page)
    assert forms == [r[0] for r in ROWS][:selected] and arcs == selected
    screenshot(page, "token-sentence-split")
    with live_app.app_context():
        rest = db.session.query(Sentence).filter(Sentence.sent_id == "tok-2").one()
        rest_id = rest.id
    open_editor(page, rest_id)
    forms, arcs = drawn(page)
    assert forms == [r[0] for r in ROWS][selected:] and arcs == len(ROWS) - selected
    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#tree svg")
    page.keyboard.press("T")
    reload_done(page, lambda: page.click("#merge-sentence"))  # the two parts one sentence again
    forms, arcs = drawn(page)
    assert forms == [r[0] for r in ROWS] and arcs == 6
    state = editor_state(page)
    assert state["heads"][3] == 3 and state["deprels"][3] == "parataxis"  # the second part's root
    assert page.inner_text(".sentence-text") == "We willstop thecat now."
    with live_app.app_context():
        assert db.session.query(Sentence).filter(Sentence.sent_id == "tok-2").count() == 0
    screenshot(page, "token-sentence-merge")
    page.keyboard.press("T")
    reload_done(page, lambda: page.click("#undo-token-edit"))  # undo the merge: the second part is back
    assert drawn(page) == ([r[0] for r in ROWS][:selected], selected)
    with live_app.app_context():
        assert db.session.query(Sentence).filter(Sentence.sent_id == "tok-2").one().n_words == 3
