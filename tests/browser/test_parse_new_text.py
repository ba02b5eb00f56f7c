"""New raw text after a round: the queue page offers to parse it with the newest round's models
(no training); one click parses it, and the editor draws its trees."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from app.extensions import db
from app.models import TreeVersion
from app.parser_models import TrainingRound
from tests.browser.helpers import import_raw_text, submit_preannotate
from tests.browser.test_rounds_page import import_rounds_demo, run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


def test_new_text_is_parsed_with_the_last_rounds_models_from_the_queue_page(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    page = ui
    treebank_id = import_rounds_demo(live_app, "parse new text demo")
    run_round(page, treebank_id, ["graph1", "eager"], tags="predicted")
    page.goto(f"/workspace/treebanks/{treebank_id}")
    assert page.locator("#parse-new-form").count() == 0  # the round parsed the whole pool
    new = import_raw_text(live_app, "parse new text demo", "Bu kitap çok güzel. Ben de okudum!")

    page.goto(f"/workspace/treebanks/{treebank_id}")
    form = page.locator("#parse-new-form")
    assert form.is_visible()
    assert " ".join(form.locator("p").first.inner_text().split()) == (
        "2 sentences of the pool have no pre-annotation yet. Parse with round 1's models")
    assert "No training" in page.locator("#parse-new-help").inner_text()
    form.scroll_into_view_if_needed()
    shutil.copyfile(screenshot(page, "queue-parse-new"), "/tmp/queue-parse-new.png")
    state = submit_preannotate(page, "#parse-new-form button[type=submit]", seconds=60)
    assert state["result"]["parsed"] == 2 and state["result"]["parse_only"], state
    page.wait_for_function("() => !document.getElementById('parse-new-form')")  # the page reloaded
    assert "Done: parsed 2 of 2 sentences with round 1's models" in page.locator("#job-message").inner_text()
    with live_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(TrainingRound).where(
            TrainingRound.treebank_id == treebank_id)) == 1
        ensemble = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == new[0], TreeVersion.kind == "ensemble")).one()

    page.goto(f"/workspace/sentences/{new[0]}")
    page.wait_for_selector("#tree .arc")
    drawn = page.locator("#tree .arc").evaluate_all("arcs => arcs.map((a) => Number(a.dataset.dep))")
    assert sorted(drawn) == list(range(1, len(ensemble.heads) + 1))
    upos = page.evaluate("() => window.arcvoteEditor.columns.upos")
    assert upos == ensemble.upos  # raw text: the round's tagger's tags, shown
    shutil.copyfile(screenshot(page, "editor-parsed-new-text"), "/tmp/editor-parsed-new-text.png")
