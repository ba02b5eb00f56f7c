"""Background jobs: a ``jobs`` row records each one; a runner executes it.

* :func:`create_job` adds the row (the caller commits, then calls :func:`submit`).
* :func:`submit` hands the job to the runner chosen by ``JOB_RUNNER``: ``thread`` (default:
  a daemon thread in this process) or ``inline`` (run now, in the caller's thread; the CLI
  and some tests). A queue such as RQ or Celery would be a third runner calling
  :func:`run_job` in a worker.
* :func:`run_job` opens its own app context (hence its own database session), marks the job
  running, calls the task registered for its ``kind`` with a :class:`Progress` reporter that
  commits, and records ``done`` with the result or ``failed`` with the error message. A task
  commits its work only through the reporter, so a failure leaves at most the batches it
  had finished (each one whole) and rolls back the rest.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask import Flask

from app.extensions import db
from app.models import Job, User
from app.services import DbSession


class Progress:
    """Reports a job's progress: sets ``progress``/``message`` and commits the session."""

    def __init__(self, session: DbSession, job: Job) -> None:
        self.session = session
        self.job = job

    def __call__(self, message: str, fraction: float | None = None) -> None:
        self.job.message = message
        if fraction is not None:
            self.job.progress = max(0.0, min(1.0, fraction))
        self.session.commit()


Task = Callable[[DbSession, Job, Progress], dict[str, Any]]
TASKS: dict[str, Task] = {}
"""Task functions by job ``kind`` (registered by :mod:`app.jobs.tasks`)."""


def task(kind: str) -> Callable[[Task], Task]:
    """Register ``function`` as the task run for jobs of ``kind``."""
    def register(function: Task) -> Task:
        TASKS[kind] = function
        return function
    return register


def create_job(
    session: DbSession, *, kind: str, user: User, treebank_id: int | None = None,
    params: dict[str, Any] | None = None,
) -> Job:
    """Add a queued job (flushes; the caller commits and then calls :func:`submit`)."""
    from app.jobs import tasks  # noqa: F401  (registers the tasks)

    if kind not in TASKS:
        raise ValueError(f"unknown job kind {kind!r}")
    job = Job(kind=kind, user_id=user.id, treebank_id=treebank_id, params=params or {},
              state="queued", progress=0.0, message="waiting to start")
    session.add(job)
    session.flush()
    return job


def submit(app: Flask, job_id: int) -> None:
    """Run the (committed) job with the configured runner."""
    runner = app.config.get("JOB_RUNNER", "thread")
    if runner == "inline":
        run_job(app, job_id)
    elif runner == "thread":
        threading.Thread(target=run_job, args=(app, job_id), name=f"job-{job_id}", daemon=True).start()
    else:
        raise ValueError(f"unknown JOB_RUNNER {runner!r} (thread or inline)")


def run_job(app: Flask, job_id: int) -> None:
    """Execute one job in its own app context and session, recording how it ended."""
    from app.jobs import tasks  # noqa: F401

    with app.app_context():
        session = db.session
        try:
            job = session.get(Job, job_id)
            if job is None or job.state != "queued":
                return
            job.state, job.started_at = "running", datetime.now(UTC)
            session.commit()
            result = TASKS[job.kind](session, job, Progress(session, job))
            job.state, job.progress, job.result = "done", 1.0, result
            job.finished_at = datetime.now(UTC)
            session.commit()
        except Exception as error:  # noqa: BLE001  (every failure is recorded on the job)
            session.rollback()
            _record_failure(session, job_id, error)
        finally:
            db.session.remove()


def _record_failure(session: DbSession, job_id: int, error: Exception) -> None:
    failed = session.get(Job, job_id)
    if failed is None:
        return
    failed.state, failed.finished_at = "failed", datetime.now(UTC)
    failed.error = f"{type(error).__name__}: {error}"
    failed.message = "failed: " + str(error)[:300]
    failed.result = {"traceback": traceback.format_exc(limit=5)[-2000:]}
    session.commit()
