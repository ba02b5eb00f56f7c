"""Self-training in a round: automatic trees from the pool's stored parses, never instead of human ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import SentenceState, Token, User
from app.parser_models import TrainingRound
from app.services.preannotate import pool_targets
from app.services.self_training import SettingsError, automatic_training_trees, parse_settings
from app.services.trees import latest_versions
from parsing.pipeline import read_manifest
from tests.app.helpers import import_without_dev, run_round

MEMBERS = ["graph1", "eager"]


@pytest.mark.parametrize("source", ["ensemble", "own"])
def test_second_round_trains_on_automatic_trees_beside_every_human_tree(
        app: Flask, session: Session, user: User, fast: Path, source: str) -> None:
    treebank = import_without_dev(session, user, train=40, pool=12)
    first = run_round(app, session, user, treebank, MEMBERS)
    assert first.automatic_sentences == 0 and first.self_training is None
    states = [session.get(SentenceState, sid) for sid in pool_targets(session, treebank)]
    assert all(state is not None and state.entropy is not None and state.entropy >= 0 for state in states)
    assert any((state.entropy or 0) > 0 for state in states if state)  # the "entropy" order has data
    settings = {"source": source, "select": "random", "sentences": 5}
    second = run_round(app, session, user, treebank, MEMBERS, self_training=settings)
    assert second.self_training == settings and second.automatic_sentences == 5
    manifest = read_manifest(second.model_dir)
    assert manifest["automatic_sentences"] == {name: 5 for name in MEMBERS}
    assert manifest["train_sentences"] == first.train_sentences == second.train_sentences  # humans all kept
    assert second.gold_sentences == first.gold_sentences


def test_automatic_trees_carry_the_stored_ensemble_or_member_trees(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user, train=40, pool=12)
    run_round(app, session, user, treebank, MEMBERS)
    pool = pool_targets(session, treebank)
    ensemble = latest_versions(session, pool, "ensemble")
    for source, stored in (("ensemble", ensemble), ("own", latest_versions(session, pool, "eager"))):
        trees = automatic_training_trees(session, treebank, pool, MEMBERS,
                                         {"source": source, "select": "random", "sentences": 12},
                                         n_human=40, round_number=2)
        assert sorted(trees) == sorted(MEMBERS) and len(trees["eager"]) == 12
        by_forms = {tuple(s.forms[1:]): s for s in trees["eager"]}
        assert len(by_forms) == 12
        texts = {sid: tuple(token.form for token in words(session, sid)) for sid in pool}
        for sid in pool:
            sentence = by_forms[texts[sid]]
            assert sentence.heads[1:].tolist() == stored[sid].heads
            assert sentence.deprels[1:] == stored[sid].deprels


def words(session: Session, sentence_id: int) -> list[Token]:
    """The sentence's word rows in order."""
    return list(session.scalars(select(Token).where(Token.sentence_id == sentence_id, Token.word.is_not(None))
                                .order_by(Token.position)))


def test_without_stored_parses_there_is_nothing_to_add(app: Flask, session: Session, user: User,
                                                       fast: Path) -> None:
    treebank = import_without_dev(session, user, train=40, pool=12)
    trees = automatic_training_trees(session, treebank, pool_targets(session, treebank), MEMBERS,
                                     {"source": "ensemble", "select": "confidence", "sentences": None},
                                     n_human=40, round_number=1)
    assert trees == {"graph1": [], "eager": []}


@pytest.mark.parametrize(("value", "field"), [
    ([], ""), ({"source": "both"}, "source"), ({"source": "own", "select": "best"}, "select"),
    ({"source": "own", "sentences": -1}, "sentences"), ({"source": "own", "sentences": True}, "sentences"),
    ({"source": "own", "sentences": "9" * 20}, "sentences"), ({"source": "own", "extra": 1}, "extra"),
])
def test_bad_settings_name_the_field(value: Any, field: str) -> None:
    with pytest.raises(SettingsError) as raised:
        parse_settings(value)
    assert raised.value.field == field


def test_off_settings_are_none() -> None:
    assert parse_settings(None) is None and parse_settings({"source": "none"}) is None
    assert parse_settings({"source": "own", "sentences": "12"}) == {"source": "own", "select": "confidence",
                                                                    "sentences": 12}


def test_preannotate_endpoint_refuses_bad_settings_with_422(logged_in: FlaskClient, session: Session) -> None:
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana, train=12, pool=2)
    session.commit()
    body = {"parsers": "graph1", "self_training": {"source": "own", "sentences": [3]}}
    response = logged_in.post(f"/api/treebanks/{treebank.id}/preannotate", json=body)
    assert response.status_code == 422
    assert response.get_json()["field"] == "self_training.sentences"
    assert session.scalar(select(Job.id)) is None


def test_cli_round_with_self_training(app: Flask, runner: FlaskCliRunner, session: Session, user: User,
                                      fast: Path) -> None:
    treebank = import_without_dev(session, user, train=40, pool=12)
    session.commit()
    first = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1,eager",
                                "--user", "ana"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1,eager",
                                 "--self-training", "own", "--self-training-select", "random",
                                 "--self-training-sentences", "3", "--user", "ana"])
    assert second.exit_code == 0, second.output
    session.expire_all()
    newest = session.scalars(select(TrainingRound).order_by(TrainingRound.number.desc()).limit(1)).one()
    assert newest.number == 2 and newest.automatic_sentences == 3
    assert newest.self_training == {"source": "own", "select": "random", "sentences": 3}
    bad = runner.invoke(args=["treebank", "preannotate", treebank.name, "--self-training", "both"])
    assert bad.exit_code != 0 and "both" in bad.output
