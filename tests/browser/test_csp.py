"""Every page works under the Content-Security-Policy (no inline script, no inline style), and
no other site can frame the app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.browser.helpers import PoolTrees, committed_pool_trees

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]

WATCH_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation",
  (event) => window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""


@pytest.fixture(scope="module")
def pool(live_app: Flask) -> PoolTrees:
    return committed_pool_trees(live_app)


def test_pages_run_their_scripts_under_the_policy(
    enforced_ui: Any, pool: PoolTrees, screenshot: Shot
) -> None:
    page = enforced_ui
    page.add_init_script(WATCH_VIOLATIONS)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    sentence = pool.pool[0]
    pages = {
        "/treebanks/": "table",
        f"/workspace/treebanks/{pool.treebank_id}": "#preannotate-form",
        f"/sentences/{sentence}": "#tree svg",
        f"/workspace/sentences/{sentence}": "#tree svg",
        f"/treebanks/{pool.treebank_id}/rounds": "main",
        "/treebanks/import": "form",
        f"/treebanks/{pool.treebank_id}/sentences": "form.search",
        f"/treebanks/{pool.treebank_id}/members": "table.members",  # the team pages (ana owns it)
        f"/treebanks/{pool.treebank_id}/events": "main",
        f"/treebanks/{pool.treebank_id}/settings": "#label-inventory",
        f"/treebanks/{pool.treebank_id}/statistics": "main",
        f"/treebanks/{pool.treebank_id}/plugins": "#plugin-form",
        f"/treebanks/{pool.treebank_id}/remove": "main form",
        "/auth/password": "main form",
    }
    for path, drawn in pages.items():
        response = page.goto(path)
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        page.wait_for_selector(drawn)
        assert page.evaluate("window.cspViolations") == [], path
    # The editor started from its data attributes and answers the keyboard.
    page.goto(f"/workspace/sentences/{sentence}")
    page.wait_for_selector("#tree svg")
    page.locator("#tree").focus()
    before = page.evaluate("window.arcvoteEditor.selected")
    page.keyboard.press("j")
    assert page.evaluate("window.arcvoteEditor.selected") == before + 1
    assert page.evaluate("window.arcvoteEditor.words.length") == len(pool.ensemble[sentence][0])
    assert page.evaluate("window.cspViolations") == []
    assert not [text for text in console if "Content Security Policy" in text], console
    screenshot(page, "safety-editor-under-csp")


def test_another_site_cannot_frame_the_editor(enforced_ui: Any, live_server: str, pool: PoolTrees) -> None:
    page = enforced_ui
    page.goto("about:blank")
    page.set_content(f'<iframe id="f" src="{live_server}/workspace/sentences/{pool.pool[0]}"></iframe>')
    page.wait_for_timeout(1500)
    framed = [frame for frame in page.frames if frame != page.main_frame]
    assert framed, "the iframe element is there"
    assert all(frame.url.startswith("chrome-error://") or not frame.query_selector("#editor")
               for frame in framed)
