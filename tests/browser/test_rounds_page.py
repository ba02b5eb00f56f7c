"""The rounds page in a real browser: two rounds run from the queue page on a tiny treebank
without a dev split, then the table, the learning curves, the CSV and the changed sentences."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, User
from app.services.demo import demo_file
from app.services.imports import import_conllu
from app.services.preannotate import HELD_OUT_EVERY
from app.services.trees import add_version
from app.services.workspace import set_state
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu
from tests.browser.helpers import submit_preannotate

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    """A treebank with a train split and a pool, no dev split."""
    return import_rounds_demo(live_app, "rounds demo")


def run_round(page: Any, treebank_id: int, parsers: list[str],
              self_training: tuple[str, str, str] | None = None, tags: str | None = None) -> None:
    """Start a round from the queue page with ``parsers`` ticked (and self-training's source,
    selection and number of sentences chosen; ``tags``: the tag mode chosen) and wait until it is
    done."""
    page.goto(f"/workspace/treebanks/{treebank_id}")
    if tags:
        page.select_option('#preannotate-form select[name="tags"]', tags)
    for box in page.locator('#preannotate-form input[name="parsers"]').all():
        box.set_checked(box.get_attribute("value") in parsers)
    if self_training:
        source, chosen, sentences = self_training
        page.select_option('select[name="self_training_source"]', source)
        page.select_option('select[name="self_training_select"]', chosen)
        page.fill('input[name="self_training_sentences"]', sentences)
    submit_preannotate(page, "#preannotate-form button[type=submit]")


def import_rounds_demo(live_app: Flask, name: str) -> int:
    """The demo file's first 40 sentences as train and the next 10 as pool (no dev split)."""
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        import_conllu(db.session, data=format_conllu(sentences[:40]).encode(), filename="train.conllu",
                      treebank_name=name, split="train", user=ana)
        result = import_conllu(db.session, data=format_conllu(sentences[40:50]).encode(),
                               filename="pool.conllu", treebank_name=name, split="pool", user=ana)
        db.session.commit()
        return result.treebank.id


def correct_first_pool_sentence(live_app: Flask, treebank_id: int) -> None:
    """Ana reviews a pool sentence (its ensemble tree, relabelled), so round 2 trains on a correction
    (one outside the held-out slice, whose ids are multiples of HELD_OUT_EVERY: on PostgreSQL the
    ids depend on the tests before)."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        sentence = db.session.scalars(select(Sentence).join(Document).where(
            Document.treebank_id == treebank_id, Document.split == "pool",
            Sentence.id % HELD_OUT_EVERY != 0).order_by(Sentence.id)).first()
        assert sentence is not None
        n = sentence.n_words
        add_version(db.session, sentence_id=sentence.id, source="annotation", heads=[*range(2, n + 1), 0],
                    deprels=["dep"] * (n - 1) + ["root"], user=ana)
        set_state(db.session, sentence, user=ana, status="reviewed")
        db.session.commit()


def test_two_rounds_on_the_rounds_page(
    ui: Any, live_app: Flask, treebank_id: int, screenshot: Shot, tmp_path: Path
) -> None:
    page = ui
    page.goto(f"/treebanks/{treebank_id}/rounds")
    assert "No training round yet" in page.inner_text("main")

    run_round(page, treebank_id, ["graph1", "eager", "hybrid"])
    correct_first_pool_sentence(live_app, treebank_id)
    run_round(page, treebank_id, ["graph1", "eager"])

    page.goto(f"/workspace/treebanks/{treebank_id}")
    page.click("text=Training rounds")
    page.wait_for_url(f"**/treebanks/{treebank_id}/rounds")
    rows = page.locator("#rounds tbody tr")
    assert rows.count() == 2
    assert [rows.nth(i).locator("th").inner_text() for i in range(2)] == ["1", "2"]
    assert "held-out" in rows.nth(0).inner_text() and "not finished" not in page.inner_text("#rounds")
    assert page.locator("#held-out-note").is_visible()
    cells = rows.nth(1).locator("td")  # started, members, gold, corrected, automatic (+ settings), ...
    assert cells.nth(3).inner_text() == "1" and cells.nth(4).inner_text().split() == ["0", "off"]
    charts = page.locator(".curves svg")
    assert charts.count() == 2
    # one line per member any round scored (graph1, eager, hybrid) and the ensemble, in each chart
    assert page.locator(".curves svg polyline").count() == 2 * 4
    assert charts.first.bounding_box()["width"] <= page.locator("main").bounding_box()["width"]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    path = screenshot(page, "rounds")
    shutil.copyfile(path, "/tmp/rounds.png")
    fits = "(box => box.scrollWidth <= box.clientWidth)(document.querySelector('.table-scroll'))"
    assert page.evaluate(fits), "with three members the table fits without scrolling"

    with page.expect_download() as download_info:
        page.click("text=Download CSV")
    download = download_info.value
    assert download.suggested_filename == "rounds_demo-rounds.csv"
    saved = tmp_path / "rounds.csv"
    download.save_as(saved)
    table = list(csv.DictReader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert [row["round"] for row in table] == ["1", "2"]
    assert {row["evaluation"] for row in table} == {"held-out"}
    assert table[1]["corrected_trees"] == "1" and table[0]["hybrid_las"] and not table[1]["hybrid_las"]

    changed = rows.nth(1).locator("td.changed a")
    if changed.count():  # round 2 re-parsed 9 sentences with other members: usually some changed
        count = int(changed.inner_text())
        changed.click()
        page.wait_for_selector("ol.changed li")
        assert page.locator("ol.changed li").count() == count
        screenshot(page, "rounds-changed")
        page.click("ol.changed li:first-child a")
        page.wait_for_selector("#tree svg")


def test_self_training_chosen_in_the_panel_shows_on_the_rounds_page(
    ui: Any, live_app: Flask, screenshot: Shot
) -> None:
    page = ui
    treebank_id = import_rounds_demo(live_app, "self-training demo")
    run_round(page, treebank_id, ["graph1", "eager"])
    page.goto(f"/workspace/treebanks/{treebank_id}")
    panel = page.locator("fieldset.self-training")
    assert panel.is_visible() and page.input_value('select[name="self_training_source"]') == "none"
    screenshot(page, "queue-self-training")
    run_round(page, treebank_id, ["graph1", "eager"], ("ensemble", "random", "4"))
    page.goto(f"/treebanks/{treebank_id}/rounds")
    rows = page.locator("#rounds tbody tr")
    assert rows.count() == 2
    first, second = (rows.nth(i).locator("td").nth(4).inner_text().split() for i in range(2))
    assert first == ["0", "off"]
    assert second[0] == "4" and " ".join(second[1:]) == "ensemble · random · ≤ 4"
