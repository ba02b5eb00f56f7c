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
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from app.services.demo import demo_file
from app.services.imports import import_conllu
from app.services.rules import preview_rule
from app.services.search import search_treebank
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
RULE = 'rule { pattern { e: H -[amod]-> A; H [upos=NOUN] } commands { e.label = "amod:x"; A.Checked = Yes } }'


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)[:40]
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        result = import_conllu(db.session, data=format_conllu(sentences).encode(), filename="test.conllu",
                               treebank_name="rules demo", split="test", user=ana)
        db.session.commit()
        return result.treebank.id


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
