"""Faults a new user hit in the editor (issue 12), in a real browser.

One module-scoped treebank: a 6-word sentence ("She said he left early .") whose members mostly
agree (``eager`` makes "left" the root and hangs "said" under it as ``parataxis``), and a
100-word sentence with nine members for the timing and the zoom.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.imports import import_conllu
from app.services.trees import add_version
from tests.browser.helpers import editor_state, key_times, open_editor

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]

SHORT = [("She", "PRON", 2, "nsubj"), ("said", "VERB", 0, "root"), ("he", "PRON", 4, "nsubj"),
         ("left", "VERB", 2, "ccomp"), ("early", "ADV", 4, "advmod"), (".", "PUNCT", 2, "punct")]
EAGER = ([2, 4, 4, 0, 4, 2], ["nsubj", "parataxis", "nsubj", "root", "advmod", "punct"])
LONG = 100
MEMBERS = ["graph1", "graph2", "eager", "swap", "hybrid", "neural", "crf", "second", "easyfirst"]


def long_tree() -> tuple[list[int], list[str]]:
    """Blocks of ten words: each block's 5th word heads its block and attaches to word 55."""
    heads, labels = [], []
    for word in range(1, LONG + 1):
        block_head = (word - 1) // 10 * 10 + 5
        if word == 55:
            heads.append(0)
            labels.append("root")
        elif word == block_head:
            heads.append(55)
            labels.append("obl" if word < 55 else "conj")
        else:
            heads.append(block_head)
            labels.append("det" if word % 2 else "amod")
    return heads, labels


def conllu(sent_id: str, rows: list[tuple[str, str, int, str]]) -> str:
    lines = [f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{label}\t_\t_" for i, (form, upos, head, label)
             in enumerate(rows, start=1)]
    return f"# sent_id = {sent_id}\n" + "\n".join(lines) + "\n\n"


@pytest.fixture(scope="module")
def sentences(live_app: Flask) -> dict[str, int]:
    heads, labels = long_tree()
    rows = [(f"w{i}{'x' * (i % 7)}", "NOUN", head, label)
            for i, (head, label) in enumerate(zip(heads, labels, strict=True), 1)]
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        bo = User(username="bo", password_hash="x")
        db.session.add(bo)
        import_conllu(db.session, data=(conllu("short", SHORT) + conllu("long", rows)).encode(),
                      filename="faults.conllu", treebank_name="faults", split="pool", user=ana)
        treebank_id = db.session.scalars(select(Treebank.id).where(Treebank.name == "faults")).one()
        db.session.add(TrainingRound(treebank_id=treebank_id, number=3, parsers=MEMBERS, tags="gold",
                                     model_dir="x", user_id=bo.id,
                                     created_at=datetime.now(UTC) - timedelta(minutes=5)))
        ids = {str(sent_id): int(sid) for sent_id, sid in db.session.execute(
            select(Sentence.sent_id, Sentence.id).join(Document).where(Document.treebank_id == treebank_id))}
        gold = ([h for _, _, h, _ in SHORT], [lab for _, _, _, lab in SHORT])
        for name in ("graph1", "eager"):
            tree = EAGER if name == "eager" else gold
            add_version(db.session, sentence_id=ids["short"], source=name, heads=tree[0], deprels=tree[1],
                        user=bo)
        add_version(db.session, sentence_id=ids["short"], source="ensemble", heads=gold[0], deprels=gold[1],
                    user=bo, scores=[1.0, 0.5, 1.0, 0.5, 1.0, 1.0])
        for m, name in enumerate(MEMBERS):
            member_heads = list(heads)
            for word in range(1 + m, LONG + 1, 9):  # every 9th word (shifted) attaches to its neighbour
                if member_heads[word - 1] not in (0, 55) and word not in (54, 56):
                    member_heads[word - 1] = word + 1 if 0 < word % 10 < 5 else word - 1
            add_version(db.session, sentence_id=ids["long"], source=name, heads=member_heads, deprels=labels,
                        user=bo)
        add_version(db.session, sentence_id=ids["long"], source="ensemble", heads=heads, deprels=labels,
                    user=bo, scores=[0.8] * LONG)
        db.session.commit()
    return ids


def status_line(page: Any) -> str:
    return str(page.inner_text("#status p.meta"))


def test_undo_back_to_the_saved_tree_is_not_unsaved(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    saved = open_editor(page, sentences["short"])
    page.keyboard.press("j")  # word 2, the root: make it depend on its own dependent "left" (a cycle)
    page.keyboard.press("h")
    page.keyboard.type("4")
    page.keyboard.press("Enter")
    page.keyboard.press("s")
    page.wait_for_selector("#message:has-text('Not saved')")
    assert "unsaved changes" in status_line(page)
    page.keyboard.press("u")
    state = editor_state(page)
    assert (state["heads"], state["deprels"]) == (saved["heads"], saved["deprels"])
    assert not state["dirty"] and "· saved" in status_line(page)
    assert page.locator("#message").count() == 0 and page.locator("#errors").count() == 0
    # Changing an arc and changing it back by hand is not an unsaved change either.
    page.keyboard.press("j")  # "he": under "said", then back under "left" (the members' candidate)
    page.keyboard.press("h")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    assert editor_state(page)["dirty"] and "unsaved changes" in status_line(page)
    page.keyboard.press("1")
    assert not editor_state(page)["dirty"] and "· saved" in status_line(page)
    screenshot(page, "editor-faults-undo")


def test_a_root_word_moved_under_another_word_gets_a_voted_label(ui: Any, sentences: dict[str, int]) -> None:
    page = ui
    open_editor(page, sentences["short"])
    page.keyboard.press("j")  # "said", the root
    page.keyboard.press("h")
    page.keyboard.type("4")  # under "left": eager votes parataxis for that head
    page.keyboard.press("Enter")
    state = editor_state(page)
    assert state["heads"][1] == 4 and state["deprels"][1] == "parataxis"
    assert page.input_value("#label-input") == "parataxis"
    assert "only the word attached to ROOT" not in page.inner_text("#status")
    page.keyboard.press("u")
    # "left" becomes the root (labelled root), then the old root goes under it (candidate 2, eager's
    # head) and gets eager's label for that head: the tree is eager's and valid, nothing relabelled.
    for _ in range(2):
        page.keyboard.press("j")
    page.keyboard.press("0")
    assert editor_state(page)["deprels"][3] == "root"
    for _ in range(2):
        page.keyboard.press("k")
    page.keyboard.press("2")
    state = editor_state(page)
    assert state["heads"] == EAGER[0] and state["deprels"] == EAGER[1]
    assert page.locator("#errors").count() == 0
    page.keyboard.press("s")
    page.wait_for_selector("#message:has-text('Saved version 1')")


def test_the_panel_follows_the_selection_and_offers_the_members_labels_first(
    ui: Any, sentences: dict[str, int]
) -> None:
    page = ui
    open_editor(page, sentences["short"])
    page.evaluate("window.labelField = document.querySelector('#label-input')")
    options = "() => [...document.querySelectorAll('#label-list option')].map((o) => o.value)"
    page.keyboard.press("j")  # "said": graph1 keeps it the root, eager puts it under "left" as parataxis
    assert "Word 2: said" in page.inner_text("#panel h2")
    assert page.locator("#panel .current-arc .tag.ok").is_hidden()
    page.keyboard.press("l")
    offered = page.evaluate(options)  # the label of the member that agrees with the current head first
    said = editor_state(page)
    assert offered[0] == said["deprels"][1] and set(offered[:2]) == {"root", "parataxis"}
    assert "nsubj" in offered[2:]
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # accept "said": on to "he", both members' nsubj of "left"
    assert "Word 3: he" in page.inner_text("#panel h2")
    assert page.input_value("#head-input") == "4" and page.input_value("#label-input") == "nsubj"
    page.keyboard.press("l")
    assert page.evaluate(options)[0] == "nsubj"
    page.keyboard.press("Escape")
    page.keyboard.press("k")
    assert page.locator("#panel .current-arc .tag.ok").is_visible()
    assert page.input_value("#head-input") == str(said["heads"][1])
    assert page.input_value("#label-input") == said["deprels"][1]
    # The panel is updated in place, not rebuilt: the field is the one the page started with.
    assert page.evaluate("window.labelField === document.querySelector('#label-input')")
    assert page.locator("#tokens td.reviewed.ticked").count() == 1


def test_save_as_reviewed_marks_every_word(ui: Any, sentences: dict[str, int], screenshot: Shot) -> None:
    page = ui
    open_editor(page, sentences["short"])
    page.keyboard.press("r")
    page.wait_for_selector("#message:has-text('as reviewed')")
    assert "6 of 6 words reviewed · sentence: reviewed" in status_line(page)
    assert page.locator("#tokens td.reviewed.ticked").count() == 6
    assert not editor_state(page)["dirty"]
    screenshot(page, "editor-faults-reviewed")


def test_history_names_the_parsers_and_keep_mine_names_what_it_overwrote(
    ui: Any, live_app: Flask, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    sid = sentences["short"]
    state = open_editor(page, sid)
    with live_app.app_context():
        bo = db.session.scalars(select(User).where(User.username == "bo")).one()
        theirs = add_version(db.session, sentence_id=sid, source="annotation", heads=state["heads"],
                             deprels=state["deprels"], user=bo, expected_version=state["version"])
        db.session.commit()
        theirs_id, theirs_version = theirs.id, theirs.version
    page.keyboard.press("j")
    page.keyboard.press("j")  # "he" under "said": anything that differs from theirs
    page.keyboard.press("h")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.wait_for_selector("#conflict h2")
    page.click("text=Keep mine")
    page.keyboard.press("s")
    page.wait_for_selector(f"#message:has-text('Saved version {theirs_version + 1}')")
    with live_app.app_context():
        mine = db.session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sid,
                                                            TreeVersion.kind == "annotation")
                                  .order_by(TreeVersion.version.desc())).first()
        assert mine is not None and mine.based_on_id == theirs_id
    page.click("#history summary")
    page.wait_for_selector("#history-list li")
    text = page.inner_text("#history-list")
    assert "eager v1 by eager (round 3)" in text and "ensemble v1 by the ensemble (round 3)" in text
    assert "by bo" not in text.replace(f"annotation v{theirs_version} by bo", "")
    assert f"(from annotation v{theirs_version})" in text
    screenshot(page, "editor-faults-history")


def test_keys_on_a_100_word_sentence_stay_under_16_ms(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentences["long"])
    assert len(editor_state(page)["words"]) == LONG
    least_disturbed, medians = key_times(page, ("j", "j", "k", "n", "1", "a"), rounds=12)
    print("ms per key on 100 words:", least_disturbed, "median:", medians)
    assert all(value < 16 for value in least_disturbed.values()), least_disturbed
    state = editor_state(page)
    assert page.locator(f"#tree .token.selected[data-id='{state['selected']}']").count() == 1
    assert page.locator("#tree .token.selected").count() == 1
    assert page.locator(f"#tokens tr.selected[data-word='{state['selected']}']").count() == 1


def test_a_100_word_tree_fits_the_box(ui: Any, sentences: dict[str, int], screenshot: Shot) -> None:
    page = ui
    page.goto("/")
    page.evaluate("localStorage.setItem('arcvote.focus', 'off')")  # whole tree (window: test_focus_window.py)
    open_editor(page, sentences["long"])
    width = "() => { const t = document.querySelector('#tree'); return [t.scrollWidth, t.clientWidth]; }"
    scroll, box = page.evaluate(width)
    assert scroll > 3 * box  # at 100% the tree is several boxes wide
    page.click("#zoom-fit")
    scroll, box = page.evaluate(width)
    assert scroll <= box and page.get_attribute("#zoom-fit", "aria-pressed") == "true"
    fit_shot = screenshot(page, "editor-faults-fit").with_name("editor-faults-fit-tree.png")
    page.locator(".editor-main").screenshot(path=str(fit_shot))
    for _ in range(3):
        page.keyboard.press("+")
    level = page.inner_text("#zoom-level")
    scroll, box = page.evaluate(width)
    assert scroll > box and level.endswith("%") and int(level[:-1]) < 100
    for _ in range(40):
        page.keyboard.press("j")  # the selected word scrolls into view
    visible = page.evaluate("""() => { const t = document.querySelector('#tree').getBoundingClientRect();
        const w = document.querySelector('#tree .token.selected').getBoundingClientRect();
        return w.left >= t.left && w.right <= t.right; }""")
    assert visible
    zoomed_shot = screenshot(page, "editor-faults-zoomed").with_name("editor-faults-zoomed-tree.png")
    page.locator(".editor-main").screenshot(path=str(zoomed_shot))
    page.reload()
    page.wait_for_selector("#tree svg")
    assert page.inner_text("#zoom-level") == level  # the zoom is kept
