"""A round records what it trained (its :class:`parsing.plan.TrainingPlan`, issue #33), and a
member setting the server was configured with that does not hold stops the round before any
training, saying which setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.jobs import create_job, run_job
from app.models import User
from app.parser_models import TrainingRound
from app.services.preannotate import FAST_ENSEMBLE_PARAMS, FAST_MEMBER_PARAMS
from app.services.rounds import round_rows
from parsing.pipeline import read_manifest
from parsing.plan import TrainingPlan
from tests.app.helpers import import_without_dev, run_round


def test_a_round_records_its_plan_and_the_rounds_page_reads_it_back(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user, train=30, pool=4)
    session.commit()
    round_ = run_round(app, session, user, treebank, ["graph1", "eager"])
    assert round_.plan is not None
    plan = TrainingPlan.from_json(round_.plan)
    assert plan.members == ("graph1", "eager") and plan.tags == "gold"
    assert dict(plan.settings) == {name: FAST_MEMBER_PARAMS[name] for name in ("graph1", "eager")}
    assert plan.ensemble == round_.ensemble
    assert plan.ensemble_settings == FAST_ENSEMBLE_PARAMS.get(str(round_.ensemble), {})
    assert not plan.warm and plan.warm_from is None
    assert read_manifest(round_.model_dir)["plan"]["members"] == ["graph1", "eager"]
    (row,) = round_rows(session, treebank)
    assert row.plan == plan


def test_a_warm_round_records_the_round_it_continues(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user, train=30, pool=4)
    session.commit()
    first = run_round(app, session, user, treebank, ["graph1"])
    second = run_round(app, session, user, treebank, ["graph1"], warm=True)
    plan = TrainingPlan.from_json(second.plan or {})
    assert plan.warm and plan.warm_from == first.model_dir
    assert second.warm == {"from_round": 1, "members": ["graph1"]}


@pytest.mark.parametrize(("settings", "message"), [
    ({"graph1": {"epochs": 2}}, "member graph1 has no setting 'epochs'"),
    ({"biaffine": {"vectors": "/nowhere/cc.xx.300.vec"}}, "name files that are not there: biaffine.vectors"),
])
def test_a_member_setting_that_does_not_hold_stops_the_round_before_training(
        app: Flask, session: Session, user: User, fast: Path,
        monkeypatch: pytest.MonkeyPatch, settings: dict[str, dict[str, object]], message: str) -> None:
    monkeypatch.setitem(app.config, "MEMBER_PARAMS", {**FAST_MEMBER_PARAMS, **settings})
    treebank = import_without_dev(session, user, train=30, pool=4)
    session.commit()
    parsers = ["graph1", *(name for name in settings if name != "graph1")]
    job = create_job(session, kind="preannotate", user=user, treebank_id=treebank.id,
                     params={"parsers": parsers, "tags": "gold"})
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    failed = session.get(Job, job.id)
    assert failed is not None and failed.state == "failed" and message in (failed.error or "")
    assert "/nowhere" not in (failed.error or "")  # a server path stays in the server's configuration
    assert session.scalars(select(TrainingRound)).first() is None
