"""A round's HTTP plugins run with no database transaction open, fail on their own, reach only
allowed addresses and tell viewers nothing about ports (issue #31, findings 1, 2 and 4)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from flask import Flask, g
from flask.testing import FlaskClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.extensions import db
from app.job_models import Job
from app.jobs import create_job, run_job
from app.models import Treebank, TreeVersion, User
from app.parser_models import ExternalParser
from app.services.external import UploadError, set_plugin
from app.services.members import set_role
from app.services.preannotate import pool_targets
from parsing.external import UNREACHABLE
from tests.app.conftest import PASSWORD
from tests.app.helpers import import_without_dev
from tests.app.test_workspace import seed
from tests.http_parser import Servers, chain, servers

http = pytest.fixture(servers)


def _sign_in(app: Flask, name: str) -> FlaskClient:
    client = app.test_client()
    assert client.post("/auth/login", data={"username": name, "password": PASSWORD}).status_code == 302
    return client


def _heartbeat(app: Flask, job_id: int) -> datetime | None:
    with db.engine.connect() as connection:
        return connection.scalar(select(Job.heartbeat_at).where(Job.id == job_id))


def test_a_slow_plugin_holds_no_transaction(
    app: Flask, session: Session, user: User, fast: Path, http: Servers, monkeypatch: pytest.MonkeyPatch,
    make_user: Callable[..., int],
) -> None:
    """The first plugin stores trees, the second sleeps: meanwhile another treebank's sentence is
    saved at once and the job's heartbeat goes on."""
    monkeypatch.setitem(app.config, "JOB_HEARTBEAT_SECONDS", 0.2)
    waiting = threading.Event()

    def slow(body: str) -> tuple[int, bytes]:
        waiting.set()
        time.sleep(4)
        return chain(body)

    bo = session.get(User, make_user("bo"))
    assert bo is not None
    treebank = import_without_dev(session, user, train=20, pool=6)
    set_plugin(session, treebank, label="a-fast", command=None, url=http.start(chain), timeout=30, user=user)
    set_plugin(session, treebank, label="b-slow", command=None, url=http.start(slow), timeout=30, user=user)
    other = seed(session, bo)  # bo's own treebank "tb"
    job = create_job(session, kind="preannotate", user=user, treebank_id=treebank.id,
                     params={"parsers": ["graph1"], "tags": "gold"})
    session.commit()
    saver = _sign_in(app, "bo")
    tree = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0}
    assert saver.post(f"/api/sentences/{other['c']}/annotations", json={  # warm: the first request
        **tree, "heads": [2, 0, 2, 2], "deprels": ["nsubj", "root", "obl", "obl"]}).status_code == 201
    round_ = threading.Thread(target=run_job, args=(app, job.id))
    round_.start()
    try:
        assert waiting.wait(timeout=240), "the slow plugin was never called"
        time.sleep(0.3)
        beat = _heartbeat(app, job.id)
        started = time.monotonic()
        saved = saver.post(f"/api/sentences/{other['a']}/annotations", json=tree)
        took = time.monotonic() - started
        assert saved.status_code == 201, saved.get_json()
        assert took < 1.0, f"a save waited {took:.1f} s for the round's plugin"
        session.rollback()  # the save ran in this test's app context: end its reading transaction
        if db.engine.dialect.name == "postgresql":  # and nothing else, the round included, has one
            with db.engine.connect() as connection:
                idle = connection.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                              "current_database() AND state = 'idle in transaction'"))
            assert idle == 0
        time.sleep(1.0)
        later = _heartbeat(app, job.id)
        assert beat is not None and later is not None and later > beat  # the heartbeat was written
    finally:
        round_.join(timeout=120)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None and done.state == "done", done.error if done else None
    assert done.result is not None
    pool = pool_targets(session, treebank)
    for label in ("a-fast", "b-slow"):
        trees = session.scalars(select(TreeVersion.sentence_id).where(TreeVersion.name == label)).all()
        assert sorted(trees) == sorted(pool)
        assert done.result["plugins"][label] == {"sentences": len(pool), "error": None}


def _tcp(http: Servers, answer: bytes) -> str:
    def serve(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(answer)
    return http.start_tcp(serve)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_failing_plugins_are_skipped_and_viewers_read_one_sentence(
    app: Flask, session: Session, user: User, fast: Path, http: Servers, monkeypatch: pytest.MonkeyPatch,
    make_user: Callable[..., int],
) -> None:
    """Not HTTP, an invalid URL stored earlier, a closed port, an address not allowed: each
    plugin is skipped with its error, the round ends done; a viewer cannot tell them apart."""
    treebank = import_without_dev(session, user, train=20, pool=6)
    urls = {"garbage": _tcp(http, b"garbage\r\n"), "closed": f"http://127.0.0.1:{_closed_port()}/",
            "chain": http.start(chain).replace("127.0.0.1", "localhost")}
    for label, url in urls.items():
        set_plugin(session, treebank, label=label, command=None, url=url, timeout=10, user=user)
    session.add(ExternalParser(treebank_id=treebank.id, label="spaced", user_id=user.id, timeout_s=5,
                               url="http://127.0.0.1:5079/a b"))  # saved before URLs were checked
    session.commit()
    monkeypatch.setitem(app.config, "PLUGIN_ALLOWED_HOSTS", "localhost")  # 127.0.0.1 now refused
    job = create_job(session, kind="preannotate", user=user, treebank_id=treebank.id,
                     params={"parsers": ["graph1"], "tags": "gold"})
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None and done.state == "done", done.error if done else None
    assert done.result is not None
    plugins = done.result["plugins"]
    assert plugins["chain"]["sentences"] == len(pool_targets(session, treebank))
    assert plugins["spaced"]["error"].startswith("spaced: character 24 (' ') may not appear in a URL")
    assert plugins["garbage"]["error"] == plugins["closed"]["error"] == UNREACHABLE
    details = done.result["plugin_details"]
    assert "127.0.0.1 resolves to 127.0.0.1, a loopback address" in details["garbage"]
    assert "a loopback address" in details["closed"]
    session.commit()
    make_user("vi")
    set_role(session, treebank, "vi", "viewer", by=user)
    session.commit()
    seen = _sign_in(app, "vi").get(f"/jobs/{job.id}").get_json()["result"]
    assert "plugin_details" not in seen
    assert seen["plugins"]["garbage"] == seen["plugins"]["closed"] == {"sentences": 0, "error": UNREACHABLE}
    g.pop("_login_user", None)  # the test's app context outlives the request: forget the viewer
    owner = _sign_in(app, "ana").get(f"/jobs/{job.id}").get_json()["result"]
    assert owner["plugin_details"] == details


def test_private_hosts_are_refused_when_saving_unless_allowed(
    app: Flask, session: Session, user: User, monkeypatch: pytest.MonkeyPatch, http: Servers,
) -> None:
    treebank = import_without_dev(session, user, train=2, pool=1)
    for url in ("http://127.0.0.1:8080/parse", "http://10.0.0.7/parse", "http://169.254.169.254/latest",
                "http://[::1]:80/"):
        with pytest.raises(UploadError, match=r"url: .* address; plugins may reach public addresses and "
                                              r"those an administrator allows \(PLUGIN_ALLOWED_HOSTS\)"):
            set_plugin(session, treebank, label="p", command=None, url=url, timeout=5, user=user, allowed=())
    set_plugin(session, treebank, label="p", command=None, url="http://10.0.0.7/parse", timeout=5, user=user,
               allowed=("10.0.0.0/8",))
    with pytest.raises(UploadError, match=r"may not appear in a URL"):
        set_plugin(session, treebank, label="q", command=None, url='http://127.0.0.1:5079/"><img>', timeout=5,
                   user=user)
    assert app.config["PLUGIN_ALLOWED_HOSTS"]  # the suite allows its local servers explicitly


def test_the_default_allows_no_private_host() -> None:
    from app import create_app

    assert create_app({"TESTING": True, "SECRET_KEY": "x" * 16,
                       "SQLALCHEMY_DATABASE_URI": "sqlite://"}).config["PLUGIN_ALLOWED_HOSTS"] == ()


def test_the_plugin_form_refuses_a_url_with_a_space(app: Flask, session: Session, user: User) -> None:
    treebank = import_without_dev(session, user, train=2, pool=1)
    session.commit()
    page = _sign_in(app, "ana").post(f"/treebanks/{treebank.id}/plugins", data={
        "label": "web", "kind": "http", "url": "http://127.0.0.1:5079/a b", "timeout": "5"})
    assert page.status_code == 422
    assert "character 24 (&#39; &#39;) may not appear in a URL" in page.get_data(as_text=True)
    assert session.scalar(select(ExternalParser).where(ExternalParser.treebank_id == treebank.id)) is None
    assert session.get(Treebank, treebank.id) is not None
