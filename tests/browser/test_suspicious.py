"""The arc error detector in a real browser (issue #32): a round run from the queue page fits it on
the dev split, the suspicious-arcs page draws the pool's arcs most likely wrong first (on the
ensemble's trees and on the pool's gold trees), a row opens its word in the editor, and the
queue's ``detector`` order sorts by the detector's expected wrong arcs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import SentenceState, Treebank, User
from app.services.demo import demo_file
from app.services.detector import newest_detector_round, round_detector, suspicious_arcs
from app.services.imports import import_conllu
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu
from tests.browser.helpers import editor_state, queue_listed
from tests.browser.test_rounds_page import run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    """The demo file's first 60 sentences as train, the next 15 as dev and 12 as pool (with trees)."""
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        splits = (("train", sentences[:60]), ("dev", sentences[60:75]), ("pool", sentences[75:87]))
        for split, chunk in splits:
            result = import_conllu(db.session, data=format_conllu(chunk).encode(), filename=f"{split}.conllu",
                                   treebank_name="detector demo", split=split, user=ana)
        db.session.commit()
        return result.treebank.id


def _drawn(ui: Any) -> list[tuple[int, int, float]]:
    rows = ui.locator("tr.suspicious-arc")
    return [(int(rows.nth(i).get_attribute("data-sentence")), int(rows.nth(i).get_attribute("data-word")),
             float(rows.nth(i).get_attribute("data-p"))) for i in range(rows.count())]


def _expected(live_app: Flask, treebank_id: int, source: str, split: str) -> list[tuple[int, int, float]]:
    with live_app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        round_ = newest_detector_round(db.session, treebank)
        assert round_ is not None
        detector = round_detector(round_.model_dir)
        assert detector is not None
        found = suspicious_arcs(db.session, treebank, source=source, split=split, detector=detector,
                                round_number=round_.number)
        return [(row["sentence_id"], row["word"], round(row["p_wrong"], 4)) for row in found.rows]


def test_the_suspicious_arcs_page_ranks_the_detectors_arcs(ui: Any, live_app: Flask, treebank_id: int,
                                                           screenshot: Shot) -> None:
    ui.goto(f"/treebanks/{treebank_id}/suspicious")
    assert "No training round" in ui.inner_text("#suspicious-error")  # before any round
    run_round(ui, treebank_id, ["graph1", "eager", "hybrid"])
    ui.goto(f"/treebanks/{treebank_id}/sentences")
    ui.click("#suspicious-link")
    ui.wait_for_selector("#suspicious")
    drawn = _drawn(ui)
    expected = _expected(live_app, treebank_id, "ensemble", "")
    assert len(drawn) == min(100, len(expected)) and len(drawn) > 20
    assert [(s, w) for s, w, _ in drawn] == [(s, w) for s, w, _ in expected[:len(drawn)]]
    assert [p for _, _, p in drawn] == pytest.approx([p for _, _, p in expected[:len(drawn)]], abs=1e-4)
    assert [p for _, _, p in drawn] == sorted((p for _, _, p in drawn), reverse=True)
    assert 0.0 <= drawn[-1][2] <= drawn[0][2] <= 1.0 and drawn[0][2] > drawn[-1][2]
    assert "round 1" in ui.inner_text("#suspicious-summary")
    # what the page draws per row: its share in percent and the word's relation
    first = ui.locator("tr.suspicious-arc").first
    assert first.locator(".p-wrong").inner_text() == f"{100 * drawn[0][2]:.0f}%"
    screenshot(ui, "suspicious-arcs")
    # the pool's gold trees (they came with the import): the treebank's own arcs, ranked
    ui.select_option("#source", "gold")
    ui.select_option("#split", "pool")
    ui.click("#suspicious-form button[type=submit]")
    ui.wait_for_selector("#suspicious")
    gold = _drawn(ui)
    assert [(s, w) for s, w, _ in gold] == [(s, w) for s, w, _ in _expected(live_app, treebank_id, "gold",
                                                                            "pool")[:len(gold)]]
    # a row opens its sentence in the editor with its word selected
    sentence, word, _ = drawn[0]
    ui.goto(f"/treebanks/{treebank_id}/suspicious")
    ui.locator("tr.suspicious-arc a.arc-sentence").first.click()
    ui.wait_for_selector("#tree svg")
    assert ui.url.split("?")[0].endswith(f"/workspace/sentences/{sentence}")
    assert editor_state(ui)["selected"] == word


def test_the_queue_orders_by_the_detector(ui: Any, live_app: Flask, treebank_id: int,
                                          screenshot: Shot) -> None:
    with live_app.app_context():
        ran = db.session.scalar(select(SentenceState.sentence_id).where(SentenceState.suspicion.is_not(None)))
    if ran is None:  # run alone: the round of the test above
        run_round(ui, treebank_id, ["graph1", "eager", "hybrid"])
    with live_app.app_context():
        states = db.session.execute(select(SentenceState.sentence_id, SentenceState.suspicion,
                                           SentenceState.p_wrong)
                                    .where(SentenceState.suspicion.is_not(None))).all()
    assert len(states) >= 12  # every pool sentence the round parsed
    for _, suspicion, p_wrong in states:
        assert suspicion == pytest.approx(sum(json.loads(p_wrong) if isinstance(p_wrong, str) else p_wrong),
                                          abs=1e-3)
    by_id = {sid: suspicion for sid, suspicion, _ in states}
    ui.goto(f"/workspace/treebanks/{treebank_id}?order=detector")
    listed = queue_listed(ui)
    assert listed and all(sid in by_id for sid in listed)
    assert [by_id[sid] for sid in listed] == sorted((by_id[sid] for sid in listed), reverse=True)
    assert "suspect" in ui.locator("ol.queue li .suspicion").first.inner_text()
    screenshot(ui, "queue-detector-order")
