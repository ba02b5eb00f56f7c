"""The retention rule seen on the rounds page: with ``MODEL_RETENTION`` 1, a second round prunes
the first round's models, whose row stays, marked "models pruned"."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.browser.test_rounds_page import import_rounds_demo, run_round

pytestmark = pytest.mark.browser


def test_an_old_rounds_models_are_pruned_and_its_row_says_so(
    ui: Any, live_app: Flask, screenshot: Callable[[Any, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(live_app.config, "MODEL_RETENTION", 1)
    page = ui
    treebank_id = import_rounds_demo(live_app, "retention demo")
    run_round(page, treebank_id, ["graph1", "eager"])
    page.goto(f"/treebanks/{treebank_id}/rounds")
    assert page.locator(".models-pruned").count() == 0
    run_round(page, treebank_id, ["graph1", "eager"])
    deadline = time.monotonic() + 15  # pruning follows the commit that marks the job done
    while True:
        page.goto(f"/treebanks/{treebank_id}/rounds")
        if page.locator(".models-pruned").count() or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    rows = page.locator("#rounds tbody tr")
    assert rows.count() == 2  # the pruned round's record and scores stay
    assert rows.nth(0).locator(".models-pruned").inner_text() == "models pruned"
    assert rows.nth(1).locator(".models-pruned").count() == 0
    assert rows.nth(0).locator("td.ensemble-score strong").count() == 1
    shutil.copyfile(screenshot(page, "rounds-models-pruned"), "/tmp/models-rounds-pruned.png")
