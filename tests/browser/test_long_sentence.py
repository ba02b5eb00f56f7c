"""The editor stays responsive on the longest sentence import allows (500 words, nine members):
it opens within seconds and every key answers within a frame budget."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.services.imports import MAX_SENTENCE_WORDS
from app.services.trees import add_version
from tests.browser.helpers import block_tree as blocks
from tests.browser.helpers import editor_state, import_one_sentence, key_times

pytestmark = pytest.mark.browser
N = MAX_SENTENCE_WORDS
MEMBERS = ["graph1", "graph2", "eager", "swap", "hybrid", "neural", "eager-rtl", "swap-rtl", "hybrid-rtl"]
KEY_BUDGET_MS = 100
"""A key may take this long on 500 words: an answer within 0.1 s feels instant. Measured 19-39 ms
(idle machine) and 25-90 ms (two cores shared by ten processes); 100 words stay under 16 ms
(tests/browser/test_editor_faults.py)."""


def block_tree(n: int) -> tuple[list[int], list[str]]:
    """Blocks of ten words: each block's 5th word heads its block and attaches to word 255."""
    return blocks(n, n // 2 + 5)


@pytest.fixture(scope="module")
def sentence_id(live_app: Flask) -> int:
    heads, labels = block_tree(N)
    rows = [f"{i}\tw{i}{'x' * (i % 7)}\t_\tNOUN\t_\t_\t{h}\t{lab}\t_\t_"
            for i, (h, lab) in enumerate(zip(heads, labels, strict=True), start=1)]
    data = "# sent_id = longest\n" + "\n".join(rows) + "\n\n"
    with live_app.app_context():
        ana, sid = import_one_sentence(db.session, data, "long")
        for m, name in enumerate(MEMBERS):
            member_heads = list(heads)
            for word in range(1 + m, N + 1, 9):  # every 9th word (shifted) attaches elsewhere
                if member_heads[word - 1] != 0 and word % 10 != 5:
                    member_heads[word - 1] = (word - 1) // 10 * 10 + 5 + (10 if word < N - 10 else -10)
            add_version(db.session, sentence_id=sid, source=name, heads=member_heads, deprels=labels,
                        user=ana)
        add_version(db.session, sentence_id=sid, source="ensemble", heads=heads, deprels=labels, user=ana,
                    scores=[0.8] * N)
        db.session.commit()
        return int(sid)


def test_a_500_word_sentence_opens_and_answers_keys_quickly(
    ui: Any, sentence_id: int
) -> None:
    page = ui
    started = time.perf_counter()
    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#tree svg")
    opened = time.perf_counter() - started
    assert len(editor_state(page)["words"]) == N
    least_disturbed, medians = key_times(page, ("j", "j", "k", "n", "1", "a"), rounds=8)
    print(f"500 words: opened in {opened:.2f} s; ms per key: {least_disturbed}, median {medians}")
    assert opened < 10
    assert all(value < KEY_BUDGET_MS for value in least_disturbed.values()), least_disturbed
    state = editor_state(page)
    assert page.locator(f"#tree .token.selected[data-id='{state['selected']}']").count() == 1
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path="/tmp/safety-editor-500-words.png")  # the viewport: the page is 500 rows long
