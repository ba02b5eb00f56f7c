"""Pages that grow wide with a team's data stay inside the window (issue #30 item 7): the rounds
table of nine members, the scoreboard's "compare with gold" column, and compare's trees of a long
sentence (which scroll inside their box, not the page). Screenshots: wide-rounds,
wide-scoreboard, wide-compare-sentence.

The data is written directly (rounds with nine members' scores, nine parsers' trees of the
demo's dev sentences, a 60-word pool sentence with two parsers' trees): no training is run.
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
from app.services.demo import setup_demo
from app.services.imports import import_conllu
from app.services.trees import add_version
from parsing.members import MEMBERS

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
NINE = list(MEMBERS)[:9]
LONG = 60


def _long_sentence() -> str:
    rows = [f"{i}\tword{i}\t_\tNOUN\t_\t_\t_\t_\t_\t_" for i in range(1, LONG + 1)]
    return "# sent_id = long-one\n" + "\n".join(rows) + "\n\n"


@pytest.fixture(scope="module")
def wide(live_app: Flask) -> dict[str, int]:
    """The demo's first 50 sentences, two rounds of nine members, nine parsers' trees of the
    test sentences and a 60-word pool sentence with two parsers' trees; ids by name."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        setup_demo(db.session, user=ana, sentences=50)
        treebank = db.session.scalars(select(Treebank)).one()
        tests = db.session.scalars(select(TreeVersion).join(Sentence).join(Document).where(
            Document.split == "dev", TreeVersion.kind == "gold")).all()
        for i, name in enumerate(NINE):
            for gold in tests:
                heads = list(gold.heads)
                if len(heads) > 2 and i % 2:  # every other parser gets one arc wrong
                    heads[-1] = heads[-2] if heads[-2] != len(heads) else 0
                add_version(db.session, sentence_id=gold.sentence_id, source=name, heads=heads,
                            deprels=list(gold.deprels), user=ana)
        start = datetime.now(UTC) - timedelta(hours=1)
        for number in (1, 2):
            members = {name: {"uas": 80.0 + i / 3, "las": 70.0 + i / 7} for i, name in enumerate(NINE)}
            scores = {"members": members, "ensemble": {"uas": 84.2, "las": 76.3}}
            db.session.add(TrainingRound(
                treebank_id=treebank.id, number=number, parsers=NINE, tags="gold", ensemble="vote-uniform",
                weights=[1.0] * 9, train_sentences=270, dev_sentences=30, model_dir="/nonexistent",
                user_id=ana.id, started_at=start, finished_at=start + timedelta(minutes=3),
                gold_sentences=270, corrected_sentences=number - 1, automatic_sentences=0,
                annotated_tokens=5400 + number, evaluation="dev", scores=scores))
        imported = import_conllu(db.session, data=_long_sentence().encode(), filename="long.conllu",
                                 treebank_name=treebank.name, split="pool", user=ana)
        long_id = db.session.scalars(select(Sentence.id).where(
            Sentence.document_id == imported.document.id)).one()
        chain = [*range(2, LONG + 1), 0]
        add_version(db.session, sentence_id=long_id, source="graph1", heads=chain,
                    deprels=["dep"] * (LONG - 1) + ["root"], user=ana)
        add_version(db.session, sentence_id=long_id, source="eager", heads=[0, *([1] * (LONG - 1))],
                    deprels=["root"] + ["dep"] * (LONG - 1), user=ana)
        db.session.commit()
        return {"treebank": treebank.id, "long": long_id}


def _fits_the_window(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_rounds_table_of_nine_members_is_not_cut_off(
    ui: Any, wide: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto(f"/treebanks/{wide['treebank']}/rounds")
    table = page.locator("#rounds")
    assert table.locator("thead th", has_text="hybrid-rtl").count() == 1
    screenshot(page, "wide-rounds")
    assert _fits_the_window(page)
    scroller = "(box => box.scrollWidth <= box.clientWidth)(document.querySelector('#rounds').parentElement)"
    assert page.evaluate(scroller), "the table's last columns are hidden"
    right = table.bounding_box()
    main = page.locator("main").bounding_box()
    assert right["x"] + right["width"] <= main["x"] + main["width"] + 1
    last = table.locator("tbody tr").first.locator("td").last
    assert last.is_visible() and last.inner_text().strip() != ""


def test_the_scoreboards_compare_link_is_readable(ui: Any, wide: dict[str, int], screenshot: Shot) -> None:
    page = ui
    for width in (1280, 1500, 1900):  # from 1700 px the scores table sits beside the chart
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/treebanks/{wide['treebank']}/scoreboard?split=dev")
        links = page.locator("#scores a", has_text="compare with gold")
        screenshot(page, f"wide-scoreboard-{width}")
        assert links.count() == 9
        assert _fits_the_window(page)
        whole = "(box => box.scrollWidth <= box.clientWidth)(document.querySelector('#scores').parentElement)"
        assert page.evaluate(whole), f"the scores table is cut off at {width} px"
        for i in range(links.count()):  # the link on one line, not a word (or a letter) a line
            lines = page.evaluate("(link) => link.getClientRects().length", links.nth(i).element_handle())
            assert lines == 1, f"at {width} px"
            assert links.nth(i).bounding_box()["width"] > 80


def test_compare_trees_of_a_long_sentence_scroll_inside_their_box(
    ui: Any, wide: dict[str, int], screenshot: Shot
) -> None:
    page = ui
    page.goto(f"/treebanks/{wide['treebank']}/compare/sentences/{wide['long']}?a=graph1&b=eager")
    page.wait_for_selector("#side-by-side .tree-scroll svg")
    boxes = page.locator("#side-by-side .tree-scroll")
    assert boxes.count() == 2
    for i in range(2):
        assert boxes.nth(i).locator("g.arc[data-dep]").count() == LONG
    screenshot(page, "wide-compare-sentence")
    assert _fits_the_window(page)
    main = page.locator("main").bounding_box()
    for i in range(2):
        box = boxes.nth(i).bounding_box()
        assert box["x"] + box["width"] <= main["x"] + main["width"] + 1
    scrolls = "(box) => box.scrollWidth > box.clientWidth"
    assert page.evaluate(scrolls, boxes.first.element_handle()), "the long tree scrolls inside its box"
