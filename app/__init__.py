"""arcvote web application: ``create_app`` builds a configured Flask app.

Configuration, in order (later wins):

1. defaults below (SQLite file ``instance/arcvote.sqlite``, 50 MB upload limit) and the
   cookie settings of :data:`app.security.COOKIE_DEFAULTS`; there is no default secret key;
2. ``instance/config.py`` if present (``make run`` writes a random ``SECRET_KEY`` there);
3. ``FLASK_*`` environment variables (``FLASK_SECRET_KEY``, ...), JSON-decoded by Flask;
4. ``DATABASE_URL`` selects another database (``postgresql://...``);
   ``MODELS_DIR`` (default ``instance/models``) holds trained rounds (of which
   ``MODEL_RETENTION``, default 3, newest per treebank keep their models:
   :mod:`app.services.retention`), ``JOB_QUEUE`` runs
   background jobs (``sqlite``: default, ``redis`` at ``REDIS_URL``, ``inline``; see
   :mod:`app.jobs`), ``MEMBER_PARAMS`` overrides member
   hyperparameters by name (e.g. ``{"eager": {"epochs": 3}}``), ``ENSEMBLE_PARAMS`` the
   ensemble methods' by method name (e.g. ``{"stack": {"max_iter": 5}}``);
   ``IMPORT_INLINE_MAX_BYTES`` (2 MB), ``EXPORT_INLINE_MAX_SENTENCES`` (20,000),
   ``IMPORT_BATCH`` (2,000 sentences), ``STAGING_DIR`` (``instance/staging``) and
   ``STAGING_RETENTION_SECONDS`` (a day): larger imports and exports run as jobs
   (:mod:`app.services.staging`, :mod:`app.jobs.file_tasks`); ``PREANNOTATE_PROCESSES``
   (default 1): a round's members parse its pool in that many forked processes
   (:class:`parsing.forked.ParserPool`) where the job's process may fork (not in the daemonic
   process workers of ``worker --workers N > 1``); ``SEARCH_CORPORA_DIR`` (default
   ``instance/search-corpora``; None while testing unless set; empty: none) keeps searched
   corpora on disk for a new process's first search (:mod:`app.services.search_corpora`);
5. the ``test_config`` mapping.

Outside tests (``TESTING``) the app refuses to start without a real ``SECRET_KEY``
(:func:`app.security.require_secret_key`); tests without one get a random key.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask, redirect, url_for
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app import security, throttle
from app.services import staging
from app.wording import counted

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
    security.install(app)
    throttle.install(app)
    register_extensions(app)
    register_blueprints(app)
    app.add_template_filter(counted, "counted")
    register_commands(app)
    return app


def _configure(app: Flask, test_config: Mapping[str, Any] | None) -> None:
    """Apply the configuration layers described in the module docstring."""
    database = Path(app.instance_path) / "arcvote.sqlite"
    app.config.from_mapping(
        SECRET_KEY=None,
        SQLALCHEMY_DATABASE_URI=f"sqlite:///{database}",
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        SENTENCES_PER_PAGE=50,
        MODELS_DIR=str(Path(app.instance_path) / "models"),
        SEARCH_CORPORA_DIR=str(Path(app.instance_path) / "search-corpora"),
        JOB_QUEUE="sqlite",
        JOB_HEARTBEAT_SECONDS=10,
        JOB_STALE_SECONDS=45,
        PLUGIN_ALLOWED_HOSTS=(),
        PREANNOTATE_PROCESSES=1,
        MEMBER_PARAMS={},
        ENSEMBLE_PARAMS={},
        IMPORT_INLINE_MAX_BYTES=staging.IMPORT_INLINE_MAX_BYTES,
        EXPORT_INLINE_MAX_SENTENCES=staging.EXPORT_INLINE_MAX_SENTENCES,
        STAGING_RETENTION_SECONDS=staging.STAGING_RETENTION_SECONDS,
        **security.COOKIE_DEFAULTS,
        **throttle.DEFAULTS,
    )
    app.config.from_pyfile("config.py", silent=True)
    app.config.from_prefixed_env()
    if url := os.environ.get("DATABASE_URL"):
        app.config["SQLALCHEMY_DATABASE_URI"] = normalise_database_url(url)
    for name in ("JOB_QUEUE", "REDIS_URL", "MODELS_DIR", "MODEL_RETENTION"):
        if value := os.environ.get(name):
            app.config[name] = value
    if test_config is not None:
        app.config.update(test_config)
    if app.testing and "SEARCH_CORPORA_DIR" not in (test_config or {}):
        app.config["SEARCH_CORPORA_DIR"] = None  # tests save no searched corpora unless they ask
    if app.testing and not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = secrets.token_hex(16)
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
    from app import job_models, parser_models, search_models, team_models  # noqa: F401  (register their tables)
    from app.extensions import csrf, db, login_manager, migrate

    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(app.root_path).parent / "migrations"))
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message_category = "info"
    csrf.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Register one blueprint per area, and the error pages."""
    from app.views import (
        access,
        adjudication,
        admin,
        api_input,
        assignments,
        auth,
        checks,
        compare,
        errors,
        health,
        jobs,
        lexicon,
        openapi,
        plugins,
        rounds,
        rules,
        search,
        sentences,
        settings,
        stats,
        suspicious,
        team,
        tokens_api,
        treebanks,
        workspace,
        workspace_api,
    )

    api_input.install(app)  # before the routes: it bounds their <int:...> parts
    app.register_blueprint(auth.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(team.bp)
    app.register_blueprint(assignments.bp)
    app.register_blueprint(settings.bp)
    app.register_blueprint(stats.bp)
    app.register_blueprint(adjudication.bp)
    app.register_blueprint(treebanks.bp)
    app.register_blueprint(sentences.bp)
    app.register_blueprint(workspace.bp)
    app.register_blueprint(workspace_api.bp)
    app.register_blueprint(tokens_api.bp)
    app.register_blueprint(jobs.bp)
    app.register_blueprint(rounds.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(compare.bp)
    app.register_blueprint(plugins.bp)
    app.register_blueprint(search.bp)
    app.register_blueprint(rules.bp)
    app.register_blueprint(checks.bp)
    app.register_blueprint(lexicon.bp)
    app.register_blueprint(suspicious.bp)
    app.register_blueprint(openapi.bp)
    errors.register(app)
    access.register(app)
    app.add_url_rule("/", endpoint="index", view_func=treebanks.index)
    app.add_url_rule("/favicon.ico", endpoint="favicon", view_func=access.public(
        lambda: redirect(url_for("static", filename="img/favicon.svg"), 301)))


def register_commands(app: Flask) -> None:
    """Add the ``treebank``, ``user``, ``demo`` and ``models`` command groups and ``worker``."""
    from app.cli import demo_cli, treebank_cli, user_cli
    from app.cli_compare import add_parse_command, plugin_command, scoreboard_command
    from app.cli_models import models_cli
    from app.cli_search import search_command
    from app.cli_validate import validate_command
    from app.jobs.logs import configure_job_logging
    from app.jobs.worker import worker_command

    configure_job_logging()
    app.cli.add_command(worker_command)
    for command in (add_parse_command, scoreboard_command, plugin_command, search_command, validate_command):
        treebank_cli.add_command(command)
    app.cli.add_command(treebank_cli)
    app.cli.add_command(user_cli)
    app.cli.add_command(demo_cli)
    app.cli.add_command(models_cli)


SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite write waits for another writer before "database is locked" (30 s)."""


@event.listens_for(Engine, "connect")
def _sqlite_settings(dbapi_connection: Any, _record: Any) -> None:
    """SQLite, the embedded default: enforce foreign keys (it ignores them unless told), write
    ahead log (readers never wait for the writer), and wait :data:`SQLITE_BUSY_TIMEOUT_MS` for
    the one writer at a time instead of failing after 5 s. Teams with many simultaneous
    annotators use PostgreSQL (README, "When to switch to PostgreSQL")."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode=WAL")  # stays "memory" for an in-memory database
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL: a crash loses no committed data
        cursor.close()
