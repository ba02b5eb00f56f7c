"""A round that learns from raw text, chosen on the queue page and judged on the rounds page
(issue #17): tick the option and a cluster member, run the round, read the verdict."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.browser.helpers import submit_preannotate
from tests.browser.test_rounds_page import import_rounds_demo

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


def test_a_raw_text_round_from_the_queue_page_to_the_verdict(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    page = ui
    treebank_id = import_rounds_demo(live_app, "raw text demo")
    page.goto(f"/workspace/treebanks/{treebank_id}")
    panel = page.locator("fieldset.raw-text")
    assert panel.is_visible() and "10 sentences of raw text" in panel.inner_text()
    chosen = ["graph1", "graph1-brown", "graph1-context1"]
    for box in page.locator('#preannotate-form input[name="parsers"]').all():
        box.set_checked(box.get_attribute("value") in chosen)
    page.check('input[name="raw_text"]')
    shutil.copyfile(screenshot(page, "queue-raw-text"), "/tmp/queue-raw-text.png")
    state = submit_preannotate(page, "#preannotate-form button[type=submit]")
    assert state["result"]["raw_text"]["members"] == ["graph1-brown", "graph1-context1"]

    page.goto(f"/treebanks/{treebank_id}/rounds")
    effects = page.locator("#raw-text-effects tbody tr")
    assert effects.count() == 2
    rows = [[cell.inner_text() for cell in effects.nth(i).locator("th, td").all()] for i in range(2)]
    assert [(row[2], row[4]) for row in rows] == [("graph1-brown", "graph1"), ("graph1-context1", "graph1")]
    assert all(row[0] == "1" and row[1].startswith("10 sentences") for row in rows)
    for row in rows:  # the verdict matches the two scores shown
        gain = float(row[3]) - float(row[5])
        verdict = row[6].split()[-1]
        assert verdict == ("helped" if gain > 0.1 else "hurt" if gain < -0.1 else verdict), (row, gain)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shutil.copyfile(screenshot(page, "rounds-raw-text"), "/tmp/rounds-raw-text.png")
