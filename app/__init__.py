"""arcvote web application: ``create_app`` builds a configured Flask app.

Configuration, in order (later wins):

1. defaults below (SQLite file ``instance/arcvote.sqlite``, 50 MB upload limit);
2. ``instance/config.py`` if present (``make run`` writes a random ``SECRET_KEY`` there);
3. ``FLASK_*`` environment variables (``FLASK_SECRET_KEY``, ...), JSON-decoded by Flask;
4. ``DATABASE_URL`` selects another database (``postgresql://...``);
   ``MODELS_DIR`` (default ``instance/models``) holds trained rounds, ``JOB_RUNNER`` runs
   background jobs (``thread`` or ``inline``), ``MEMBER_PARAMS`` overrides member
   hyperparameters by name (e.g. ``{"eager": {"epochs": 3}}``), ``ENSEMBLE_PARAMS`` the
   ensemble methods' by method name (e.g. ``{"stack": {"max_iter": 5}}``);
5. the ``test_config`` mapping.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask, redirect, url_for
from sqlalchemy import event
from sqlalchemy.engine import Engine

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
"""Largest accepted CoNLL-U upload or CLI import file (50 MB)."""


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Create and configure the application."""
    app = Flask(
        __name__,
        template_folder="../templates",
        static_folder="../static",
        instance_relative_config=True,
    )
    _configure(app, test_config)
    register_extensions(app)
    register_blueprints(app)
    register_commands(app)
    return app


def _configure(app: Flask, test_config: Mapping[str, Any] | None) -> None:
    """Apply the configuration layers described in the module docstring."""
    database = Path(app.instance_path) / "arcvote.sqlite"
    app.config.from_mapping(
        SECRET_KEY="dev",
        SQLALCHEMY_DATABASE_URI=f"sqlite:///{database}",
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        SENTENCES_PER_PAGE=50,
        MODELS_DIR=str(Path(app.instance_path) / "models"),
        JOB_RUNNER="thread",
        MEMBER_PARAMS={},
        ENSEMBLE_PARAMS={},
    )
    app.config.from_pyfile("config.py", silent=True)
    app.config.from_prefixed_env()
    if url := os.environ.get("DATABASE_URL"):
        app.config["SQLALCHEMY_DATABASE_URI"] = normalise_database_url(url)
    if test_config is not None:
        app.config.update(test_config)
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite:///"):
        Path(app.instance_path).mkdir(parents=True, exist_ok=True)


def normalise_database_url(url: str) -> str:
    """Use the psycopg2 driver (the ``postgres`` extra) for ``postgres(ql)://`` URLs.

    SQLAlchemy 2.1 would otherwise pick psycopg 3, which the project does not install.
    """
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url.removeprefix(prefix)
    return url


def register_extensions(app: Flask) -> None:
    """Bind the extensions of :mod:`app.extensions` to ``app``."""
    from app.extensions import csrf, db, login_manager, migrate

    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(app.root_path).parent / "migrations"))
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message_category = "info"
    csrf.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Register one blueprint per area, and the error pages."""
    from app.views import auth, errors, jobs, rounds, sentences, treebanks, workspace, workspace_api

    app.register_blueprint(auth.bp)
    app.register_blueprint(treebanks.bp)
    app.register_blueprint(sentences.bp)
    app.register_blueprint(workspace.bp)
    app.register_blueprint(workspace_api.bp)
    app.register_blueprint(jobs.bp)
    app.register_blueprint(rounds.bp)
    errors.register(app)
    app.add_url_rule("/", endpoint="index", view_func=treebanks.index)
    app.add_url_rule("/favicon.ico", endpoint="favicon",
                     view_func=lambda: redirect(url_for("static", filename="img/favicon.svg"), 301))


def register_commands(app: Flask) -> None:
    """Add the ``treebank``, ``user`` and ``demo`` command groups."""
    from app.cli import demo_cli, treebank_cli, user_cli

    app.cli.add_command(treebank_cli)
    app.cli.add_command(user_cli)
    app.cli.add_command(demo_cli)


@event.listens_for(Engine, "connect")
def _sqlite_foreign_keys(dbapi_connection: Any, _record: Any) -> None:
    """Make SQLite enforce foreign keys (it ignores them unless told)."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
