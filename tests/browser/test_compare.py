"""The scoreboard, the comparison of two sources, the side-by-side trees and an upload of another
parser's output, in a real browser (issue #16).

The treebank: the demo file's first 30 sentences as a test split with their gold trees, parsed by
``graph1`` (the gold tree), ``eager`` (gold with one leaf moved under the root word) and the
ensemble (= graph1), as a pre-annotation would store them.
"""

from __future__ import annotations

import csv
import io
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
from app.services.trees import add_version
from parsing.conllu_io import HEAD, decode_utf8, format_conllu, parse_conllu
from tests.browser.helpers import leaves

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
SENTENCES = 30


def demo_sentences() -> list[Any]:
    source = demo_file()
    return parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)[:SENTENCES]


def eager_heads(heads: list[int]) -> list[int]:
    moved = list(heads)
    if leaves(heads):
        moved[leaves(heads)[0] - 1] = heads.index(0) + 1
    return moved


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        result = import_conllu(
            db.session,
            data=format_conllu(demo_sentences()).encode(),
            filename="test.conllu",
            treebank_name="compare demo",
            split="test",
            user=ana,
        )
        rows = (
            db.session.execute(
                select(Sentence.id)
                .join(Document)
                .where(Document.treebank_id == result.treebank.id)
                .order_by(Sentence.position)
            )
            .scalars()
            .all()
        )
        for sentence_id, raw in zip(rows, demo_sentences(), strict=True):
            heads, deprels = [int(w[HEAD]) for w in raw.words], [w[7] for w in raw.words]
            for name, tree in (("graph1", heads), ("eager", eager_heads(heads)), ("ensemble", heads)):
                add_version(
                    db.session, sentence_id=sentence_id, source=name, heads=tree, deprels=deprels, user=ana
                )
        db.session.commit()
        return result.treebank.id


def test_scoreboard_page(ui: Any, treebank_id: int, screenshot: Shot) -> None:
    ui.goto(f"/treebanks/{treebank_id}/sentences")
    ui.click("text=Scoreboard")
    ui.wait_for_selector("#scores")
    sources = ui.locator("#scores tbody tr").evaluate_all("rows => rows.map((r) => r.dataset.source)")
    assert sources == ["ensemble", "oracle", "eager", "graph1"]
    graph1 = ui.locator('#scores tr[data-source="graph1"] td').all_inner_texts()
    assert graph1[3] == "100.0" and graph1[4].split() == ["100.0", "100.0–100.0"]  # UAS, LAS + interval
    eager_las = ui.locator('#scores tr[data-source="eager"] td').all_inner_texts()[4].split()
    low, high = (float(end) for end in eager_las[1].split("–"))
    assert low <= float(eager_las[0]) <= high and low < high  # eager is wrong somewhere: a real interval
    assert float(ui.locator('#scores tr[data-source="eager"] td').all_inner_texts()[3]) < 100
    assert ui.locator("figure.chart svg").count() == 2
    assert ui.locator("#upos td.best").count() > 0 and ui.locator("#agreement").is_visible()
    with ui.expect_download() as download:
        ui.click("#scores-title a.csv")
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert rows[0][0] == "source" and {row[0] for row in rows[1:]} == {
        "ensemble",
        "oracle",
        "eager",
        "graph1",
    }
    screenshot(ui, "compare-scoreboard")


def test_compare_view_and_side_by_side_trees(ui: Any, treebank_id: int, screenshot: Shot) -> None:
    ui.goto(f"/treebanks/{treebank_id}/compare")
    ui.fill("#a", "graph1")
    ui.fill("#b", "eager")
    ui.click("#choose button[type=submit]")
    ui.wait_for_selector("#significance")
    assert "graph1" in ui.locator("#pair-scores").inner_text()
    assert ui.locator("#confusion").is_visible()
    differing = ui.locator("#differing tbody tr").count()
    assert differing > 0
    screenshot(ui, "compare-pair")
    ui.locator("#differing tbody tr a").first.click()
    ui.wait_for_selector('[data-side="1"] svg')
    assert ui.locator('[data-side="0"] svg').count() == 1
    # eager moved exactly one arc: one differing arc on each side, the others the same
    assert ui.locator('[data-side="0"] .arc.differs').count() == 1
    assert ui.locator('[data-side="1"] .arc.differs').count() == 1
    assert ui.locator('[data-side="1"] .arc.same').count() > 0
    screenshot(ui, "compare-sentence")


def test_upload_another_parsers_output(ui: Any, treebank_id: int, screenshot: Shot, tmp_path: Path) -> None:
    sentences = demo_sentences()
    for raw in sentences:
        heads = eager_heads([int(w[HEAD]) for w in raw.words])
        for row, head in zip(raw.words, heads, strict=True):
            row[HEAD] = str(head)
    good = tmp_path / "udpipe.conllu"
    good.write_text(format_conllu(sentences), encoding="utf-8")
    bad = tmp_path / "bad.conllu"
    bad.write_text(
        format_conllu(sentences).replace(f"\t{sentences[1].words[0][1]}\t", "\tNOT-A-TOKEN\t", 1),
        encoding="utf-8",
    )
    ui.goto(f"/treebanks/{treebank_id}/scoreboard")
    ui.click("text=Add another parser's output")
    ui.set_input_files("#file", str(bad))
    ui.fill("#label", "udpipe")
    ui.click("#upload-parse button[type=submit]")
    alert = ui.locator(".alert").inner_text()
    assert "not stored" in alert and "sentence 2" in alert and "NOT-A-TOKEN" in alert
    screenshot(ui, "compare-upload-refused")
    ui.set_input_files("#file", str(good))
    ui.fill("#label", "udpipe")
    ui.click("#upload-parse button[type=submit]")
    ui.wait_for_selector('#scores tr[data-source="udpipe"]')
    assert "Stored 30 trees of udpipe" in ui.locator(".flashes").inner_text()
    row = ui.locator('#scores tr[data-source="udpipe"]')
    assert "external" in row.inner_text()
    assert (
        row.locator("td").all_inner_texts()[3]
        == ui.locator('#scores tr[data-source="eager"] td').all_inner_texts()[3]
    )
    screenshot(ui, "compare-after-upload")
