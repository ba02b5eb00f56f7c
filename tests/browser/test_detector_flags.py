"""Words the round's arc error detector flags are doubtful in the editor (issue #32): drawn as
flagged in the tree and the table, and left to the annotator by A (accept all agreed arcs) even
when every member agrees on them.

The demo's pool gets its trees straight from the database (tests/browser/helpers.py): ``graph1``
and the ensemble have the gold tree, ``eager`` moves one leaf, so every other word is agreed.
One sentence gets detector scores with a single agreed word flagged. Screenshot:
``detector-flagged-after-accept-agreed``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import SentenceState, User
from parsing.semi.partial import FLAG_P_WRONG
from tests.browser.helpers import leaves, open_editor, store_pool_trees

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def flagged(live_app: Flask) -> tuple[int, int, int, int]:
    """``(sentence id, its number of words, the flagged word, the word eager moved)``."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        stored = store_pool_trees(db.session, ana)
        sentence_id = next(s for s in stored.pool if leaves(stored.ensemble[s][0]) and
                           len(stored.ensemble[s][0]) >= 5)
        heads = stored.ensemble[sentence_id][0]
        moved = leaves(heads)[0]
        word = next(w for w in range(2, len(heads) + 1) if w != moved and heads[w - 1] != 0)  # not selected
        state = db.session.get(SentenceState, sentence_id)
        assert state is not None
        state.p_wrong = [0.93 if w == word else 0.04 for w in range(1, len(heads) + 1)]
        db.session.commit()
        return sentence_id, len(heads), word, moved


def test_accept_agreed_leaves_the_flagged_word_to_the_annotator(
        ui: Any, flagged: tuple[int, int, int, int], screenshot: Shot) -> None:
    page = ui
    sentence_id, n, word, moved = flagged
    open_editor(page, sentence_id)
    row = page.locator(f"#tokens tr[data-word='{word}']")
    assert "flagged" in (row.get_attribute("class") or "").split()
    assert row.get_attribute("title") == "error detector: p_wrong 0.93 (flagged)"
    assert page.locator("#tokens tr.flagged").count() == 1
    token = page.locator(f"#tree .token[data-id='{word}']")
    assert "flagged" in (token.get_attribute("class") or "").split()
    assert page.locator("#tree .token.flagged").count() == 1
    fill = page.evaluate("(w) => getComputedStyle(document.querySelector("
                         "`#tree .token[data-id='${w}'] .token-box`)).fill", word)
    other = page.evaluate("(w) => getComputedStyle(document.querySelector("
                          "`#tree .token[data-id='${w}'] .token-box`)).fill", moved)
    assert fill == "rgb(255, 243, 224)" and fill != other  # drawn apart from the unflagged words
    page.keyboard.press("A")
    page.wait_for_selector("#message:has-text('all members agree on')")
    message = page.locator("#message").inner_text()
    assert f"Accepted {n - 2} arc(s) all members agree on." in message
    assert f"Left 1 that the error detector flags (p_wrong ≥ {FLAG_P_WRONG})" in message
    ticked = page.evaluate("""() => [...document.querySelectorAll('#tokens tbody tr')]
        .filter((tr) => tr.querySelector('td.reviewed').classList.contains('ticked'))
        .map((tr) => Number(tr.dataset.word))""")
    assert ticked == [w for w in range(1, n + 1) if w not in (word, moved)]  # neither flagged nor disputed
    human = page.evaluate("() => [...window.arcvoteEditor.human].sort((a, b) => a - b)")
    assert word not in human and moved not in human
    screenshot(page, "detector-flagged-after-accept-agreed")
    # the next-disputed key stops at the flagged word, though every member agrees on it
    page.evaluate("() => { window.arcvoteEditor.selected = 1; }")
    order = page.evaluate("() => window.arcvoteEditor.nextOrder")
    page.keyboard.press("n")
    selected = page.evaluate("() => window.arcvoteEditor.selected")
    assert selected in (word, moved), order
    page.keyboard.press("a")  # accept it: then the other one is next
    page.keyboard.press("n")
    assert page.evaluate("() => window.arcvoteEditor.selected") == ({word, moved} - {selected}).pop()


def test_a_sentence_without_detector_scores_flags_nothing(ui: Any, flagged: tuple[int, int, int, int],
                                                          live_app: Flask) -> None:
    page = ui
    with live_app.app_context():
        other = db.session.scalars(select(SentenceState.sentence_id).where(
            SentenceState.sentence_id != flagged[0], SentenceState.p_wrong.is_(None))).first()
    assert other is not None
    open_editor(page, other)
    assert page.locator("#tokens tr.flagged").count() == 0
    assert page.locator("#tree .token.flagged").count() == 0
    page.keyboard.press("A")
    page.wait_for_selector("#message:has-text('all members agree on')")
    assert "error detector" not in page.locator("#message").inner_text()
