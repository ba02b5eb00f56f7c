"""Word columns in the editor (issue 12), in a real browser: edit UPOS and FEATS of a word by
keyboard, save, reload and see them; see the UD validator's warning on that word; a bad value
is refused naming the word and the field; the values offered come from the treebank."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.services.trees import add_version
from tests.browser.helpers import import_one_sentence, open_editor

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]

ROWS = [("She", "she", "PRON", "Case=Nom|Number=Sing", 2, "nsubj"),
        ("said", "say", "VERB", "Tense=Past", 0, "root"),
        ("he", "he", "PRON", "Case=Nom|Number=Sing", 4, "nsubj"),
        ("left", "leave", "VERB", "Tense=Past", 2, "ccomp"),
        ("early", "early", "ADV", "_", 4, "advmod"), (".", ".", "PUNCT", "_", 2, "punct")]
SPACE = {True: "SpaceAfter=No", False: "_"}


@pytest.fixture(scope="module")
def sentence_id(live_app: Flask) -> int:
    """One pool sentence with two members' trees and the ensemble's."""
    lines = [f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{label}\t_\t{SPACE[i == 5]}"
             for i, (form, lemma, upos, feats, head, label) in enumerate(ROWS, start=1)]
    text = "# sent_id = cols\n# text = She said he left early.\n" + "\n".join(lines) + "\n\n"
    with live_app.app_context():
        ana, sid = import_one_sentence(db.session, text, "columns")
        heads, labels = [r[4] for r in ROWS], [r[5] for r in ROWS]
        for source in ("graph1", "eager", "ensemble"):
            add_version(db.session, sentence_id=sid, source=source, heads=heads, deprels=labels, user=ana,
                        scores=[1.0] * len(ROWS) if source == "ensemble" else None)
        db.session.commit()
    return int(sid)


def columns(page: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = page.evaluate("() => window.arcvoteEditor.columns")
    return found


def test_edit_upos_and_feats_save_reload_and_see_a_warning(
    ui: Any, sentence_id: int, screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentence_id)
    page.wait_for_function("() => document.querySelectorAll('#upos-list option').length === 17")
    offered = page.locator("#upos-list option").evaluate_all("options => options.map((o) => o.value)")
    assert set(offered[:2]) == {"PRON", "VERB"}  # the treebank's tags, most frequent first
    assert "Case=Nom" in page.locator("#feats-list option").evaluate_all("os => os.map((o) => o.value)")
    for _ in range(4):
        page.keyboard.press("j")  # word 5, "early"
    page.wait_for_selector("#word-fields-word:text-is('5 early')")  # the fields follow the selection
    page.keyboard.press("t")  # the UPOS field, its value selected
    assert page.evaluate("() => document.activeElement.id") == "upos-input"
    page.keyboard.type("PUNCT")
    page.keyboard.press("Tab")  # applies UPOS, on to XPOS
    assert columns(page)["upos"][4] == "PUNCT"
    assert page.inner_text("#tokens tbody tr:nth-child(5) td.upos") == "PUNCT"
    assert page.locator("#tree .token[data-id='5'] .upos").text_content() == "PUNCT"
    page.fill("#feat-add", "Degree=Pos")
    page.dispatch_event("#feat-add", "change")
    page.fill("#feat-add", "Abbr=Yes")
    page.dispatch_event("#feat-add", "change")
    assert columns(page)["feats"][4] == "Abbr=Yes|Degree=Pos"  # merged in UD order
    page.wait_for_function("() => document.querySelector('#feats-input').value === 'Abbr=Yes|Degree=Pos'")
    page.keyboard.press("Escape")
    page.keyboard.press("u")  # one undo takes the last feature back
    assert columns(page)["feats"][4] == "Degree=Pos"
    page.keyboard.press("U")
    page.keyboard.press("s")
    page.wait_for_selector("#message:has-text('Saved version 1')")
    warning = page.locator("#ud-warnings li[data-test='upos-rel-punct']")
    assert warning.count() == 1 and warning.get_attribute("data-word") == "5"
    assert "PUNCT" in warning.inner_text() and "word 5 early" in warning.inner_text()
    screenshot(page, "token-columns-saved")
    page.reload()
    page.wait_for_selector("#tree svg")
    saved = columns(page)
    assert saved["upos"][4] == "PUNCT" and saved["feats"][4] == "Abbr=Yes|Degree=Pos"
    assert saved["upos"][3] == "VERB" and saved["lemma"][3] == "leave"
    assert page.locator("#ud-warnings li[data-test='upos-rel-punct']").count() == 1
    page.locator("#ud-warnings li[data-test='upos-rel-punct'] button").click()  # the warning selects its word
    assert page.evaluate("() => window.arcvoteEditor.selected") == 5
    page.wait_for_function("() => document.querySelector('#upos-input').value === 'PUNCT'")
    page.click("#history summary")
    page.wait_for_selector("#history-list .column-change")
    history = page.inner_text("#history-list")
    assert "word 5 early: UPOS ADV → PUNCT" in history
    assert "word 5 early: FEATS _ → Abbr=Yes|Degree=Pos" in history
    screenshot(page, "token-columns-reloaded")


def test_a_bad_value_is_refused_naming_word_and_field(ui: Any, sentence_id: int, screenshot: Shot) -> None:
    page = ui
    open_editor(page, sentence_id)
    version = page.evaluate("() => window.arcvoteEditor.version")
    page.keyboard.press("j")  # word 2, "said"
    page.keyboard.press("t")
    page.keyboard.type("VB")
    page.keyboard.press("Enter")  # applies every field and goes back to the tree
    assert page.evaluate("() => document.activeElement.id") == "tree"
    page.keyboard.press("s")
    page.wait_for_selector("#message:has-text('Not saved')")
    assert "word 2 (said): UPOS 'VB' must be one of the 17 UD tags" in page.inner_text("#errors")
    assert page.evaluate("() => window.arcvoteEditor.version") == version
    screenshot(page, "token-columns-refused")
    page.keyboard.press("u")
    assert columns(page)["upos"][1] != "VB" and not page.evaluate("() => window.arcvoteEditor.dirty")
