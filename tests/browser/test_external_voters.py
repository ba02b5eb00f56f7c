"""External parsers in the browser (issue #16): the owner configures an HTTP plugin on the plugins
page (errors named, commands left to site admins), ticks an uploaded parse as a voter in the
pre-annotate panel, and the round's voter shows on the rounds page and in the editor."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, Treebank, User
from app.services.demo import setup_demo
from app.services.external import add_parse, stored_conllu
from parsing.conllu_io import HEAD, format_conllu
from tests.http_parser import Servers, chain, servers

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture
def http() -> Iterator[Servers]:
    yield from servers()


def split_ids(treebank: Treebank, split: str) -> list[int]:
    return list(db.session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == split).order_by(Sentence.position)))


@pytest.fixture(scope="module")
def treebank_id(live_app: Flask) -> int:
    """The demo's first 50 sentences (30 train, 10 dev, 10 pool) and an uploaded parse ``chain``:
    the gold trees of dev, a left chain on the pool."""
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        setup_demo(db.session, user=ana, sentences=50)
        treebank = db.session.scalars(select(Treebank)).one()
        rows = stored_conllu(db.session, split_ids(treebank, "dev"))
        for raw in stored_conllu(db.session, split_ids(treebank, "pool")):
            for row in raw.words:
                row[HEAD], row[7] = str(int(row[0]) - 1), "root" if row[0] == "1" else "dep"
            rows.append(raw)
        add_parse(db.session, treebank, data=format_conllu(rows).encode(), filename="chain.conllu",
                  label="chain", user=ana)
        db.session.commit()
        return treebank.id


def test_owner_configures_an_http_plugin(ui: Any, treebank_id: int, screenshot: Shot, http: Servers) -> None:
    ui.goto(f"/treebanks/{treebank_id}/scoreboard")
    ui.click("text=Plugins")
    ui.wait_for_selector("#plugin-form")
    assert ui.locator("#command").is_disabled()  # ana owns the treebank but is no site admin
    assert "site admins only" in ui.locator("#plugin-form").inner_text()
    ui.fill("#label", "web")
    ui.select_option("#kind", "http")
    ui.fill("#url", "ftp://parser.example.org/parse")
    ui.click("#plugin-form button[type=submit]")
    alert = ui.locator("#plugin-error").inner_text()
    assert "not saved" in alert and "only http:// and https:// URLs, not ftp://" in alert
    screenshot(ui, "compare-plugin-refused")
    ui.fill("#url", "http://127.0.0.1:5079/a b")  # issue #31: refused when saving, not at run time
    ui.click("#plugin-form button[type=submit]")
    alert = ui.locator("#plugin-error").inner_text()
    assert "character 24 (' ') may not appear in a URL: percent-encode it (a space is %20)" in alert
    screenshot(ui, "compare-plugin-bad-url")
    ui.fill("#url", "http://10.1.2.3/parse")  # a private address the administrator did not allow
    ui.click("#plugin-form button[type=submit]")
    alert = ui.locator("#plugin-error").inner_text()
    assert "10.1.2.3 resolves to 10.1.2.3, a private address; plugins may reach public addresses" in alert
    screenshot(ui, "compare-plugin-private-address")
    ui.fill("#url", http.start(chain))
    ui.fill("#timeout", "20")
    ui.click("#plugin-form button[type=submit]")
    ui.wait_for_selector('#plugins tr[data-label="web"]')
    row = ui.locator('#plugins tr[data-label="web"]').inner_text()
    assert "HTTP" in row and "/parse" in row and "20.0 s" in row
    assert "uploads only (chain.conllu)" in ui.locator('#plugins tr[data-label="chain"]').inner_text()
    screenshot(ui, "compare-plugins")
    ui.locator('#plugins tr[data-label="web"] button', has_text="Stop").click()
    ui.wait_for_selector(".flashes")
    assert "web no longer runs." in ui.locator(".flashes").inner_text()
    assert ui.locator('#plugins tr[data-label="web"]').count() == 0


def test_an_uploaded_parse_votes_in_the_ensemble(ui: Any, treebank_id: int, screenshot: Shot) -> None:
    ui.goto(f"/workspace/treebanks/{treebank_id}")
    voters = ui.locator("#external-voters")
    assert voters.is_visible() and "chain" in voters.inner_text()
    assert "its UAS on the dev split" in ui.locator("#external-help").inner_text()
    for box in ui.locator('#preannotate-form input[name="parsers"]').all():
        box.set_checked(box.get_attribute("value") in ("graph1", "eager"))
    ui.select_option('#preannotate-form select[name="ensemble"]', "vote-power")
    ui.check('#external-voters input[value="chain"]')
    screenshot(ui, "compare-external-voter-panel")
    ui.click("#preannotate-form button[type=submit]")
    ui.wait_for_selector('#job[data-state="done"]', timeout=120_000)
    ui.goto(f"/treebanks/{treebank_id}/rounds")
    voted = ui.locator(".external-voted").first
    assert "voters: chain" in voted.inner_text()
    assert "dev UAS 100.0%" in (voted.locator(".tag").get_attribute("title") or "")
    screenshot(ui, "compare-external-voter-round")
    ui.goto(f"/workspace/treebanks/{treebank_id}")
    ui.locator("ol.queue a").first.click()
    ui.wait_for_selector("#members figure")
    names = ui.locator("#members figure figcaption").all_inner_texts()
    assert any("chain" in name for name in names), names
    screenshot(ui, "compare-external-voter-editor")
