"""The treebank settings page, the open label set in the editor and the lead's statistics page in
a real browser (issue #30). Screenshots: settings-curator, settings-viewer, editor-add-label,
statistics and assignments-sentences.

The tests of this module run in order on one live server.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import update
from werkzeug.security import generate_password_hash

from app.extensions import db
from app.models import Sentence, Treebank, TreeVersion, User
from app.services.adjudication import adjudicate
from app.services.assignments import assign
from app.services.workspace import save_annotation
from tests.app.double_helpers import DoubleTeam, build_double_team
from tests.browser.conftest import PASSWORD, signed_in_page

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
T0 = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
GOLD = ([2, 0, 2], ["nsubj", "root", "obj"])
TREES = {"annotator": ([2, 0, 2], ["nsubj", "root", "obl"]), "ann2": ([2, 0, 1], ["nsubj", "root", "nmod"])}


def _get(model: Any, key: int) -> Any:
    found = db.session.get(model, key)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def team(live_app: Flask) -> DoubleTeam:
    """build_double_team (owner, curator, annotator, ann2, ann3, viewer, ...) with annotator and
    ann2 doubly annotating q1 and q2 (annotator 4 minutes apart, ann2 an hour apart: a break),
    q1 adjudicated to the gold tree by the curator, and q3, q4 assigned to ann3 (not started)."""
    with live_app.app_context():
        built = build_double_team(db.session, generate_password_hash(PASSWORD))
        owner, treebank = _get(User, built.user("owner")), _get(Treebank, built.team.treebank_id)
        treebank.annotators_per_sentence = 2
        assign(db.session, treebank, built.pool[:2], ["annotator", "ann2"], by=owner)
        treebank.annotators_per_sentence = 1
        assign(db.session, treebank, built.pool[2:], ["ann3"], by=owner)
        for who, (heads, deprels) in TREES.items():
            for sid in built.pool[:2]:
                save_annotation(db.session, _get(Sentence, sid), heads=heads, deprels=deprels,
                                expected_version=0, user=_get(User, built.user(who)), status="reviewed",
                                branch=who)
        adjudicate(db.session, _get(Sentence, built.pool[0]), heads=GOLD[0], deprels=GOLD[1],
                   expected_version=0, user=_get(User, built.user("curator")))
        for who, minutes in (("annotator", (0, 4)), ("ann2", (0, 60))):
            for sid, minute in zip(built.pool[:2], minutes, strict=True):
                db.session.execute(update(TreeVersion)
                                   .where(TreeVersion.sentence_id == sid, TreeVersion.name == who)
                                   .values(created_at=T0 + timedelta(minutes=minute)))
        db.session.commit()
        return built


def test_curator_sets_the_language_and_adds_a_label(chromium: Any, live_server: str, team: DoubleTeam,
                                                     screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "curator", PASSWORD, enforce_csp=True):
        page.goto("/treebanks/")
        page.click("tr:has-text('team tb') >> a.settings-link")
        assert page.locator("#current-language").inner_text() == "—"
        assert page.locator("tr[data-part=universal] td.num").inner_text() == "37"
        assert page.locator("tr[data-part=language] td.num").inner_text() == "0"
        page.fill("#language", "wo")
        page.fill("#guidelines_url", "https://example.org/wolof-guidelines")
        page.fill("#extra_labels", "advmod:emph")
        page.click("#save-settings")
        page.wait_for_selector(".flash-success >> text=Saved: language, guidelines url, extra labels.")
        assert page.locator("#current-language").inner_text() == "wo"
        language = page.locator("tr[data-part=language]")
        assert int(language.locator("td.num").inner_text()) >= 10
        assert "obj:appl" in language.inner_text() and "nmod:poss" in language.inner_text()
        assert page.locator("tr[data-part=added] .tag").all_inner_texts() == ["advmod:emph"]
        # the imported nmod:poss is a Wolof subtype now, so no label is the imported files' alone
        assert page.locator("tr[data-part=imported] td.num").inner_text() == "0"
        assert page.locator("#feature-inventory th", has_text="NounClass").count() == 1
        assert "UD validator levels 1–5" in page.locator("#settings-summary").inner_text()
        screenshot(page, "settings-curator")


def test_viewer_sees_the_settings_read_only(chromium: Any, live_server: str, team: DoubleTeam,
                                            screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "viewer", PASSWORD):
        page.goto(f"/treebanks/{team.team.treebank_id}/settings")
        assert page.locator("#settings-read-only").is_visible()
        assert page.locator("#current-language").inner_text() == "wo"
        assert page.locator("#language").is_disabled()
        assert page.locator("#save-settings").count() == 0
        screenshot(page, "settings-viewer")


def test_an_unknown_label_is_refused_and_a_curator_adds_it_from_the_editor(
        chromium: Any, live_server: str, team: DoubleTeam, screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "curator", PASSWORD):
        page.goto(f"/workspace/sentences/{team.pool[3]}")
        page.wait_for_selector("#tree svg")
        assert page.locator("#guidelines").get_attribute("href") == "https://example.org/wolof-guidelines"
        page.fill("#label-input", "obl:appl")  # allowed for Wolof by the validator: accepted
        page.click(".arc-form button[type=submit]")
        assert page.locator("#errors").count() == 0
        page.fill("#label-input", "obl:emph")
        page.click(".arc-form button[type=submit]")
        errors = page.locator("#errors")
        assert "unknown label 'obl:emph' on word 1" in errors.inner_text()
        assert "a curator adds it on the treebank's Settings page" in errors.inner_text()
        screenshot(page, "editor-unknown-label")
        errors.locator("button.add-label", has_text="Add 'obl:emph' to the labels").click()
        page.wait_for_selector("#message:has-text(\"'obl:emph' is now one of the treebank's labels\")")
        assert page.locator("#errors").count() == 0
        page.click("#save")
        page.wait_for_selector("#message:has-text('Saved version 1')")
        screenshot(page, "editor-add-label")


def test_statistics_page_draws_a_row_per_annotator(chromium: Any, live_server: str, team: DoubleTeam,
                                                   screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "owner", PASSWORD):
        page.goto("/treebanks/")
        page.click("tr:has-text('team tb') >> a.stats-link")
        rows = page.locator("#annotator-stats tbody tr")
        users = rows.evaluate_all("rows => rows.map((r) => r.dataset.user)")
        assert users == ["ann2", "annotator", "curator"]
        texts = page.locator("#annotator-stats td[data-col]").evaluate_all(
            "cells => cells.map((c) => [c.closest('tr').dataset.user + ' ' + c.dataset.col, c.innerText])")
        cells: dict[str, str] = dict(texts)
        assert (cells["annotator sentences"], cells["annotator words"]) == ("2", "6")
        assert cells["annotator saves"] == "2"
        assert cells["annotator active"] == "4.0 min" and cells["annotator sentences-per-hour"] == "30.0"
        assert cells["annotator median"] == "4.0 min" and cells["annotator edits"] == "1.0"
        assert (cells["annotator las"], cells["annotator uas"]) == ("66.7", "100.0")
        assert cells["ann2 active"] == "—" and cells["ann2 sentences-per-hour"] == "—"
        assert (cells["ann2 las"], cells["ann2 uas"]) == ("66.7", "66.7")
        # the curator's adjudication and the label test's save
        assert cells["curator sentences"] == "2" and cells["curator adjudicated"] == "0"
        assert "at most 10 minutes" in page.locator("#stats-definitions").inner_text()
        screenshot(page, "statistics")
        page.click("text=Assignments")
        mine = page.locator("details[data-user='ann3']")
        mine.locator("summary").click()
        assert mine.locator("li a").all_inner_texts() == ["q3", "q4"]
        assert mine.locator(".tag").first.inner_text() == "todo"
        screenshot(page, "assignments-sentences")


def test_events_read_in_words(chromium: Any, live_server: str, team: DoubleTeam, screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "owner", PASSWORD):
        page.goto(f"/treebanks/{team.team.treebank_id}/events")
        table = page.locator("table.events tbody")
        text = table.inner_text()
        assert "{" not in text and "None" not in text
        adjudicated = table.locator("tr", has=page.locator(".tag", has_text="adjudicate"))
        assert adjudicated.locator("a.sentence-link").inner_text() == "q1"
        assert "arcs agreeing with: ann2 2, annotator 2 · version: 1 · words: 3" in adjudicated.inner_text()
        settings = table.locator("tr", has=page.locator(".tag", has_text="settings"))
        assert "extra labels: advmod:emph → advmod:emph, obl:emph" in settings.first.inner_text()
        assert "language: — → wo" in settings.nth(1).inner_text()
        saves = table.locator("tr", has=page.locator(".tag", has_text="save"))
        assert saves.count() == 6  # four blind saves, the adjudication, the editor's save
        assert "branch: ann2 · arcs changed: 1 · status: reviewed · version: 1" in saves.nth(3).inner_text()
        assign = table.locator("tr", has=page.locator(".tag", has_text="assign")).first
        assert "ann3" in assign.inner_text() and "which:" in assign.inner_text()
        assert assign.locator(".first-sentences a.sentence-link").all_inner_texts() == ["q3", "q4"]
        screenshot(page, "events-readable")


def test_a_new_annotator_is_sent_to_their_queue(chromium: Any, live_server: str, team: DoubleTeam,
                                                screenshot: Shot) -> None:
    for page in signed_in_page(chromium, live_server, "ann3", PASSWORD):
        page.goto("/treebanks/")
        welcome = page.locator("#welcome")
        said = " ".join(welcome.inner_text().split())
        assert "You have been added to team tb as annotator: open your queue" in said
        assert "(2 sentences assigned to you)." in said
        assert "Import a CoNLL-U file" not in page.locator("main").inner_text()
        screenshot(page, "welcome-annotator")
        welcome.locator("a.queue-link").click()
        page.wait_for_url(f"**/workspace/treebanks/{team.team.treebank_id}**")
