"""Export accepts only the sources a treebank can have: its trees, the ensemble's, a parser's."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from tests.app.test_workspace import seed


@pytest.fixture
def treebank_id(app: Flask, logged_in: FlaskClient) -> int:
    with app.app_context():
        seed(db.session, db.session.scalars(select(User)).one())
        return int(db.session.scalar(select(Treebank.id)) or 0)


@pytest.mark.parametrize("source", ["gold", "latest", "ensemble", "graph1", "eager"])
def test_known_sources_export(logged_in: FlaskClient, treebank_id: int, source: str) -> None:
    response = logged_in.get(f"/treebanks/{treebank_id}/export?source={source}")
    assert response.status_code == 200


@pytest.mark.parametrize("source", ["annotation", "nope", "<b>bold</b>", "gold ", "x" * 500, "../../etc"])
def test_unknown_sources_are_refused(logged_in: FlaskClient, treebank_id: int, source: str) -> None:
    response = logged_in.get(f"/treebanks/{treebank_id}/export", query_string={"source": source})
    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    text = response.get_data(as_text=True)
    assert text.startswith(f"unknown source {source[:40]!r}: export gold, latest, ensemble or one of the ")
    assert "Content-Disposition" not in response.headers


def test_the_cli_refuses_unknown_sources(
    runner: FlaskCliRunner, make_user: Callable[..., int], app: Flask
) -> None:
    with app.app_context():
        admin = db.session.get(User, make_user("admin", admin=True))
        assert admin is not None
        seed(db.session, admin)
    result = runner.invoke(args=["treebank", "export", "tb", "--source", "nope"])
    assert result.exit_code == 1 and "unknown source 'nope'" in result.output
    assert runner.invoke(args=["treebank", "export", "tb", "--source", "ensemble"]).exit_code == 0
