"""The members of issue #18 chosen in the pre-annotate panel: the ISBN member and the reranked
neural and ISBN members (their rerankers trained on the dev split) are trained in a round and
scored on the rounds page beside the other members."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import User
from app.parser_models import TrainingRound
from app.services.demo import demo_file
from app.services.imports import import_conllu
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu
from tests.browser.test_rounds_page import run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


def _import_with_dev(live_app: Flask, name: str) -> int:
    """The demo file's first 40 sentences as train, the next 10 as dev and 10 more as pool."""
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        result = None
        for split, part in (("train", sentences[:40]), ("dev", sentences[40:50]), ("pool", sentences[50:60])):
            result = import_conllu(db.session, data=format_conllu(part).encode(), filename=f"{split}.conllu",
                                   treebank_name=name, split=split, user=ana)
        db.session.commit()
        assert result is not None
        return result.treebank.id


def test_the_titov_members_are_offered_trained_and_scored(
    ui: Any, live_app: Flask, screenshot: Shot
) -> None:
    page = ui
    treebank_id = _import_with_dev(live_app, "rerank demo")
    page.goto(f"/workspace/treebanks/{treebank_id}")
    offered = page.locator('#more-members input[name="parsers"]')
    assert {"isbn", "neural-rerank", "isbn-rerank"} <= set(
        offered.evaluate_all("boxes => boxes.map((b) => b.value)"))
    checked = {box.get_attribute("value") for box in offered.all() if box.is_checked()}
    assert not checked & {"isbn", "neural-rerank", "isbn-rerank"}  # not defaults (biaffine is, gold tags)
    assert "Titov" in (page.locator('#more-members label:has(input[value="neural-rerank"])')
                       .get_attribute("title") or "")
    shutil.copyfile(screenshot(page, "queue-more-members"), "/tmp/queue-more-members.png")

    assert "Titov" in (page.locator('#more-members label:has(input[value="isbn-rerank"])')
                       .get_attribute("title") or "")
    run_round(page, treebank_id, ["graph1", "neural", "neural-rerank", "isbn", "isbn-rerank"])
    with live_app.app_context():
        round_ = db.session.scalars(select(TrainingRound)
                                    .where(TrainingRound.treebank_id == treebank_id)).one()
        scored = (round_.scores or {}).get("members") or {}
    assert set(scored) == {"graph1", "neural", "neural-rerank", "isbn", "isbn-rerank"}
    assert scored["isbn"]["uas"] > 0  # it learned something in the round's few epochs
    assert scored["isbn-rerank"]["uas"] > 0

    page.goto(f"/treebanks/{treebank_id}/rounds")
    table = page.inner_text("#rounds")
    assert all(name in table.upper() for name in ("NEURAL-RERANK", "ISBN-RERANK", "ISBN")) and "dev" in table
    # one line per member and the ensemble in each learning curve
    assert page.locator(".curves svg polyline").count() == 2 * 6
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shutil.copyfile(screenshot(page, "rounds-neural-rerank"), "/tmp/rounds-neural-rerank.png")
