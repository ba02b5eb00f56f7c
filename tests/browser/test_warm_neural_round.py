"""A warm round continues the neural members too: two rounds from the queue page with
``biaffine`` and ``lstm-hybrid`` beside ``graph1`` (the tests' tiny settings), the second with
"Warm round" ticked; the rounds page says all three continued from round 1's weights."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.parser_models import TrainingRound
from tests.browser.helpers import submit_preannotate
from tests.browser.test_rounds_page import correct_first_pool_sentence, import_rounds_demo, run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
MEMBERS = ["graph1", "biaffine", "lstm-hybrid"]


def test_a_warm_round_continues_the_neural_members_and_the_rounds_page_says_so(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    pytest.importorskip("torch")
    page = ui
    treebank_id = import_rounds_demo(live_app, "warm neural demo")
    run_round(page, treebank_id, MEMBERS)
    correct_first_pool_sentence(live_app, treebank_id)

    page.goto(f"/workspace/treebanks/{treebank_id}")
    for box in page.locator('#preannotate-form input[name="parsers"]').all():
        box.set_checked(box.get_attribute("value") in MEMBERS)
    page.check('#preannotate-form input[name="warm"]')
    submit_preannotate(page, "#preannotate-form button[type=submit]")

    with live_app.app_context():
        rounds = db.session.scalars(select(TrainingRound).where(TrainingRound.treebank_id == treebank_id)
                                    .order_by(TrainingRound.number)).all()
        assert [r.warm for r in rounds] == [None, {"from_round": 1, "members": MEMBERS}]

    page.goto(f"/treebanks/{treebank_id}/rounds")
    warm = page.locator("#rounds tbody span.warm")
    assert warm.count() == 1  # only round 2 is warm
    assert warm.inner_text() == "warm from round 1 (3 of 3)"
    assert warm.get_attribute("title") == "continued from round 1's weights: graph1, biaffine, lstm-hybrid"
    shutil.copyfile(screenshot(page, "rounds-warm-neural"), "/tmp/rounds-warm-neural.png")
