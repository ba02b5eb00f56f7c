"""Pre-annotation jobs: a run stores member and ensemble trees with confidence; failures are recorded."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.extensions import db
from app.job_models import Job
from app.jobs import TASKS, Progress, create_job, run_job
from app.models import Document, Sentence, SentenceNote, SentenceState, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.demo import setup_demo
from parsing.ensemble.registry import default_method
from parsing.pipeline import load_models


def import_tiny(session: Session, user: User) -> None:
    """The demo treebank's first 50 sentences: 30 train, 10 dev, 10 pool."""
    setup_demo(session, user=user, sentences=50)


def _pool_ids(session: Session) -> list[int]:
    return list(session.scalars(select(Sentence.id).join(Document).where(Document.split == "pool")))


@pytest.mark.parametrize("processes", [1, 2])
def test_preannotation_stores_members_ensemble_and_confidence(
    app: Flask, session: Session, user: User, fast: Path, processes: int
) -> None:
    """... and with PREANNOTATE_PROCESSES=2 the members parse in forked processes: the same trees."""
    app.config["PREANNOTATE_PROCESSES"] = processes
    import_tiny(session, user)
    session.commit()
    job = create_job(session, kind="preannotate", user=user,
                     treebank_id=session.scalar(select(Document.treebank_id)),
                     params={"parsers": ["graph1", "eager", "hybrid"], "tags": "gold"})
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None and done.state == "done", done.error if done else None
    assert done.progress == 1.0 and done.result and done.result["parsed"] == 10
    pool = _pool_ids(session)
    for sentence_id in pool:
        trees = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id)).all()
        assert sorted(t.source for t in trees) == ["eager", "ensemble", "graph1", "hybrid"]
        ensemble = next(t for t in trees if t.kind == "ensemble")
        assert ensemble.scores is not None and all(0.0 <= s <= 1.0 for s in ensemble.scores)
        assert len(ensemble.heads) == len(ensemble.scores)
        state = session.get(SentenceState, sentence_id)
        assert state is not None and state.disagreement is not None and state.status == "todo"
    round_ = session.scalars(select(TrainingRound)).one()
    assert (round_.number, round_.train_sentences, round_.dev_sentences) == (1, 30, 10)
    assert len(round_.weights) == 3 and round_.dev_uas is not None and len(round_.dev_uas) == 3
    assert (Path(round_.model_dir) / "manifest.json").is_file()
    assert Path(round_.model_dir).parent.parent == fast
    assert round_.ensemble == default_method("gold") == done.result["ensemble"]
    bundle = load_models(round_.model_dir)  # the stored ensemble trees are the bundle's ensemble's
    assert bundle.ensemble_method == default_method("gold")
    from app.services.parsing_adapter import load_sentences

    by_name, combined = bundle.parse_with_ensemble(load_sentences(session, pool))
    for i, sentence_id in enumerate(pool):
        stored = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id,
                                                           TreeVersion.kind == "ensemble")).one()
        assert stored.heads == combined[i].heads[1:].tolist()
        member = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id,
                                                           TreeVersion.name == "eager")).one()
        assert (member.heads, member.deprels) == (by_name["eager"][i].heads[1:].tolist(),
                                                  by_name["eager"][i].deprels[1:])


def test_preannotation_with_a_chosen_ensemble(app: Flask, session: Session, user: User, fast: Path) -> None:
    import_tiny(session, user)
    session.commit()
    job = create_job(session, kind="preannotate", user=user,
                     treebank_id=session.scalar(select(Document.treebank_id)),
                     params={"parsers": ["graph1", "eager"], "tags": "gold", "ensemble": "vote-power"})
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None and done.state == "done", done.error if done else None
    round_ = session.scalars(select(TrainingRound)).one()
    assert round_.ensemble == "vote-power"
    bundle = load_models(round_.model_dir)
    assert bundle.ensemble_members == ["graph1", "eager"]
    assert round_.dev_uas is not None  # shown shares use the ensemble's own weights, UAS**10
    assert round_.weights == pytest.approx([uas**10 for uas in round_.dev_uas])


def test_failure_is_recorded_and_nothing_half_written(
    app: Flask, session: Session, user: User, fast: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_tiny(session, user)
    session.commit()
    import app.jobs.tasks as tasks

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(tasks, "parse_batch", broken)
    job = create_job(session, kind="preannotate", user=user, treebank_id=session.scalar(
        select(Document.treebank_id)), params={"parsers": ["graph1"], "tags": "gold"})
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    failed = session.get(Job, job.id)
    assert failed is not None and failed.state == "failed"
    assert failed.error == ("the job stopped on an unexpected error (RuntimeError); the server log "
                            f"has the details under job {job.id}")
    assert failed.finished_at is not None and failed.result is None
    parsed = session.scalar(select(func.count()).select_from(TreeVersion).where(
        TreeVersion.kind.in_(("parser", "ensemble"))))
    assert parsed == 0


def test_a_cancel_asked_after_the_last_progress_report_still_cancels(
    app: Flask, session: Session, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    def finishing(task_session: Session, job: Job, progress: Progress) -> dict[str, Any]:
        progress("the last step", 0.9)
        with db.engine.begin() as web:  # the web process asks to cancel after the last report
            web.execute(update(Job).where(Job.id == job.id).values(cancel_requested_at=func.now()))
        task_session.add(SentenceNote(sentence_id=sentence_id, body="kept only if done", user_id=user.id))
        return {"would": "be kept"}

    import_tiny(session, user)
    sentence_id = _pool_ids(session)[0]
    session.commit()
    from app.jobs import tasks as _registered  # noqa: F401  (the real tasks, before adding one)

    monkeypatch.setitem(TASKS, "finishing", finishing)
    job = create_job(session, kind="finishing", user=user)
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    stopped = session.get(Job, job.id)
    assert stopped is not None and stopped.state == "cancelled", stopped.message if stopped else None
    assert stopped.result is None and stopped.message == "stopped at: the end, before its results were kept"
    assert session.scalars(select(SentenceNote)).all() == []  # the task's unreported work is not kept


def test_a_progress_report_leaves_no_transaction_open(
    app: Flask, session: Session, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task waits outside the process (plugins, training) right after reporting progress: the
    report's own cancel check must not hold a transaction (and its snapshot) open meanwhile."""
    seen: list[bool] = []

    def reporting(task_session: Session, job: Job, progress: Progress) -> dict[str, Any]:
        progress("about to wait on a plugin", 0.5)
        seen.append(db.session().in_transaction())  # the task's session (db.session is scoped)
        return {}

    from app.jobs import tasks as _registered  # noqa: F401  (the real tasks, before adding one)

    monkeypatch.setitem(TASKS, "reporting", reporting)
    job = create_job(session, kind="reporting", user=user)
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None and done.state == "done", (done.state, done.message) if done else None
    assert seen == [False]


def test_browser_starts_a_job_and_polls_it(
    app: Flask, logged_in: FlaskClient, fast: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(app.config, "JOB_QUEUE", "thread")
    with app.app_context():
        from app.extensions import db

        setup_demo(db.session, user=db.session.scalars(select(User)).one(), sentences=50)
        db.session.commit()
        treebank_id = db.session.scalar(select(Document.treebank_id))
    response = logged_in.post(f"/api/treebanks/{treebank_id}/preannotate",
                              json={"parsers": "graph1,eager", "tags": "gold"})
    assert response.status_code == 202
    job_id = response.get_json()["job"]["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = logged_in.get(f"/jobs/{job_id}").get_json()
        if state["state"] in ("done", "failed"):
            break
        time.sleep(0.2)
    assert state["state"] == "done", state
    assert state["progress"] == 1.0 and state["result"]["parsers"] == ["graph1", "eager"]
    assert logged_in.get("/jobs/999999").status_code == 404


def test_unknown_parser_is_refused(app: Flask, logged_in: FlaskClient) -> None:
    response = logged_in.post("/api/treebanks/1/preannotate", json={"parsers": "nope"})
    assert response.status_code in (404, 422)


def test_unknown_or_unusable_ensemble_is_refused(app: Flask, logged_in: FlaskClient, fast: Path) -> None:
    from app.extensions import db

    with app.app_context():
        setup_demo(db.session, user=db.session.scalars(select(User)).one(), sentences=50)
        db.session.commit()
        treebank_id = db.session.scalar(select(Document.treebank_id))
    url = f"/api/treebanks/{treebank_id}/preannotate"
    response = logged_in.post(url, json={"parsers": "graph1", "ensemble": "best"})
    assert response.status_code == 422 and "unknown ensemble method 'best'" in response.get_json()["error"]
    response = logged_in.post(url, json={"parsers": "eager", "ensemble": "score-sum"})
    assert response.status_code == 422 and "combines none of eager" in response.get_json()["error"]
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Job)) == 0


def test_cli_preannotate(
    app: Flask, runner: FlaskCliRunner, session: Session, user: User, fast: Path
) -> None:
    import_tiny(session, user)
    session.commit()
    result = runner.invoke(args=["treebank", "preannotate", "Turkish demo", "--parsers", "graph1,eager",
                                 "--user", "ana"])
    assert result.exit_code == 0, result.output
    assert "parsed 10 sentences" in result.output
    pool = _pool_ids(session)
    chosen = runner.invoke(args=["treebank", "preannotate", "Turkish demo", "--parsers", "graph1",
                                 "--sentences", f"{pool[0]},{pool[1]},999999", "--user", "ana"])
    assert chosen.exit_code == 0 and "parsed 2 sentences" in chosen.output, chosen.output
    versions = session.scalars(select(TreeVersion.version).where(
        TreeVersion.sentence_id == pool[0], TreeVersion.kind == "ensemble")).all()
    assert sorted(versions) == [1, 2]
    bad = runner.invoke(args=["treebank", "preannotate", "Turkish demo", "--parsers", "nope",
                              "--user", "ana"])
    assert bad.exit_code != 0 and "unknown parser" in bad.output
    bad = runner.invoke(args=["treebank", "preannotate", "Turkish demo", "--ensemble", "best",
                              "--user", "ana"])
    assert bad.exit_code != 0 and "unknown ensemble method" in bad.output


def test_demo_preannotate_is_idempotent(
    app: Flask, runner: FlaskCliRunner, session: Session, user: User, fast: Path
) -> None:
    missing = runner.invoke(args=["demo", "preannotate", "--user", "ana"])
    assert missing.exit_code != 0 and "demo setup" in missing.output
    import_tiny(session, user)
    session.commit()
    first = runner.invoke(args=["demo", "preannotate", "--user", "ana", "--parsers", "graph1,eager"])
    assert first.exit_code == 0 and "parsed 10 sentences" in first.output, first.output
    second = runner.invoke(args=["demo", "preannotate", "--user", "ana"])
    assert "already pre-annotated" in second.output
