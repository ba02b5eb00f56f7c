"""Browser tests: the real app on a live server, driven by headless Debian Chromium.

Chromium comes from apt (``.ci/run`` installs it); ``playwright install`` cannot download
browsers here, so Playwright launches ``/usr/bin/chromium``. Without it the tests are
skipped with the reason. The server is werkzeug's ``make_server`` in a thread on a free
port, against the test database (``TEST_DATABASE_URL`` or a temporary SQLite file), with
CSRF protection on, the thread job queue and cheap members.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask_migrate import upgrade
from werkzeug.security import generate_password_hash
from werkzeug.serving import make_server

from app import create_app, normalise_database_url
from app.extensions import db
from app.models import Base, User
from app.services.preannotate import FAST_ENSEMBLE_PARAMS, FAST_MEMBER_PARAMS

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser test password"


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """A headless Chromium (skips when /usr/bin/chromium or Playwright is missing)."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        reason = "Chromium is not installed (apt-get install chromium, or make chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must run the browser tests")
        pytest.skip(reason)
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install pytest-playwright")
    playwright = sync_api.sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or CHROMIUM,
                                         args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture(scope="module")
def live_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The app on a migrated, emptied database."""
    url = os.environ.get("TEST_DATABASE_URL")
    url = normalise_database_url(url) if url else f"sqlite:///{tmp_path_factory.mktemp('db') / 'live.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "browser", "SQLALCHEMY_DATABASE_URI": url,
                      "JOB_QUEUE": "thread", "MEMBER_PARAMS": FAST_MEMBER_PARAMS,
                      "ENSEMBLE_PARAMS": FAST_ENSEMBLE_PARAMS,
                      "MODELS_DIR": str(tmp_path_factory.mktemp("models")),
                      "PLUGIN_ALLOWED_HOSTS": ["127.0.0.1", "localhost"]})  # the tests' local plugin servers
    with app.app_context():
        upgrade()
        _empty(app)
        db.session.add(User(username="ana", password_hash=generate_password_hash(PASSWORD)))
        db.session.commit()
    yield app
    with app.app_context():
        _empty(app)
        db.engine.dispose()


def _empty(app: Flask) -> None:
    db.session.remove()
    with db.engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())


@pytest.fixture(scope="module")
def live_server(live_app: Flask) -> Iterator[str]:
    """``http://127.0.0.1:<free port>`` serving ``live_app`` from a thread."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server("127.0.0.1", 0, live_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


def signed_in_page(chromium: Any, live_server: str, username: str, password: str, *,
                   enforce_csp: bool = False) -> Iterator[Any]:
    """Yield a page at 1280×800 signed in as ``username``; no JS errors allowed.

    Playwright evaluates string predicates (wait_for_function) with eval, which the app's
    Content-Security-Policy forbids: pages bypass it unless ``enforce_csp``
    (tests/browser/test_csp.py checks the pages under the policy with enforced_ui).
    """
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, base_url=live_server,
                                   bypass_csp=not enforce_csp)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15000)
    page.goto("/auth/login")
    page.fill("#username", username)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/auth/login" not in url)
    yield page
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


@pytest.fixture
def ui(chromium: Any, live_server: str) -> Iterator[Any]:
    """A page signed in as ``ana`` (named ui: pytest-playwright owns `page`); the CSP bypassed."""
    yield from signed_in_page(chromium, live_server, "ana", PASSWORD)


@pytest.fixture
def enforced_ui(chromium: Any, live_server: str) -> Iterator[Any]:
    """Like :func:`ui`, in a browser context that enforces the Content-Security-Policy."""
    yield from signed_in_page(chromium, live_server, "ana", PASSWORD, enforce_csp=True)


@pytest.fixture(scope="session")
def screenshot() -> Callable[[Any, str], Path]:
    """``screenshot(page, name)``: a full-page PNG under test-artifacts/ (git-ignored)."""
    def take(page: Any, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path
    return take
