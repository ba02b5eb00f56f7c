"""Sign-in, CSRF protection and the user commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from app import create_app
from app.cli import ADMIN_LINE
from app.extensions import db
from app.models import User

PASSWORD = "correct horse battery"


@pytest.mark.parametrize("path", ["/", "/treebanks/", "/treebanks/import", "/sentences/1",
                                  "/treebanks/1/sentences", "/treebanks/1/export"])
def test_pages_require_sign_in(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/auth/login")


def test_sign_in_and_out(client: FlaskClient, make_user: Callable[..., int]) -> None:
    make_user("ana")
    wrong = client.post("/auth/login", data={"username": "ana", "password": "nope"})
    assert wrong.status_code == 200 and "Wrong user name or password." in wrong.get_data(as_text=True)
    response = client.post("/auth/login?next=/treebanks/import",
                           data={"username": "ana", "password": PASSWORD})
    assert response.headers["Location"] == "/treebanks/import"
    assert client.get("/").status_code == 200
    assert client.post("/auth/logout").status_code == 302
    assert client.get("/").status_code == 302


def test_next_must_stay_on_the_site(client: FlaskClient, make_user: Callable[..., int]) -> None:
    make_user("ana")
    response = client.post("/auth/login?next=//evil.example/x",
                           data={"username": "ana", "password": PASSWORD})
    assert response.headers["Location"] == "/"


def test_forms_are_csrf_protected(app: Flask, make_user: Callable[..., int]) -> None:
    make_user("ana")
    protected = create_app({**app.config, "WTF_CSRF_ENABLED": True})
    client = protected.test_client()
    response = client.post("/auth/login", data={"username": "ana", "password": PASSWORD})
    assert response.status_code == 400 and "CSRF" in response.get_data(as_text=True)
    page = client.get("/auth/login").get_data(as_text=True)
    token = page.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    response = client.post("/auth/login",
                           data={"username": "ana", "password": PASSWORD, "csrf_token": token})
    assert response.status_code == 302


def test_user_create_command(app: Flask, runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["user", "create", "zoe", "--admin", "--password", "s3cret-pass"])
    assert result.exit_code == 0, result.output
    again = runner.invoke(args=["user", "create", "zoe", "--password", "s3cret-pass"])
    assert again.exit_code == 1 and "already exists" in again.output
    short = runner.invoke(args=["user", "create", "max", "--password", "short"])
    assert short.exit_code == 1 and "at least 8 characters" in short.output
    with app.app_context():
        user = db.session.scalar(select(User).where(User.username == "zoe"))
        assert user is not None and user.is_admin and user.check_password("s3cret-pass")
        assert user.password_hash != "s3cret-pass"


def test_ensure_admin_prints_a_random_password_once(
    app: Flask, runner: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARCVOTE_ADMIN_PASSWORD", raising=False)
    first = runner.invoke(args=["user", "ensure-admin"])
    assert first.exit_code == 0 and "with password: " in first.output
    password = first.output.split("with password: ")[1].split()[0]
    second = runner.invoke(args=["user", "ensure-admin"])
    assert "already exists" in second.output and password not in second.output
    with app.app_context():
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        assert admin is not None and admin.is_admin and admin.check_password(password)
    monkeypatch.setenv("ARCVOTE_ADMIN_PASSWORD", "from-the-environment")
    runner.invoke(args=["user", "ensure-admin"])
    with app.app_context():
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        assert admin is not None and admin.check_password("from-the-environment")


def test_the_admin_line_and_make_runs_hint_agree(
    runner: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue #30: `make run`'s closing hint named an "Admin account" line that did not exist, and
    the password line was lost among the setup's logs: now every ensure-admin prints one line
    starting with ADMIN_LINE (also written to --line-file), and `make run` prints that file
    again just before its hint, which quotes ADMIN_LINE."""
    monkeypatch.delenv("ARCVOTE_ADMIN_PASSWORD", raising=False)
    kept = tmp_path / "admin-line.txt"
    first = runner.invoke(args=["user", "ensure-admin", "--line-file", str(kept)])
    assert first.exit_code == 0, first.output
    (line,) = first.output.splitlines()
    assert line.startswith(f"{ADMIN_LINE} sign in as 'admin' with password: ")
    assert kept.read_text(encoding="utf-8") == line + "\n" and kept.stat().st_mode & 0o077 == 0
    again = runner.invoke(args=["user", "ensure-admin", "--line-file", str(kept)]).output
    assert again.startswith(f"{ADMIN_LINE} 'admin' already exists")
    assert kept.read_text(encoding="utf-8") == again
    monkeypatch.setenv("ARCVOTE_ADMIN_PASSWORD", "from-the-environment")
    assert runner.invoke(args=["user", "ensure-admin"]).output == (
        f"{ADMIN_LINE} sign in as 'admin' with the password in ARCVOTE_ADMIN_PASSWORD.\n")
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text(encoding="utf-8")
    setup = makefile.split("\nsetup:")[1].split("\n\n")[0]
    run = makefile.split("\nrun:")[1].split("\n\n")[0]
    assert "user ensure-admin --line-file instance/admin-line.txt" in setup
    printed, hint = run.index("cat instance/admin-line.txt"), run.index(f"the '{ADMIN_LINE}' line just above")
    assert printed < hint < run.index("gunicorn")  # the line, then the hint, then the server's logs
