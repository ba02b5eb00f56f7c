"""A rule previewed, applied and reverted in a real browser, under the CSP (issue #32).

The treebank: the demo file's first 40 sentences as a test split with their gold trees; ``ana``
owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.models import Treebank
from app.services.rules import preview_rule
from app.services.search import search_treebank
from tests.browser.helpers import import_demo_test_split

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
RULE = 'rule { pattern { e: H -[amod]-> A; H [upos=NOUN] } commands { e.label = "amod:x"; A.Checked = Yes } }'


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    return import_demo_test_split(live_app, "rules demo")


def count(live_app: Flask, treebank_id: int, pattern: str) -> int:
    with live_app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        return search_treebank(db.session, treebank, pattern, source="latest").matches


def test_a_rule_is_previewed_applied_and_reverted(enforced_ui: Any, live_app: Flask, treebank_id: int,
                                                  screenshot: Shot) -> None:
    ui = enforced_ui
    with live_app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        preview = preview_rule(db.session, treebank, RULE)
    words = sum(len(change.words) for change in preview.changes)
    assert words > 0
    ui.goto(f"/treebanks/{treebank_id}/sentences")
    ui.click("#rules-link")
    ui.fill("#rule", RULE)
    ui.click("#rule-form button[type=submit]")
    ui.wait_for_selector("#rule-changes")
    assert ui.locator("tr.rule-change").count() == words
    first = ui.locator("tr.rule-change").first
    assert "deprel=amod" in first.inner_text() and "deprel=amod:x" in first.inner_text()
    assert "Checked=Yes" in first.inner_text()
    screenshot(ui, "rule-preview")
    ui.click("#apply-rule button[type=submit]")
    ui.wait_for_selector(".flash-success")
    assert f"changed {len(preview.changes)} sentences" in ui.inner_text(".flash-success")
    assert count(live_app, treebank_id, "pattern { H -[amod:x]-> A; A [Checked=Yes] }") == preview.matches
    assert ui.locator("#rule-events button:has-text('Revert')").count() == 1
    screenshot(ui, "rule-applied")
    ui.click("#rule-events button:has-text('Revert')")
    ui.wait_for_selector(".flash-success")
    assert f"Reverted {len(preview.changes)} sentences." in ui.inner_text(".flash-success")
    assert "reverted" in ui.inner_text("#rule-events")
    assert count(live_app, treebank_id, "pattern { H -[amod:x]-> A }") == 0
    assert count(live_app, treebank_id, "pattern { H -[amod]-> A; H [upos=NOUN] }") == preview.matches
