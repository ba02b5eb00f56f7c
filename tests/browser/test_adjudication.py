"""Assignment, double annotation and adjudication in a real browser: the owner hands two
sentences to two annotators with double annotation; each annotates blind (one moves an arc);
the curator sees their agreement and adjudicates. Screenshots: the assignments page, a blind
annotator's editor, the agreement page and the adjudication page.

The tests of this module run in order on one live server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select
from werkzeug.security import generate_password_hash

from app.extensions import db
from app.models import Treebank, TreeVersion, User
from app.services.members import set_role
from tests.browser.conftest import PASSWORD, signed_in_page
from tests.browser.helpers import PoolTrees, editor_state, leaves, open_editor, queue_listed, store_pool_trees

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def pool(live_app: Flask) -> PoolTrees:
    """The demo treebank, pre-annotated, owned by ``ana``; annotators ``ada`` and ``ben`` and
    curator ``cora``."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        trees = store_pool_trees(db.session, ana)
        treebank = db.session.get(Treebank, trees.treebank_id)
        assert treebank is not None
        for name, role in (("ada", "annotator"), ("ben", "annotator"), ("cora", "curator")):
            db.session.add(User(username=name, password_hash=generate_password_hash(PASSWORD)))
            db.session.flush()
            set_role(db.session, treebank, name, role, by=ana)
        db.session.commit()
        return trees


def test_owner_assigns_a_double_batch(chromium: Any, live_server: str, pool: PoolTrees,
                                      screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "ana", PASSWORD):
        page.goto(f"/workspace/treebanks/{pool.treebank_id}")
        page.click("text=Assignments")
        page.fill("#annotators_per_sentence", "2")
        page.click("text=Save rules")
        page.wait_for_selector(".flash-success >> text=Assignment rules saved")
        page.check("input[name=annotators][value=ada]")
        page.check("input[name=annotators][value=ben]")
        page.fill("#count", "2")
        page.select_option("#order", "position")
        page.click("#assign")
        page.wait_for_selector(".flash-success >> text=Assigned 2 sentences to 2 annotators each")
        rows = page.locator("#workloads tbody tr")
        assert [rows.nth(i).locator("th").inner_text() for i in range(rows.count())] == ["ada", "ben"]
        assert "2" in rows.nth(0).locator("td").first.inner_text()
        screenshot(page, "adjudication-assignments")
        page.goto(f"/workspace/treebanks/{pool.treebank_id}?order=position")
        assert page.locator("ol.queue li").first.locator(".assignees").inner_text() == "→ ada, ben"


def _annotate(page: Any, sentence_id: int, move_leaf: bool) -> None:
    state = open_editor(page, sentence_id)
    assert page.locator("#blind-note").is_visible()
    assert state["version"] == 0
    if move_leaf:  # ben re-attaches a leaf to the root word
        heads = state["heads"]
        word, root = leaves(heads)[0], heads.index(0) + 1
        page.evaluate("() => document.querySelector('#tree').focus()")
        while editor_state(page)["selected"] < word:
            page.keyboard.press("j")
        page.keyboard.press("h")
        page.keyboard.type(str(root))
        page.keyboard.press("Enter")
    page.click("#mark-reviewed")
    page.wait_for_selector("#message:has-text('Saved version 1')")


def test_each_annotator_annotates_blind(chromium: Any, live_server: str, live_app: Flask, pool: PoolTrees,
                                        screenshot: Shot) -> None:
    first, second = pool.pool[:2]
    for name, moves in (("ada", False), ("ben", True)):
        for page in signed_in_page(chromium, live_server, name, PASSWORD):
            page.goto(f"/workspace/treebanks/{pool.treebank_id}")
            assert queue_listed(page)[:2] == [first, second]
            assert page.locator("ol.queue li").first.locator(".assigned-mine").is_visible()
            assert page.locator(".assignees").count() == 0
            _annotate(page, first, moves)
            _annotate(page, second, False)
            page.reload()
            page.wait_for_selector("#tree svg")
            assert "ada" not in page.locator("#history").inner_text() or name == "ada"
            if name == "ben":
                screenshot(page, "adjudication-blind-editor")
    with live_app.app_context():
        branches = sorted(db.session.scalars(select(TreeVersion.name)
                                             .where(TreeVersion.kind == "annotation")))
    assert branches == ["ada", "ada", "ben", "ben"]


def test_curator_sees_agreement_and_adjudicates(chromium: Any, live_server: str, live_app: Flask,
                                                pool: PoolTrees, screenshot: Shot) -> None:
    first = pool.pool[0]
    # under the app's Content-Security-Policy, as a user's browser runs it: an inline script
    # would be blocked and the tree boxes stay empty
    for page in signed_in_page(chromium, live_server, "cora", PASSWORD, enforce_csp=True):
        page.goto(f"/workspace/treebanks/{pool.treebank_id}")
        page.click("text=Agreement and adjudication")
        row = page.locator("#agreement tbody tr").first
        assert row.locator("th").inner_text() == "ada · ben"
        cells = [row.locator("td").nth(i).inner_text() for i in range(6)]
        assert cells[0] == "2" and cells[2] != "100.0"  # ben moved one arc
        assert page.locator("#double-sentences >> text=ready to adjudicate").count() == 2
        screenshot(page, "adjudication-agreement")
        page.click(f"#double-sentences a[href$='/{first}/adjudicate']")
        page.wait_for_selector(".adjudication-tree svg")
        assert page.locator(".adjudication-tree").count() == 3  # ada, ben, ensemble
        n_words = page.locator("table.adjudication tbody tr").count()
        assert n_words > 1
        for box in range(3):  # each box draws one arc per word (the root's arc included)
            tree = page.locator(".adjudication-tree").nth(box)
            assert tree.locator("svg g.arc[data-dep]").count() == n_words
            assert tree.locator("svg g.arc.root").count() == 1
            assert tree.locator("svg .token .form").count() == n_words
        differing = page.locator("table.adjudication tr.differs")
        assert differing.count() == 1
        assert page.locator(".adjudication-tree .arc.differs").count() == 3
        # take ben's arc for the differing word
        differing.locator("label", has_text="ben").locator("input").check()
        screenshot(page, "adjudication-sentence")
        page.click("#save-adjudication")
        # the demo's labels are not UD's: the validator warns, as in the editor, and the tree is
        # saved as reviewed only once the curator accepts the warnings
        page.wait_for_selector(".alert >> text=Not saved: the UD validator gives")
        assert page.locator("#ud-warnings li[data-test=upos-rel-punct]").count() == 1
        assert page.locator(f"#ud-warnings li[data-word='{n_words}']").count() >= 1
        assert differing.locator("label", has_text="ben").locator("input").is_checked()  # the choice is kept
        for box in range(3):  # and the trees are drawn again
            tree = page.locator(".adjudication-tree").nth(box)
            assert tree.locator("svg g.arc[data-dep]").count() == n_words
        screenshot(page, "adjudication-warnings")
        page.check("#accept-warnings")
        page.click("#save-adjudication")
        page.wait_for_selector(".flash-success >> text=version 1, reviewed")
        assert "(accepted)" in page.locator(".flash-success").inner_text()
    with live_app.app_context():
        ben = db.session.scalars(select(TreeVersion).where(TreeVersion.name == "ben",
                                                           TreeVersion.sentence_id == first)).one()
        adjudicated = db.session.scalars(select(TreeVersion).where(TreeVersion.name == "",
                                                                   TreeVersion.kind == "annotation")).one()
        assert adjudicated.heads == ben.heads and adjudicated.sentence_id == first
