"""Re-parsing around the annotator's arcs in a real browser: a moved head re-parses the rest,
the consequential changes are highlighted, one undo takes the whole step back, and the toggle
turns it off (remembered across pages).

The demo treebank is pre-annotated once (inline job, the demo's three members, cheap settings).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job
from app.jobs import create_job, run_job
from app.models import Document, Sentence, Treebank, User
from app.services.demo import setup_demo
from tests.browser.helpers import editor_state, open_editor

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
MEMBERS = ["graph1", "eager", "hybrid"]


@pytest.fixture(scope="module")
def sentence_id(live_app: Flask) -> int:
    """The longest pool sentence of the demo treebank, after one pre-annotation round."""
    with live_app.app_context():
        user = db.session.scalars(select(User)).one()
        setup_demo(db.session, user=user, sentences=50)
        treebank = db.session.scalars(select(Treebank)).one()
        job = create_job(db.session, kind="preannotate", user=user, treebank_id=treebank.id,
                         params={"parsers": MEMBERS, "tags": "gold"})
        db.session.commit()
        run_job(live_app, job.id)
        db.session.expire_all()
        done = db.session.get(Job, job.id)
        assert done is not None and done.state == "done", done.error if done else None
        return int(db.session.scalars(select(Sentence.id).join(Document).where(Document.split == "pool")
                                      .order_by(Sentence.n_words.desc(), Sentence.id).limit(1)).one())


def edit_reparse(response: Any) -> bool:
    """A re-parse after an edit (not the editor's warm-up on opening, which has no constraints)."""
    return bool(response.url.endswith("/reparse") and '"id"' in (response.request.post_data or ""))


def shown(page: Any) -> dict[str, Any]:
    """The editor's tree, members, vote shares and highlighted words."""
    state: dict[str, Any] = page.evaluate("""() => { const S = window.arcvoteEditor;
        return {heads: [...S.heads], deprels: [...S.deprels], members: S.members.map((m) => m.heads),
                shares: S.ensemble.scores, reparsed: [...S.reparsed].sort((a, b) => a - b),
                human: [...S.human],
                reparse_members: S.reparse ? S.reparse.members.map((m) => m.heads) : null}; }""")
    return state


def select_word(page: Any, word: int) -> None:
    page.click(f'#tokens tr[data-word="{word}"]')
    page.locator("#tree").focus()
    assert editor_state(page)["selected"] == word


def test_moving_a_head_reparses_and_one_undo_takes_it_back(
    ui: Any, sentence_id: int, screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentence_id)
    assert page.locator("#reparse-toggle").is_visible() and page.locator("#reparse-toggle").is_checked()
    before = shown(page)
    root = before["heads"].index(0) + 1
    word = next(w for w, head in enumerate(before["heads"], start=1) if head == root)
    select_word(page, word)
    with page.expect_response(edit_reparse) as response:
        page.keyboard.press("0")  # the word becomes the root: the old root must attach elsewhere
    assert response.value.status == 200
    page.wait_for_function("window.arcvoteEditor.reparsed.size > 0")
    after = shown(page)
    assert after["heads"][word - 1] == 0 and after["heads"].count(0) == 1
    assert after["heads"][root - 1] != 0 and root in after["reparsed"]
    assert word not in after["reparsed"] and word in after["human"]
    changed = [w for w in range(1, len(after["heads"]) + 1) if w != word and (
        after["heads"][w - 1], after["deprels"][w - 1]) != (before["heads"][w - 1], before["deprels"][w - 1])]
    assert after["reparsed"] == changed
    assert all(m[word - 1] == 0 for m in after["reparse_members"])  # the members re-parsed under the arc
    assert after["members"] == before["members"] and after["shares"] == before["shares"]  # proposals kept
    assert page.locator("#tree .arc.reparsed").count() == len(changed)
    assert page.locator("#tree .token.reparsed").count() == len(changed)
    assert page.locator("#errors").count() == 0
    assert "Re-parsed" in page.locator("#message").inner_text()
    path = screenshot(page, "reparse-highlighted")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path="/tmp/reparse-highlighted.png")
    assert path.is_file()
    page.keyboard.press("u")
    undone = shown(page)
    assert (undone["heads"], undone["deprels"], undone["members"], undone["shares"]) == (
        before["heads"], before["deprels"], before["members"], before["shares"])
    assert undone["reparsed"] == [] and word not in undone["human"]
    assert page.locator("#tree .arc.reparsed").count() == 0
    assert editor_state(page)["dirty"] is False
    page.keyboard.press("U")  # redo brings the whole step back too
    assert shown(page)["heads"] == after["heads"]


def _votes_shown(page: Any) -> list[str]:
    """The selected word's proposals in the panel: "<head> · <n> votes: <names>" each."""
    items = page.locator("#panel .candidates li")
    return [" ".join(items.nth(i).inner_text().split()) for i in range(items.count())]


def test_the_votes_shown_stay_the_members_proposals_after_a_reparse(
    ui: Any, sentence_id: int, screenshot: Shot
) -> None:
    """Issue #30 item 5: a re-parse moves arcs, but the panel's "N votes" and the arc colours
    still say what the members proposed; what the re-parse changed is a separate line."""
    page = ui
    open_editor(page, sentence_id)
    before = shown(page)
    root = before["heads"].index(0) + 1
    word = next(w for w, head in enumerate(before["heads"], start=1) if head == root)
    select_word(page, root)
    votes_before = _votes_shown(page)
    assert votes_before and not page.locator("#reparse-note").is_visible()
    select_word(page, word)
    with page.expect_response(edit_reparse) as response:
        page.keyboard.press("0")  # the old root must attach elsewhere: the re-parse moves its arc
    assert response.value.status == 200
    page.wait_for_function("window.arcvoteEditor.reparsed.size > 0")
    after = shown(page)
    assert root in after["reparsed"]
    select_word(page, root)
    assert _votes_shown(page) == votes_before  # the members' votes, not the re-parse's
    new_head = after["heads"][root - 1]
    votes = sum(member[root - 1] == new_head for member in before["members"])
    colour = "agree" if votes == len(MEMBERS) else "majority" if 2 * votes > len(MEMBERS) else "split"
    arc = page.locator(f"#tree .arc[data-dep='{root}']")
    assert f"agree-{colour}" in (arc.get_attribute("class") or "").split()
    note = page.locator("#reparse-note")
    assert note.is_visible() and note.inner_text().startswith("Re-parse moved this arc")
    reparsed_heads = {member[root - 1] for member in after["reparse_members"] or []}
    assert all(f"→ {head} " in note.inner_text() + " " or (head == 0 and "→ ROOT" in note.inner_text())
               for head in reparsed_heads)
    screenshot(page, "reparse-votes-kept")
    page.keyboard.press("u")  # undo: no re-parse line any more
    assert not page.locator("#reparse-note").is_visible()


def _set_head(page: Any, word: int, head: int) -> None:
    select_word(page, word)
    page.keyboard.press("h")
    page.keyboard.type(str(head))
    page.keyboard.press("Enter")


def test_a_cycle_of_human_arcs_is_not_sent_and_the_editor_says_why(ui: Any, sentence_id: int) -> None:
    """Issue #30 item 7: a cyclic edit was sent, answered 422 and logged a console error."""
    page = ui
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text)
            if message.type == "error" else None)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if request.url.endswith("/reparse")
            and '"id"' in (request.post_data or "") else None)
    open_editor(page, sentence_id)
    page.wait_for_load_state("networkidle")  # the warm-up re-parse on opening has answered
    first, second = 2, 3
    with page.expect_response(edit_reparse) as response:
        _set_head(page, first, second)
    assert response.value.status == 200
    page.wait_for_function("window.arcvoteEditor.reparse !== null")
    _set_head(page, second, first)  # word 3 under word 2 under word 3: a cycle of human arcs
    message = page.locator("#message")
    message.wait_for()
    assert message.inner_text() == (f"Not re-parsed: your arcs form a cycle ({first} → {second} → {first}). "
                                    "Change one of these arcs and the rest is re-parsed again.")
    page.wait_for_timeout(300)
    assert len(asked) == 1  # only the first edit asked for a re-parse
    assert shown(page)["heads"][first - 1] == second and shown(page)["heads"][second - 1] == first
    assert page.locator("#errors").inner_text().count("cycle") == 1  # the save is blocked, as before
    assert console_errors == []
    page.keyboard.press("u")  # undo the cyclic arc: re-parsing goes on
    with page.expect_response(edit_reparse) as again:
        _set_head(page, second, 1 if first != 1 else 4)
    assert again.value.status == 200


def test_a_reply_arriving_while_typing_a_label_keeps_the_field(ui: Any, sentence_id: int) -> None:
    page = ui
    open_editor(page, sentence_id)
    page.wait_for_load_state("networkidle")  # the warm-up re-parse on opening has answered
    held: list[Any] = []
    page.route("**/reparse", lambda route: held.append(route))  # the edit's re-parse waits until released
    select_word(page, 1)
    page.keyboard.press("a")  # accept word 1's arc (a human arc: a re-parse is asked for); on to word 2
    page.wait_for_function("window.arcvoteEditor.human.size > 0")
    word = editor_state(page)["selected"]
    label = next(lab for lab in page.evaluate("window.arcvoteEditor.labels")
                 if len(lab) > 2 and lab not in (shown(page)["deprels"][word - 1], "root"))
    page.keyboard.press("l")
    page.keyboard.press("Control+a")
    page.keyboard.type(label[:2])
    assert len(held) == 1
    with page.expect_response(edit_reparse):
        held[0].continue_()
    page.wait_for_function("window.arcvoteEditor.reparse !== null")  # the reply is applied
    typing = page.evaluate("[document.activeElement.id, document.activeElement.value]")
    assert typing == ["label-input", label[:2]]
    page.keyboard.type(label[2:])
    page.keyboard.press("Enter")
    assert shown(page)["deprels"][word - 1] == label


def test_the_toggle_turns_reparsing_off_and_is_remembered(ui: Any, sentence_id: int) -> None:
    page = ui
    open_editor(page, sentence_id)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if r.url.endswith("/reparse") and '"id"' in (
        r.post_data or "") else None)
    page.uncheck("#reparse-toggle")
    page.locator("#tree").focus()
    before = shown(page)
    root = before["heads"].index(0) + 1
    word = next(w for w, head in enumerate(before["heads"], start=1) if head == root)
    select_word(page, word)
    page.keyboard.press("0")
    page.keyboard.press("a")
    page.wait_for_timeout(500)
    assert requests == []
    after = shown(page)
    assert after["heads"][root - 1] == 0 and after["heads"][word - 1] == 0  # only the human edit: two roots
    assert after["reparsed"] == [] and after["members"] == before["members"]
    open_editor(page, sentence_id)
    assert not page.locator("#reparse-toggle").is_checked()
    page.check("#reparse-toggle")
    assert page.evaluate("localStorage.getItem('arcvote.reparse')") == "on"


def test_a_partial_save_records_provenance_in_the_history(
    ui: Any, sentence_id: int, screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentence_id)
    before = shown(page)
    root = before["heads"].index(0) + 1
    word = next(w for w, head in enumerate(before["heads"], start=1) if head == root)
    select_word(page, word)
    with page.expect_response(edit_reparse):
        page.keyboard.press("0")
    page.wait_for_function("window.arcvoteEditor.reparsed.size > 0")
    with page.expect_response(lambda r: r.url.endswith("/annotations")) as response:
        page.keyboard.press("s")
    assert response.value.status == 201, response.value.json()
    tree = response.value.json()["tree"]
    assert [w for w, source in enumerate(tree["provenance"], start=1) if source == "human"] == [word]
    assert tree["heads"] == shown(page)["heads"]  # the human arc and the ensemble's tree around it
    page.click("#history summary")
    entry = page.locator("#history-list li").first
    entry.locator(".provenance").wait_for()
    assert f"partial: 1 of {len(tree['heads'])} arcs human ({word})" in entry.inner_text()
    entry.scroll_into_view_if_needed()
    page.screenshot(path="/tmp/reparse-history.png")
    screenshot(page, "reparse-partial-history")
    open_editor(page, sentence_id)  # the saved partial tree's human arc is a constraint again
    assert shown(page)["human"] == [word]


def test_a_save_before_the_reparse_answers_keeps_the_saved_tree(ui: Any, sentence_id: int) -> None:
    """A re-parse that answers after the save must not change the tree the annotator saved
    (on a busy server the reply came late and replaced "Saved version N" with a dirty tree)."""
    page = ui
    open_editor(page, sentence_id)
    page.wait_for_load_state("networkidle")
    held: list[Any] = []
    page.route("**/reparse", lambda route: held.append(route))
    before = shown(page)
    root = before["heads"].index(0) + 1
    word = next(w for w, head in enumerate(before["heads"], start=1) if head == root)
    select_word(page, word)
    page.keyboard.press("0")  # two roots until the re-parse answers: attach the old root by hand
    select_word(page, root)
    page.keyboard.press("h")
    page.keyboard.type(str(word))
    page.keyboard.press("Enter")
    page.wait_for_function(f"window.arcvoteEditor.heads[{root - 1}] === {word}")
    saved_heads = shown(page)["heads"]
    with page.expect_response(lambda r: r.url.endswith("/annotations")) as response:
        page.keyboard.press("s")
    assert response.value.status == 201, response.value.json()
    page.wait_for_selector("#message:has-text('Saved version')")
    assert held, "the edits asked for a re-parse"
    with page.expect_response(edit_reparse):
        for route in held:
            route.continue_()
    page.wait_for_timeout(300)
    assert shown(page)["heads"] == saved_heads == response.value.json()["tree"]["heads"]
    assert shown(page)["reparsed"] == []
    assert editor_state(page)["dirty"] is False
    assert "Saved version" in page.locator("#message").inner_text()


def _disputed_and_depths(page: Any) -> tuple[list[int], dict[int, int]]:
    """The words n stops at (members split on head or label, or not all on the shown head) and
    each word's depth in the shown tree."""
    state: dict[str, Any] = page.evaluate("""() => { const S = window.arcvoteEditor;
        return {heads: [...S.heads], members: S.members.map((m) => [m.heads, m.deprels])}; }""")
    heads, members = state["heads"], state["members"]
    disputed = [w for w in range(1, len(heads) + 1)
                if len({(m[0][w - 1], m[1][w - 1]) for m in members}) > 1
                or any(m[0][w - 1] != heads[w - 1] for m in members)]
    depth: dict[int, int] = {}
    for word in range(1, len(heads) + 1):
        node, steps = word, 0
        while node != 0:
            node, steps = heads[node - 1], steps + 1
        depth[word] = steps
    return disputed, depth


def _press_n(page: Any, times: int) -> list[int]:
    """The words ``n`` selects, pressed ``times`` times from the tree."""
    page.locator("#tree").focus()
    selected = []
    for _ in range(times):
        page.keyboard.press("n")
        selected.append(editor_state(page)["selected"])
    return selected


def test_n_goes_top_down_when_chosen_and_the_choice_is_remembered(
    ui: Any, sentence_id: int, screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentence_id)
    assert page.locator("#next-order").input_value() == "sentence"
    disputed, depth = _disputed_and_depths(page)
    assert len(disputed) >= 3, "the longest demo sentence should have several disputed words"
    visited = _press_n(page, len(disputed))
    assert sorted(visited) == sorted(disputed)
    assert visited == sorted(visited, key=lambda w: (w <= 1, w))  # from word 1 on, wrapping to 1 last
    page.select_option("#next-order", "top-down")
    page.reload()
    page.wait_for_selector("#tree svg")
    assert page.locator("#next-order").input_value() == "top-down"
    first_pass = _press_n(page, len(disputed))
    assert sorted(first_pass) == sorted(disputed)
    keys = [(depth[w], w) for w in first_pass]
    start = keys.index(min(keys))  # the pass starts after word 1 in top-down order and wraps round
    assert keys[start:] + keys[:start] == sorted(keys)
    screenshot(page, "editor-next-top-down")
    page.select_option("#next-order", "sentence")
