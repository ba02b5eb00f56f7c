"""Team management in a real browser: an admin creates a user, gives them the viewer role on a
treebank, and the viewer reads it but cannot save. Screenshots: the users page, the members
page and the viewer's read-only editor.

The tests of this module run in order on one live server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select
from werkzeug.security import generate_password_hash

from app.extensions import db
from app.models import TreeVersion, User
from tests.browser.conftest import PASSWORD, signed_in_page
from tests.browser.helpers import PoolTrees, store_pool_trees

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]
VIEWER_PASSWORD = "viewer password 1"


@pytest.fixture(scope="module")
def pool(live_app: Flask) -> PoolTrees:
    """The demo treebank, pre-annotated, owned by admin ``boss``."""
    with live_app.app_context():
        boss = User(username="boss", password_hash=generate_password_hash(PASSWORD), is_admin=True)
        db.session.add(boss)
        db.session.flush()
        trees = store_pool_trees(db.session, boss)
        db.session.commit()
        return trees


@pytest.fixture
def admin(chromium: Any, live_server: str, pool: PoolTrees) -> Iterator[Any]:
    yield from signed_in_page(chromium, live_server, "boss", PASSWORD)


def test_admin_creates_a_user_and_makes_them_viewer(admin: Any, pool: PoolTrees, screenshot: Shot) -> None:
    page = admin
    page.click("nav >> text=Users")
    page.fill("#username", "vera")
    page.fill("#password", VIEWER_PASSWORD)
    page.click("form.card >> text=Create user")
    page.wait_for_selector(".flash-success >> text=Created user vera")
    page.click("text=Create an invitation link")
    link = page.locator(".copy-link").input_value()
    assert "/auth/link/" in link
    screenshot(page, "team-users")
    page.goto(f"/treebanks/{pool.treebank_id}/members")
    page.fill("#username", "vera")
    page.select_option("#role", "viewer")
    page.click("#add-member")
    page.wait_for_selector(".flash-success >> text=vera is viewer of Turkish demo")
    row = page.locator("table.members tr", has_text="vera")
    assert row.locator("select").input_value() == "viewer"
    screenshot(page, "team-members")
    page.click("text=Events")
    assert "role-add" in page.locator("table.events").inner_text()
    screenshot(page, "team-events")
    page.goto(f"/treebanks/{pool.treebank_id}/remove")
    page.fill("#delete-confirm", "not the name")
    page.click("text=Delete for good")
    assert page.locator(".alert").inner_text() == "Type 'Turkish demo' exactly to confirm."
    screenshot(page, "team-remove")


def test_viewer_reads_but_cannot_save(
    chromium: Any, live_server: str, live_app: Flask, pool: PoolTrees, screenshot: Shot
) -> None:
    for page in signed_in_page(chromium, live_server, "vera", VIEWER_PASSWORD):
        assert "Turkish demo" in page.locator("table.data").inner_text()
        page.goto(f"/workspace/sentences/{pool.pool[0]}")
        page.wait_for_selector("#tree svg")
        assert "Read only" in page.locator(".read-only").inner_text()
        assert page.locator("#save").is_disabled() and page.locator("#mark-reviewed").is_disabled()
        page.locator("#tree").focus()
        page.keyboard.press("s")  # the save key still reaches the server, which refuses
        page.wait_for_selector("#status >> text=you may not annotate sentences of treebank")
        screenshot(page, "team-viewer-editor")
        queue = page.goto(f"/workspace/treebanks/{pool.treebank_id}")
        assert queue is not None and queue.status == 200
        assert page.locator("#preannotate-form").count() == 0
        assert page.goto(f"/treebanks/{pool.treebank_id}/members").status == 403
    with live_app.app_context():
        saved = db.session.scalar(select(func.count()).select_from(TreeVersion).join(User).where(
            User.username == "vera"))
    assert saved == 0
