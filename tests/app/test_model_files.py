"""Rounds' model files in the app: the retention rule prunes old rounds' directories (their rows
stay), ``flask models prune`` applies it, and files changed after registration are refused."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.jobs.model_files import ModelFilesChanged, file_checksums
from app.models import Document, Sentence, Treebank, User
from app.parser_models import TrainingRound
from app.services.demo import demo_file, setup_demo
from app.services.model_cache import ModelCache
from app.services.preannotate import FAST_MEMBER_PARAMS
from app.services.reparse import reparse
from app.services.retention import models_pruned, retention, rounds_to_prune
from parsing.conllu_io import read_conllu, to_sentence
from parsing.constraints import Constraints
from parsing.pipeline import MANIFEST, train_models
from tests.app.helpers import import_without_dev, run_round


def _round(session: Session | None, treebank_id: int, number: int, directory: Path, *, tags: str = "gold",
           user_id: int = 0) -> TrainingRound:
    """A finished round row whose model directory (a manifest only) exists."""
    directory.mkdir(parents=True)
    (directory / MANIFEST).write_text("{}", encoding="utf-8")
    round_ = TrainingRound(treebank_id=treebank_id, number=number, parsers=["graph1"], tags=tags,
                           model_dir=str(directory), user_id=user_id, finished_at=datetime.now(UTC))
    if session is not None:
        session.add(round_)
    return round_


def test_the_rule_keeps_the_newest_rounds_and_the_newest_of_each_tag_mode(tmp_path: Path) -> None:
    rounds = [_round(None, 1, n, tmp_path / str(n), tags="predicted" if n == 2 else "gold")
              for n in range(1, 7)]
    assert [r.number for r in rounds_to_prune(rounds, 3)] == [3, 1]  # 6, 5, 4 kept; 2 is the newest predicted
    assert [r.number for r in rounds_to_prune(rounds, 1)] == [5, 4, 3, 1]
    assert rounds_to_prune(rounds, 0) == []  # 0 keeps every round's models
    shutil.rmtree(tmp_path / "5")  # gone already: not counted among the kept
    assert [r.number for r in rounds_to_prune(rounds, 3)] == [1]
    assert models_pruned(rounds[4]) and not models_pruned(rounds[5])
    assert retention(None) == 3 and retention("2") == 2
    with pytest.raises(ValueError, match="MODEL_RETENTION"):
        retention("-1")


def test_a_registered_round_prunes_older_models_and_keeps_their_rows(
        app: Flask, logged_in: FlaskClient, session: Session, fast: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.config, "MODEL_RETENTION", 1)
    user = session.scalars(select(User)).one()
    treebank = import_without_dev(session, user, train=30, pool=5)
    session.commit()
    first = run_round(app, session, user, treebank, ["graph1", "eager"])
    assert Path(first.model_dir, MANIFEST).is_file()
    second = run_round(app, session, user, treebank, ["graph1", "eager"])
    rows = session.scalars(select(TrainingRound).order_by(TrainingRound.number)).all()
    assert [r.number for r in rows] == [1, 2] and rows[0].scores and rows[0].checksums  # the record stays
    assert not Path(rows[0].model_dir).exists() and Path(second.model_dir, MANIFEST).is_file()
    page = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert page.count("models pruned") == 1


def test_prune_command_applies_the_rule_inside_models_dir_only(
        app: Flask, runner: FlaskCliRunner, session: Session, user: User, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    monkeypatch.setitem(app.config, "MODELS_DIR", str(models))
    setup_demo(session, user=user, sentences=5)
    treebank = session.scalars(select(Treebank)).one()
    _round(session, treebank.id, 1, tmp_path / "elsewhere" / "1", user_id=user.id)  # restored from afar
    for number in (2, 3, 4, 5):
        _round(session, treebank.id, number, models / "demo" / str(number), user_id=user.id)
    session.commit()
    result = runner.invoke(args=["models", "prune", "--keep", "2"])
    assert result.exit_code == 0, result.output
    assert "pruned treebank" in result.output and "2 model directories pruned" in result.output
    assert sorted(p.name for p in (models / "demo").iterdir()) == ["4", "5"]
    assert (tmp_path / "elsewhere" / "1" / MANIFEST).is_file()
    assert len(session.scalars(select(TrainingRound)).all()) == 5
    assert "every round's models are kept" in runner.invoke(args=["models", "prune", "--keep", "0"]).output
    monkeypatch.setitem(app.config, "MODEL_RETENTION", "many")
    refused = runner.invoke(args=["models", "prune"])
    assert refused.exit_code != 0 and "MODEL_RETENTION must be a whole number" in refused.output


def test_model_files_changed_after_registration_are_refused(
        logged_in: FlaskClient, session: Session, tmp_path: Path) -> None:
    models = tmp_path / "round"
    train = [to_sentence(raw) for raw in read_conllu(demo_file())[:30]]
    train_models(train, None, models, names=["graph1", "eager"], ensemble="vote-uniform",
                 params=FAST_MEMBER_PARAMS)
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=20)
    treebank = session.scalars(select(Treebank)).one()
    session.add(TrainingRound(treebank_id=treebank.id, number=1, parsers=["graph1", "eager"], tags="gold",
                              ensemble="vote-uniform", weights=[1.0, 1.0], model_dir=str(models),
                              user_id=user.id, finished_at=datetime.now(UTC),
                              checksums=file_checksums(models)))
    session.commit()
    sentence = session.scalars(select(Sentence).join(Document).where(Document.split == "pool")).first()
    assert sentence is not None
    assert reparse(session, sentence, Constraints({}), ModelCache())["round"] == 1  # unchanged: loads
    target = models / "parsers" / "eager.model"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(ModelFilesChanged, match="parsers/eager.model"):
        ModelCache().get(models, session.scalars(select(TrainingRound)).one().checksums)
    response = logged_in.post(f"/api/sentences/{sentence.id}/reparse", json={"constraints": []})
    assert response.status_code == 409, response.json
    assert "changed since the round was registered" in (response.json or {})["error"]


def test_a_round_of_pickled_models_is_not_loaded_and_the_reply_says_why(
        logged_in: FlaskClient, session: Session, tmp_path: Path) -> None:
    import pickle

    models = tmp_path / "old-round"
    (models / "parsers").mkdir(parents=True)
    (models / MANIFEST).write_text('{"tags": "gold", "parsers": ["graph1"]}', encoding="utf-8")
    with (models / "parsers" / "graph1.model").open("wb") as handle:  # the previous format
        pickle.dump({"magic": "arcvote-model", "version": 1, "class": "FirstOrderParser"}, handle)
        pickle.dump({"weights": [1.0]}, handle)
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=20)
    treebank = session.scalars(select(Treebank)).one()
    session.add(TrainingRound(treebank_id=treebank.id, number=1, parsers=["graph1"], tags="gold",
                              ensemble="vote-uniform", weights=[1.0], model_dir=str(models),
                              user_id=user.id, finished_at=datetime.now(UTC)))
    session.commit()
    sentence = session.scalars(select(Sentence).join(Document).where(Document.split == "pool")).first()
    assert sentence is not None
    response = logged_in.post(f"/api/sentences/{sentence.id}/reparse", json={"constraints": []})
    assert response.status_code == 409 and "train the model again" in (response.json or {})["error"]
