"""Warm rounds in the app: a round continues its members from the previous round's weights."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import User
from app.parser_models import TrainingRound
from app.services.rounds import round_rows, rounds_csv
from parsing.pipeline import read_manifest
from tests.app.helpers import import_without_dev


def test_warm_round_continues_from_the_previous_rounds_weights(
        app: Flask, runner: FlaskCliRunner, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user, train=40, pool=12)
    session.commit()
    members = ["graph1", "eager", "neural", "biaffine", "lstm-hybrid"]
    for extra in ([], ["--warm"]):
        result = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", ",".join(members),
                                     "--user", "ana", *extra])
        assert result.exit_code == 0, result.output
    session.expire_all()
    first, second = session.scalars(select(TrainingRound).order_by(TrainingRound.number)).all()
    assert first.warm is None
    assert second.warm == {"from_round": 1, "members": members}  # all five can continue
    manifest = read_manifest(second.model_dir)
    assert manifest["warm_from"] == first.model_dir and manifest["warm_members"] == members
    assert second.scores and second.scores["ensemble"]["las"] > 0
    table = rounds_csv(round_rows(session, treebank)).splitlines()
    header = table[0].split(",")
    cells = dict(zip(header, table[2].split(","), strict=False))
    assert cells["warm_from_round"] == "1" and cells["warm_members"] == " ".join(members)


def test_warm_round_without_an_earlier_round_trains_cold(
        app: Flask, runner: FlaskCliRunner, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user, train=40, pool=4)
    session.commit()
    result = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1,eager",
                                 "--user", "ana", "--warm"])
    assert result.exit_code == 0, result.output
    session.expire_all()
    only = session.scalars(select(TrainingRound)).one()
    assert only.warm is None and "warm_from" not in read_manifest(only.model_dir)
