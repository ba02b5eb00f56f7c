"""The job box of the queue page in a real browser, with a real ``flask worker`` on the SQLite
queue: start a round, watch its progress, cancel it, retry it until it is done."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.services.preannotate import FAST_MEMBER_PARAMS
from tests.app.job_workers import WorkerPool, queue_config
from tests.browser.test_rounds_page import import_rounds_demo

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture(scope="module")
def live_app(live_app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    """The browser tests' app, with jobs on a SQLite queue file instead of a thread."""
    live_app.config.update(queue_config(tmp_path_factory.mktemp("queue"), "sqlite", stale=45.0))
    # slow enough that the Cancel click lands while the round still trains (with the fast settings
    # the whole round could finish between the page showing a training step and the click)
    live_app.config["MEMBER_PARAMS"] = {**FAST_MEMBER_PARAMS, "graph1": {"max_iter": 25},
                                        "eager": {"epochs": 150}}
    return live_app


@pytest.fixture(scope="module")
def worker(live_app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerPool]:
    pool = WorkerPool(live_app, tmp_path_factory.mktemp("workers"))
    pool.start()
    yield pool
    pool.stop_all()


def wait_state(page: Any, *states: str, timeout: float = 90.0) -> str:
    """Wait until the job box shows one of ``states``; return it."""
    deadline = time.monotonic() + timeout
    while (state := page.get_attribute("#job", "data-state")) not in states:
        assert time.monotonic() < deadline, (state, page.inner_text("#job"))
        time.sleep(0.1)
    return str(state)


def test_start_watch_cancel_and_retry_a_round(
    ui: Any, live_app: Flask, worker: WorkerPool, screenshot: Shot
) -> None:
    treebank_id = import_rounds_demo(live_app, "jobs demo")
    ui.goto(f"/workspace/treebanks/{treebank_id}")
    for box in ui.locator('#preannotate-form input[name="parsers"]').all():
        box.set_checked(box.get_attribute("value") in ("graph1", "eager"))
    ui.click("#preannotate-form button[type=submit]")
    wait_state(ui, "running")
    # the page polls every 0.7 s: a fast member can start and finish between two polls, so any
    # training step shown will do (a busy CI machine missed "training graph1")
    ui.wait_for_function("/training (graph1|eager)/.test(document.querySelector('#job-message').textContent)")
    assert ui.is_visible("#job-progress") and ui.is_visible("#job-cancel") and not ui.is_visible("#job-retry")
    assert ui.is_disabled("#preannotate-form button[type=submit]")  # one round at a time
    ui.click("#job-details summary")
    assert "reading training trees" in ui.inner_text("#job-log")
    screenshot(ui, "jobs-running")

    ui.click("#job-cancel")
    assert wait_state(ui, "cancelled") == "cancelled"
    assert ui.inner_text("#job-message").startswith("Cancelled")
    assert ui.is_visible("#job-retry") and not ui.is_visible("#job-cancel")
    screenshot(ui, "jobs-cancelled")

    with ui.expect_navigation(timeout=120000):  # the page reloads when the retried job is done
        ui.click("#job-retry")
    assert wait_state(ui, "done") == "done"
    assert ui.inner_text("#job-message").startswith("Done") and not ui.is_visible("#job-retry")
    assert "10 pre-annotated" in ui.inner_text("body")
    screenshot(ui, "jobs-done")
