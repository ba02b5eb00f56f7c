"""The sentence page's tree downloads in a real browser: the links under the source tabs give an
SVG with one arc per word and a tikz-dependency file with one edge per word (issue #30).
Screenshot: sentence-downloads."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, User
from app.services.demo import setup_demo

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def sentence_id(live_app: Flask) -> int:
    """The longest train sentence of the demo's first 40 (it has a gold tree)."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        setup_demo(db.session, user=ana, sentences=40)
        db.session.commit()
        return int(db.session.scalars(select(Sentence.id).join(Document).where(Document.split == "train")
                                      .order_by(Sentence.n_words.desc(), Sentence.id).limit(1)).one())


def test_the_sentence_page_downloads_its_tree_as_svg_and_latex(
    ui: Any, sentence_id: int, screenshot: Shot, tmp_path: Path
) -> None:
    page = ui
    page.goto(f"/sentences/{sentence_id}")
    page.wait_for_selector("#tree svg")
    n_words = page.locator("#tree svg g.arc[data-dep]").count()
    assert n_words == page.locator("table.tokens tbody tr:not(.extra)").count() > 5
    links = page.locator("#figure-downloads a")
    assert [links.nth(i).inner_text() for i in range(links.count())] == ["SVG", "LaTeX (tikz-dependency)"]
    screenshot(page, "sentence-downloads")
    with page.expect_download() as svg_download:
        links.nth(0).click()
    svg_path = tmp_path / svg_download.value.suggested_filename
    svg_download.value.save_as(svg_path)
    assert svg_path.name.endswith("-gold.svg")
    drawing = ET.parse(svg_path).getroot()
    assert len(drawing.findall("{http://www.w3.org/2000/svg}g[@class='arc']")) == n_words
    with page.expect_download() as tex_download:
        links.nth(1).click()
    tex = Path(tex_download.value.path()).read_text(encoding="utf-8")
    assert len(re.findall(r"\\depedge\{\d+\}\{\d+\}", tex)) == n_words - 1
    assert len(re.findall(r"\\deproot\{\d+\}", tex)) == 1
