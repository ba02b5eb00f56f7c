"""Stored XSS in a real browser: the pages of a treebank whose every user-controlled string is
hostile (:mod:`tests.app.hostile`) run no payload: no ``alert`` dialog opens, and the payloads
are shown as text. Checked with the Content-Security-Policy bypassed (so escaping alone must hold)
and enforced."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.security import generate_password_hash

from tests.app.hostile import SCRIPT, hostile_treebank
from tests.app.team_helpers import Team
from tests.browser.conftest import PASSWORD, signed_in_page

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def team(live_app: Flask) -> Team:
    built, _hostile_id = hostile_treebank(live_app, generate_password_hash(PASSWORD))
    return built


@pytest.fixture(params=[False, True], ids=["csp-bypassed", "csp-enforced"])
def admin_page(request: pytest.FixtureRequest, chromium: Any, live_server: str, team: Team) -> Iterator[Any]:
    yield from signed_in_page(chromium, live_server, "admin", PASSWORD, enforce_csp=request.param)


def test_hostile_pages_open_no_dialog(admin_page: Any, team: Team, screenshot: Shot) -> None:
    page = admin_page
    dialogs: list[str] = []

    def seen(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", seen)
    tb, sentence = team.treebank_id, team.sentence_id
    pages = {
        f"/workspace/sentences/{sentence}": "#tree svg",
        f"/sentences/{sentence}": "#tree svg",
        f"/treebanks/{tb}/sentences": "main",
        f"/workspace/treebanks/{tb}": "main",
        f"/treebanks/{tb}/members": "table.members",
        f"/treebanks/{tb}/events": "main",
        f"/treebanks/{tb}/scoreboard": "main",
        f"/treebanks/{tb}/compare?a=ext1&b=gold": "main",
        f"/workspace/sentences/{sentence}/adjudicate": "main",
        f"/treebanks/{tb}/parses/upload": "main",
        "/treebanks/": "table",
        "/admin/users": "main",
    }
    for path, drawn in pages.items():
        page.goto(path)
        page.wait_for_selector(drawn)
        page.wait_for_timeout(100)  # let onload/onerror handlers (if any were injected) run
        assert dialogs == [], f"{path}: a payload ran: {dialogs}"
    page.goto(f"/workspace/sentences/{sentence}")
    page.wait_for_selector("#tree svg")
    assert SCRIPT in page.locator("body").inner_text()  # shown as text, not dropped
    screenshot(page, "xss-editor")
    page.goto(f"/treebanks/{tb}/members")
    screenshot(page, "xss-members")
    assert dialogs == []
