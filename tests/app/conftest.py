"""App fixtures: one database per test session, built by running the migrations.

``TEST_DATABASE_URL`` selects the database (``.ci/run`` points it at PostgreSQL); without it
a SQLite file in a temporary folder is used. Every table is emptied after each test.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from flask_migrate import upgrade
from sqlalchemy import MetaData, create_engine, func, select
from sqlalchemy.orm import Session
from werkzeug.security import generate_password_hash

from app import create_app, normalise_database_url
from app.extensions import db
from app.models import Base, Document, Sentence, Token, Treebank, TreeVersion, User
from app.services.preannotate import FAST_ENSEMBLE_PARAMS, FAST_MEMBER_PARAMS

PASSWORD = "correct horse battery"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``TEST_DATABASE_URL``, emptied first, or a fresh SQLite file."""
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite'}"
    url = normalise_database_url(url)
    engine = create_engine(url)
    metadata = MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()
    return url


@pytest.fixture(scope="session")
def app(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """The application on a database migrated to the newest revision (once per session)."""
    app = create_app({
        "TESTING": True,
        "SECRET_KEY": "test",
        "SQLALCHEMY_DATABASE_URI": database_url,
        "WTF_CSRF_ENABLED": False,
        "PLUGIN_ALLOWED_HOSTS": ["127.0.0.1", "localhost"],  # the plugin tests' local servers (#31)
    })
    with app.app_context():
        upgrade()
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(autouse=True)
def _empty_tables(request: pytest.FixtureRequest) -> Iterator[None]:
    """Delete every row (and forget failed sign-ins) after each test that used the app."""
    yield
    if "app" not in request.fixturenames:
        return
    app: Flask = request.getfixturevalue("app")
    app.extensions["login_throttle"].reset()
    with app.app_context():
        db.session.remove()
        with db.engine.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                connection.execute(table.delete())


@pytest.fixture
def session(app: Flask) -> Iterator[Session]:
    """``db.session`` inside an app context (for service tests)."""
    with app.app_context():
        yield db.session()
        db.session.rollback()


@pytest.fixture(scope="session")
def password_hash() -> str:
    """One hash of :data:`PASSWORD`, computed once (hashing is deliberately slow)."""
    return generate_password_hash(PASSWORD)


@pytest.fixture
def make_user(app: Flask, password_hash: str) -> Callable[..., int]:
    """Factory: ``make_user(name, admin=False) -> user id`` (password :data:`PASSWORD`)."""
    def _make_user(username: str = "ana", *, admin: bool = False) -> int:
        with app.app_context():
            user = User(username=username, password_hash=password_hash, is_admin=admin)
            db.session.add(user)
            db.session.commit()
            return user.id
    return _make_user


@pytest.fixture
def user(session: Session, make_user: Callable[..., int]) -> User:
    """A committed user ``ana``, loaded in :func:`session`."""
    user = session.get(User, make_user("ana"))
    assert user is not None
    return user


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A test client (not signed in)."""
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    """A runner for ``flask`` commands."""
    return app.test_cli_runner()


@pytest.fixture
def logged_in(client: FlaskClient, make_user: Callable[..., int]) -> FlaskClient:
    """A client signed in as ``ana``."""
    make_user("ana")
    response = client.post("/auth/login", data={"username": "ana", "password": PASSWORD})
    assert response.status_code == 302
    return client


@pytest.fixture
def row_counts(app: Flask) -> Callable[[], dict[str, int]]:
    """Factory: rows in each treebank table (to check a rejected import stored nothing)."""
    def _row_counts() -> dict[str, int]:
        with app.app_context():
            return {
                model.__tablename__: db.session.scalar(select(func.count()).select_from(model))
                or 0
                for model in (Treebank, Document, Sentence, Token, TreeVersion)
            }
    return _row_counts


@pytest.fixture
def fast(app: Flask, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Cheap members, models in a temporary folder, jobs run inline."""
    monkeypatch.setitem(app.config, "MEMBER_PARAMS", FAST_MEMBER_PARAMS)
    monkeypatch.setitem(app.config, "ENSEMBLE_PARAMS", FAST_ENSEMBLE_PARAMS)
    monkeypatch.setitem(app.config, "MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setitem(app.config, "JOB_QUEUE", "inline")
    return tmp_path / "models"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per search corpus built from the database (``graphs_of`` counted)."""
    import app.services.search as search_module

    built: list[int] = []
    real = search_module.graphs_of

    def counting(*args: object, **kwargs: object) -> object:
        built.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_module, "graphs_of", counting)
    return built
