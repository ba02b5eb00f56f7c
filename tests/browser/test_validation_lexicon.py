"""The validation report and the lexicon table in a real browser, under the CSP (issue #32).

Treebanks: the faulty one of tests/app/test_validation_report.py (a period labelled ``obl``, a ``punct`` on a
pronoun, an unknown label), and the demo file's first 200 sentences for the lexicon; ``ana``
owns both.
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
from app.services.lexicon_table import treebank_lexicon
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu
from tests.app.test_validation_report import EXPECTED, FAULTY
from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def treebanks(live_app: Flask) -> tuple[int, int]:
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)[:200]
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        faulty = import_conllu(db.session, data=FAULTY.encode(), filename="faulty.conllu",
                               treebank_name="faulty", split="dev", user=ana).treebank
        demo = import_conllu(db.session, data=format_conllu(sentences).encode(), filename="test.conllu",
                             treebank_name="lexicon demo", split="test", user=ana).treebank
        db.session.commit()
        return faulty.id, demo.id


def test_a_validation_job_reports_each_fault_with_its_sentences(
        enforced_ui: Any, treebanks: tuple[int, int], screenshot: Shot) -> None:
    ui = enforced_ui
    ui.goto(f"/treebanks/{treebanks[0]}/sentences")
    ui.click("#validation-link")
    ui.wait_for_selector("#validation-none")
    ui.select_option("#source", "gold")
    ui.click("#validate-form button[type=submit]")
    ui.wait_for_selector("#validation-report", timeout=30000)  # the job page, once the job is done
    ui.click("#validation-report")
    ui.wait_for_selector("#validation-tests")
    rows = ui.locator("tr.validation-test")
    assert rows.count() == len(EXPECTED)
    drawn = {rows.nth(i).get_attribute("data-test"): rows.nth(i).inner_text() for i in range(rows.count())}
    assert set(drawn) == {test for test, _ in EXPECTED}
    roots = ui.locator('tr.validation-test[data-test="upos-rel-punct"]')
    assert not roots.locator("li.incident").first.is_visible()
    roots.locator("summary").click()
    incident = roots.locator("li.incident").first
    assert incident.is_visible() and "period-obl" in incident.inner_text()
    assert "PUNCT" in incident.inner_text()
    ui.locator('tr.validation-test[data-test="rel-upos-punct"] summary').click()
    screenshot(ui, "validation-report")
    incident.locator("a.incident-editor").click()
    ui.wait_for_url(lambda url: "/workspace/sentences/" in url)


def test_the_lexicon_table_draws_entries_and_a_variant_opens_its_search(
        enforced_ui: Any, live_app: Flask, treebanks: tuple[int, int], screenshot: Shot) -> None:
    ui = enforced_ui
    with live_app.app_context():
        treebank = db.session.get(Treebank, treebanks[1])
        assert treebank is not None
        entries = treebank_lexicon(db.session, treebank).entries
    assert entries
    ui.goto(f"/treebanks/{treebanks[1]}/sentences")
    ui.click("#lexicon-link")
    ui.wait_for_selector("#lexicon")
    assert ui.locator("tbody.lexicon-entry").count() == min(50, len(entries))
    first = ui.locator("tbody.lexicon-entry").first
    assert first.get_attribute("data-form") == entries[0].form
    counts = [int(first.locator("tr.lexicon-variant").nth(i).get_attribute("data-count"))
              for i in range(first.locator("tr.lexicon-variant").count())]
    assert counts == [variant.count for variant in entries[0].variants]
    screenshot(ui, "lexicon-table")
    ui.screenshot(path=str(ARTIFACTS / "lexicon-table-top.png"))  # the first entries, as a user sees them
    first.locator("a.variant-search").last.click()
    ui.wait_for_selector("#search-form")
    minority = entries[0].variants[-1].count
    assert f"{minority} match" in " ".join(ui.inner_text("main").split())
