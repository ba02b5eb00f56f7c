"""Raw text pasted on the import page becomes pool sentences, listed on the treebank's page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, Token

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
TEXT = ("Mu ngi fi. Dafa tàng lool!\n\n"
        "அவர் வீட்டுக்குச் சென்றார். “Yes,” she said, “it's 3.5 km.”")
SENTENCES = ["Mu ngi fi.", "Dafa tàng lool!", "அவர் வீட்டுக்குச் சென்றார்.", "“Yes,” she said, “it's 3.5 km.”"]


def test_pasted_text_is_listed_as_pool_sentences(ui: Any, live_app: Flask, screenshot: Shot) -> None:
    ui.goto("/treebanks/import")
    ui.fill("textarea[name=text]", TEXT)
    ui.select_option("select[name=file_format]", "text")
    ui.fill("input[name=name]", "Raw pool")
    ui.select_option("select[name=split]", "pool")
    screenshot(ui, "raw-text-import-form")
    ui.click("form.card button[type=submit]")
    ui.wait_for_url(lambda url: "/sentences" in url)
    assert "Imported 4 sentences" in ui.locator("body").inner_text()
    listed = ui.locator("ol.sentences li .text").all_inner_texts()
    assert listed == SENTENCES
    assert ui.locator("ol.sentences li .sent-id").all_inner_texts() == [f"pasted-{k}" for k in range(1, 5)]
    screenshot(ui, "raw-text-imported")
    with live_app.app_context():
        document = db.session.scalars(select(Document).where(Document.name == "pasted.txt")).one()
        assert document.split == "pool"
        tamil = db.session.scalars(select(Sentence).where(Sentence.document_id == document.id,
                                                          Sentence.position == 3)).one()
        forms = db.session.scalars(select(Token.form).where(Token.sentence_id == tamil.id)
                                   .order_by(Token.position)).all()
    assert forms == ["அவர்", "வீட்டுக்குச்", "சென்றார்", "."]


def test_text_into_train_is_refused_on_the_page(ui: Any, screenshot: Shot) -> None:
    ui.goto("/treebanks/import")
    ui.fill("textarea[name=text]", "No trees here.")
    ui.select_option("select[name=file_format]", "text")
    ui.fill("input[name=name]", "Raw train")
    ui.select_option("select[name=split]", "train")
    ui.click("form.card button[type=submit]")
    alert = ui.locator("[role=alert]")
    assert "goes into the pool split, not train" in alert.inner_text()
    screenshot(ui, "raw-text-refused")
