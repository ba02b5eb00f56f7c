"""A backup keeps the treebank's external parsers and plugins, not only their trees (issue #31,
finding 10): restored, they are scored, listed and run as before."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from app.parser_models import ExternalParser
from app.services.external import add_parse, set_plugin
from tests.app.helpers import empty_database
from tests.app.team_helpers import POOL, build_team
from tests.app.test_backup import _records, _without_own_events

PARSE = POOL.replace("\t2\tnsubj\t", "\t2\tobj\t")


def _parsers(app: Flask) -> dict[str, tuple[object, ...]]:
    with app.app_context():
        return {p.label: (p.command, p.url, p.timeout_s, p.filename, p.sentences)
                for p in db.session.scalars(select(ExternalParser))}


def test_external_parsers_and_plugins_survive_backup_and_restore(
    app: Flask, password_hash: str, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    with app.app_context():
        build_team(db.session, password_hash)
        treebank = db.session.scalars(select(Treebank)).one()
        owner = db.session.scalars(select(User).where(User.username == "owner")).one()
        add_parse(db.session, treebank, data=PARSE.encode(), filename="udpipe.conllu", label="udpipe",
                  user=owner)
        set_plugin(db.session, treebank, label="web", command=None, url="https://parser.example/parse",
                   timeout=12, user=owner)
        set_plugin(db.session, treebank, label="tool", command="cat", timeout=5, user=owner)
        db.session.commit()
    before = _parsers(app)
    assert set(before) == {"udpipe", "web", "tool"}
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert runner.invoke(args=["treebank", "backup", "team tb", "--output", str(first)]).exit_code == 0
    records = _records(first)
    parsers = [r for r in records if r["type"] == "parser"]
    assert [(r["label"], r["url"], r["user"]) for r in parsers] == [
        ("tool", None, "owner"), ("udpipe", None, "owner"), ("web", "https://parser.example/parse", "owner")]

    empty_database(app)
    restored = runner.invoke(args=["treebank", "restore", str(first)])
    assert restored.exit_code == 0, restored.output
    assert _parsers(app) == before
    assert runner.invoke(args=["treebank", "backup", "team tb", "--output", str(second)]).exit_code == 0
    assert _without_own_events(_records(second)) == _without_own_events(records)
