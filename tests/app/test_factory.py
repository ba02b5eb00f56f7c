"""Configuration, error pages, migrations and the PostgreSQL check."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask
from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.models import Base, User


def test_database_url_selects_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u@h/db")
    app = create_app({"TESTING": True})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == "postgresql+psycopg2://u@h/db"
    monkeypatch.delenv("DATABASE_URL")
    default = create_app({"TESTING": True})
    assert default.config["SQLALCHEMY_DATABASE_URI"].endswith("instance/arcvote.sqlite")
    assert default.config["MAX_CONTENT_LENGTH"] == 50 * 1024 * 1024


def test_migrations_give_exactly_the_models_schema(app: Flask) -> None:
    with app.app_context(), db.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []


def test_server_error_rolls_back_and_shows_a_page(
    app: Flask, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    failing = create_app({**app.config, "TESTING": False, "SECRET_KEY": "a-long-random-key-for-this-test"})
    flushed: list[bool] = []

    @failing.route("/boom")
    def boom() -> str:
        db.session.add(User(username="ghost", password_hash="x"))
        db.session.flush()
        flushed.append(True)
        raise RuntimeError("boom")

    client = failing.test_client()
    client.post("/auth/login", data={"username": "ana", "password": "correct horse battery"})
    response = client.get("/boom")
    assert flushed == [True]
    assert response.status_code == 500
    assert "Something went wrong" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(select(User).where(User.username == "ghost")) is None


@pytest.mark.postgres
def test_suite_runs_on_postgresql(app: Flask) -> None:
    url = os.environ.get("TEST_DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql")):
        pytest.skip("TEST_DATABASE_URL is not a PostgreSQL URL; .ci/run runs the whole suite "
                    "a second time against PostgreSQL")
    with app.app_context():
        assert db.engine.dialect.name == "postgresql"
        head = ScriptDirectory(str(Path(__file__).resolve().parents[2] / "migrations")).get_current_head()
        assert head is not None  # the newest migration, applied
        assert db.session.scalar(db.text("select version_num from alembic_version")) == head
