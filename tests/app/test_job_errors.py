"""A failed job tells its users what happened in words; SQL, tracebacks and server paths go to
the server log only."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.extensions import db
from app.jobs import create_job, run_job
from app.models import Document, Treebank, User
from app.services.demo import setup_demo


def _start(app: Flask, parsers: list[str]) -> int:
    with app.app_context():
        user = db.session.scalars(select(User)).one()
        treebank_id = db.session.scalar(select(Treebank.id))
        job = create_job(db.session, kind="preannotate", user=user, treebank_id=treebank_id,
                         params={"parsers": parsers, "tags": "gold"})
        db.session.commit()
        run_job(app, job.id)
        return job.id


def test_an_internal_fault_shows_a_sentence_and_logs_the_traceback(
    app: Flask, logged_in: FlaskClient, session: Session, fast: Path,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    setup_demo(session, user=session.scalars(select(User)).one(), sentences=50)
    session.commit()
    import app.jobs.tasks as tasks

    def broken_sql(session: Session, *args: object, **kwargs: object) -> int:
        session.execute(text("SELECT secret_column FROM no_such_table"))
        return 0

    monkeypatch.setattr(tasks, "parse_batch", broken_sql)
    with caplog.at_level(logging.ERROR):
        job_id = _start(app, ["graph1"])
    shown = logged_in.get(f"/jobs/{job_id}").get_json()
    assert shown["state"] == "failed"
    fault = "OperationalError" if db.engine.dialect.name == "sqlite" else "ProgrammingError"
    assert shown["error"] == (f"the job stopped on an unexpected error ({fault}); the server "
                              f"log has the details under job {job_id}")
    assert shown["result"] is None
    page = logged_in.get(f"/workspace/treebanks/{shown['treebank_id']}").get_data(as_text=True)
    for leak in ("no_such_table", "SELECT", "Traceback", str(Path(__file__).parents[2]), ".py"):
        assert leak not in str(shown) and leak not in page, leak
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert f"job {job_id} failed" in logged and "no_such_table" in logged
    assert any(record.exc_info for record in caplog.records)


def test_a_refusal_the_task_explains_is_shown_as_it_is(
    app: Flask, logged_in: FlaskClient, session: Session, fast: Path
) -> None:
    setup_demo(session, user=session.scalars(select(User)).one(), sentences=50)
    for document in session.scalars(select(Document).where(Document.split != "pool")):
        session.delete(document)
    session.commit()
    job_id = _start(app, ["graph1"])
    shown = logged_in.get(f"/jobs/{job_id}").get_json()
    assert shown["state"] == "failed"
    assert shown["error"] == "no trees to train on: import a train split with trees first"
