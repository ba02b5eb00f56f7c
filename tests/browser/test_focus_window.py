"""Long sentences in the editor (issue 30, item 3): the focused window keeps the selected word,
its head, its dependents and the heads the members propose drawn at a readable size; the word
whose head is being chosen stays in view while the annotator moves the window; the members'
trees are not clipped; the overlay shows only the selected word's proposals.

One module-scoped treebank: a 150-word sentence and a 30-word one, nine members each. Member m
attaches every ninth word (from word m+1) to a block head 2/5 of the sentence away (60 words of
150), so the selected word's proposed heads lie far apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, Treebank, User
from app.services.imports import import_conllu
from app.services.trees import add_version
from tests.browser.helpers import block_tree as blocks
from tests.browser.helpers import editor_state, open_editor

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
MEMBERS = ["graph1", "graph2", "eager", "swap", "hybrid", "neural", "crf", "second", "easyfirst"]
READABLE_PX = 12
"""The smallest font size (px on screen) a word of the editor's tree may be drawn at."""
SMALL_PX = 9
"""The same for the members' small multiples (drawn at 72%: 13 px words come out at 9.4 px)."""


def block_tree(n: int) -> tuple[list[int], list[str]]:
    """Blocks of ten words: each block's 5th word heads its block and attaches to the middle block's head."""
    return blocks(n, (n // 2 - 1) // 10 * 10 + 5)


def member_heads(heads: list[int], m: int) -> list[int]:
    """Member ``m``'s tree: every ninth word (from m+1) that is a leaf attaches to the block head
    2n/5 words on (60 of 150)."""
    n = len(heads)
    out = list(heads)
    for word in range(1 + m, n + 1, 9):
        if word not in heads and heads[word - 1] != 0:
            far = ((word - 1 + 2 * n // 5) % n) // 10 * 10 + 5
            if far <= n and far != word:
                out[word - 1] = far
    return out


def conllu(sent_id: str, n: int) -> str:
    heads, labels = block_tree(n)
    rows = [f"{i}\tw{i}{'x' * (i % 5)}\t_\tNOUN\t_\t_\t{h}\t{lab}\t_\t_"
            for i, (h, lab) in enumerate(zip(heads, labels, strict=True), start=1)]
    return f"# sent_id = {sent_id}\n" + "\n".join(rows) + "\n\n"


@pytest.fixture(scope="module")
def sentences(live_app: Flask) -> dict[str, int]:
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        import_conllu(db.session, data=(conllu("long", 150) + conllu("thirty", 30)).encode(),
                      filename="focus.conllu", treebank_name="focus", split="pool", user=ana)
        treebank_id = db.session.scalars(select(Treebank.id).where(Treebank.name == "focus")).one()
        ids = {str(sent_id): int(sid) for sent_id, sid in db.session.execute(
            select(Sentence.sent_id, Sentence.id).join(Document).where(Document.treebank_id == treebank_id))}
        for name, n in (("long", 150), ("thirty", 30)):
            heads, labels = block_tree(n)
            for m, member in enumerate(MEMBERS):
                add_version(db.session, sentence_id=ids[name], source=member, heads=member_heads(heads, m),
                            deprels=labels, user=ana)
            add_version(db.session, sentence_id=ids[name], source="ensemble", heads=heads, deprels=labels,
                        user=ana, scores=[0.8] * n)
        db.session.commit()
    return ids


IN_VIEW = """([box, ids]) => {
  const frame = document.querySelector(box).getBoundingClientRect();
  return ids.map((id) => {
    const token = document.querySelector(`${box} .token[data-id="${id}"]`);
    if (!token) return [id, "not drawn", 0];
    const r = token.getBoundingClientRect();
    const form = token.querySelector("text.form");
    const svg = token.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const px = parseFloat(getComputedStyle(form).fontSize) * scale;
    const inside = r.left >= frame.left - 1 && r.right <= frame.right + 1
      && r.top >= frame.top - 1 && r.bottom <= frame.bottom + 1;
    return [id, inside ? "in view" : "out of view", px];
  });
}"""
"""For each word id: [id, "in view" | "out of view" | "not drawn", its font size on screen in px]."""


MULTIPLES = "localStorage.removeItem('arcvote.focus'); localStorage.setItem('arcvote.view', 'multiples')"
"""The stored choices back to their defaults: the window automatic, the members as small multiples."""


def candidates(word: int, n: int) -> list[int]:
    """The heads the members and the ensemble propose for ``word`` (ROOT left out)."""
    heads, _ = block_tree(n)
    proposed = {member_heads(heads, m)[word - 1] for m in range(len(MEMBERS))} | {heads[word - 1]}
    return sorted(h for h in proposed if h > 0)


def select_word(page: Any, word: int) -> None:
    page.click(f'#tokens tr[data-word="{word}"]')
    page.locator("#tree").focus()
    assert editor_state(page)["selected"] == word


def region(page: Any, selector: str, path: Path) -> None:
    """A screenshot of the element ``selector`` beside the full-page one at ``path`` (name-tree.png)."""
    page.locator(selector).screenshot(path=str(path.with_name(path.stem + "-tree.png")))


def check_readable(page: Any, box: str, ids: list[int], px: float = READABLE_PX) -> None:
    shown = page.evaluate(IN_VIEW, [box, ids])
    assert all(where == "in view" for _, where, _ in shown), shown
    assert all(size >= px for _, _, size in shown), shown


def test_the_focused_window_keeps_the_selected_word_and_its_proposed_heads_readable(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    open_editor(page, sentences["long"])
    assert page.get_attribute("#focus-toggle", "aria-pressed") == "true"  # on by default above 40 words
    word = 11  # member 1 attaches it ~60 words away, the others to its block head 15
    heads, _ = block_tree(150)
    proposed = candidates(word, 150)
    assert len(proposed) >= 2 and max(proposed) - min(proposed) > 40, proposed
    select_word(page, word)
    dependents = [w for w, h in enumerate(heads, start=1) if h == word]
    check_readable(page, "#tree", [word, *proposed, *dependents])
    drawn = page.locator("#tree .token").count()
    assert 8 <= drawn < 150
    assert page.locator("#tree .elided").count() >= 1
    tree_box = page.evaluate(
        "() => { const t = document.querySelector('#tree'); return [t.scrollWidth, t.clientWidth]; }")
    assert tree_box[0] <= tree_box[1] + 2, tree_box  # the window fits the box: nothing to scroll to
    # moving along the sentence: the selection follows, the window with it
    for _ in range(30):
        page.keyboard.press("j")
    selected = editor_state(page)["selected"]
    assert selected == word + 30
    check_readable(page, "#tree", [selected, *candidates(selected, 150)])
    region(page, ".editor-main", screenshot(page, "focus-150-words"))
    # off: every word is drawn (and the choice is kept)
    page.keyboard.press("w")
    assert page.get_attribute("#focus-toggle", "aria-pressed") == "false"
    assert page.locator("#tree .token").count() == 150 and page.locator("#tree .elided").count() == 0
    page.reload()
    page.wait_for_selector("#tree svg")
    assert page.locator("#tree .token").count() == 150
    page.keyboard.press("w")
    assert page.locator("#tree .token").count() < 150


def test_the_dependent_stays_in_view_while_its_head_is_chosen(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto("/")
    page.evaluate("localStorage.removeItem('arcvote.focus')")
    open_editor(page, sentences["long"])
    word = 3
    page.click(f'#tree .token[data-id="{word}"]')
    assert editor_state(page)["pending"] == word
    target = 120  # far to the right: reached by moving the window, not by selecting it
    for _ in range(60):
        if page.locator(f'#tree .token[data-id="{target}"]').count():
            break
        page.keyboard.press(".")
        check_readable(page, "#tree", [word])  # the dependent never leaves the box
        assert editor_state(page)["pending"] == word
    check_readable(page, "#tree", [word, target])
    region(page, ".editor-main", screenshot(page, "focus-choosing-a-head"))
    page.click(f'#tree .token[data-id="{target}"]')
    state = editor_state(page)
    assert state["heads"][word - 1] == target and state["pending"] is None and state["selected"] == word
    check_readable(page, "#tree", [word, target])  # after the choice: the dependent and its new head
    # an elided run is a button: clicking it moves the window there, the selection stays drawn
    page.locator("#tree .elided").last.click()
    assert editor_state(page)["selected"] == word
    check_readable(page, "#tree", [word, target])


def test_small_multiples_draw_every_arc_of_a_30_word_sentence_and_scroll(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto("/")
    page.evaluate(MULTIPLES)
    open_editor(page, sentences["thirty"])
    assert page.get_attribute("#focus-toggle", "aria-pressed") == "false"  # 30 words: every word drawn
    figures = page.locator("#members figure")
    assert figures.count() == len(MEMBERS)
    for i in range(len(MEMBERS)):
        box = f"#members figure[data-member='{i}'] .tree-scroll"
        assert page.locator(f"{box} .arc").count() == 30
        assert page.locator(f"{box} .token").count() == 30
        page.evaluate("(box) => { const b = document.querySelector(box); b.scrollLeft = b.scrollWidth; }",
                      box)
        last = page.evaluate(IN_VIEW, [box, [30]])
        assert last[0][1] == "in view", last  # the box scrolls to its last word: nothing is cut off
    region(page, "#members", screenshot(page, "focus-multiples-30-words"))


def test_long_sentence_members_and_overlay_show_the_selected_word(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto("/")
    page.evaluate(MULTIPLES)
    open_editor(page, sentences["long"])
    word = 11
    select_word(page, word)
    proposed = candidates(word, 150)
    # the click scrolled the page to the table: the members' figures, off screen, were only
    # marked stale; each is drawn with the new window when it comes into view
    stale = page.evaluate("[...document.querySelectorAll('#members figure')].filter((f) => f.$stale).length")
    assert stale > 0
    for i in range(len(MEMBERS)):
        box = f"#members figure[data-member='{i}'] .tree-scroll"
        page.locator(box).scroll_into_view_if_needed()
        page.wait_for_function(f"!document.querySelector(`#members figure[data-member='{i}']`).$stale")
        check_readable(page, box, [word, *proposed], SMALL_PX)
        assert page.locator(f"{box} .token.selected[data-id='{word}']").count() == 1
    region(page, "#members", screenshot(page, "focus-150-words-multiples"))
    page.keyboard.press("m")
    arcs = page.locator("#tree .arc.extra")
    deps = arcs.evaluate_all("arcs => arcs.map((a) => Number(a.dataset.dep))")
    heads, _ = block_tree(150)
    differing = {member_heads(heads, m)[word - 1] for m in range(len(MEMBERS))} - {heads[word - 1]}
    assert deps and set(deps) == {word} and len(deps) == len(differing), deps
    labels = arcs.locator(".arc-label").all_text_contents()
    assert all(" · " in label for label in labels), labels
    region(page, ".editor-main", screenshot(page, "focus-150-words-overlay"))


def test_the_whole_tree_names_the_dependent_while_its_head_is_chosen(
    ui: Any, sentences: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto("/")
    page.evaluate("localStorage.setItem('arcvote.focus', 'off')")
    open_editor(page, sentences["long"])
    assert page.locator("#tree .token").count() == 150
    word, target = 3, 145
    page.click(f'#tree .token[data-id="{word}"]')
    assert editor_state(page)["pending"] == word and page.locator("#pending-badge").is_hidden()
    page.evaluate("() => { const t = document.querySelector('#tree'); t.scrollLeft = t.scrollWidth; }")
    badge = page.locator("#pending-badge")
    badge.wait_for(state="visible")
    assert "choosing the head of 3 w3xxx" in badge.inner_text()
    assert "left" in (badge.get_attribute("class") or "")
    region(page, ".editor-main", screenshot(page, "focus-off-choosing-a-head"))
    page.click(f'#tree .token[data-id="{target}"]')
    state = editor_state(page)
    assert state["heads"][word - 1] == target and state["pending"] is None
    assert badge.is_hidden()
    assert page.evaluate(IN_VIEW, ["#tree", [word]])[0][1] == "in view"  # scrolled back to the dependent
