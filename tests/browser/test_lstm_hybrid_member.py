"""The transition-based BiLSTM member ``lstm-hybrid`` (issue #33: Kiperwasser & Goldberg 2016) chosen
under "More parsers": trained in a round (the tests' tiny settings, ``FAST_MEMBER_PARAMS``), scored
in its own column of the rounds page, and drawn in the editor with its arcs in the word table."""

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
from tests.browser.test_biaffine_member import first_pool_sentence, member_in_editor, member_tree
from tests.browser.test_rounds_page import import_rounds_demo, run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


def test_lstm_hybrid_is_trained_in_a_round_scored_and_shown_in_the_editor(
        ui: Any, live_app: Flask, screenshot: Shot, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from app.services.preannotate import FAST_MEMBER_PARAMS

    longer = {**FAST_MEMBER_PARAMS["lstm-hybrid"], "max_epochs": 30, "patience": 30}
    monkeypatch.setitem(live_app.config, "MEMBER_PARAMS", {  # enough epochs to draw a plausible tree
        **FAST_MEMBER_PARAMS, "lstm-hybrid": longer})
    page = ui
    treebank_id = import_rounds_demo(live_app, "lstm-hybrid demo")
    page.goto(f"/workspace/treebanks/{treebank_id}")
    box = page.locator('#more-members input[name="parsers"][value="lstm-hybrid"]')
    assert box.count() == 1 and box.is_enabled() and not box.is_checked()  # gold tags here: not a default
    title = page.locator('#more-members label:has(input[value="lstm-hybrid"])').get_attribute("title") or ""
    assert "Kiperwasser" in title
    assert "lstm-hybrid" in page.inner_text("#more-members .help")  # what it is and what it adds
    run_round(page, treebank_id, ["graph1", "lstm-hybrid"])

    with live_app.app_context():
        round_ = db.session.scalars(select(TrainingRound)
                                    .where(TrainingRound.treebank_id == treebank_id)).one()
        scored = (round_.scores or {}).get("members") or {}
    assert set(scored) == {"graph1", "lstm-hybrid"} and scored["lstm-hybrid"]["las"] > 20  # it learned

    page.goto(f"/treebanks/{treebank_id}/rounds")  # its own score column
    columns = page.locator("#rounds thead tr:nth-child(2) th").all_text_contents()
    scores = columns[columns.index("ensemble"):]
    assert "lstm-hybrid" in scores
    row = page.locator("#rounds tbody tr").first
    cell = row.locator("td.score").nth(scores.index("lstm-hybrid")).inner_text()
    assert f"{scored['lstm-hybrid']['las']:.1f}" in cell, cell
    shutil.copyfile(screenshot(page, "rounds-lstm-hybrid"), "/tmp/rounds-lstm-hybrid.png")

    sentence_id = first_pool_sentence(live_app, treebank_id)  # the editor: its tree among the members
    heads, deprels = member_tree(live_app, sentence_id, "lstm-hybrid")
    names, drawn, cells = member_in_editor(page, sentence_id, "lstm-hybrid")
    assert sorted(names) == ["graph1", "lstm-hybrid"]
    assert sorted(drawn) == list(range(1, len(heads) + 1))  # one arc per word
    assert cells == [f"{h} {d}" for h, d in zip(heads, deprels, strict=True)]
    shutil.copyfile(screenshot(page, "editor-lstm-hybrid"), "/tmp/editor-lstm-hybrid.png")
