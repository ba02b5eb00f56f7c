"""Background jobs: a ``jobs`` row records each one; a queue hands it to a worker process.

* :func:`create_job` adds the row and its ``job-start`` audit event (the caller checks the
  ``train`` permission, commits, then calls :func:`submit`). A round
  (:data:`app.models.ROUND_KINDS`) on a treebank that already has one queued or running is
  refused by the database (the partial unique index ``uq_jobs_active_round``): :class:`RoundBusy`.
* :func:`submit` hands the job over as ``JOB_QUEUE`` says: ``sqlite`` (default: Huey with a
  SQLite file in instance/, run by ``flask worker`` beside the web server), ``redis`` (Huey on
  ``REDIS_URL``: workers on many machines sharing the database), ``inline`` (run now, in the
  caller's thread: the CLI and tests) or ``thread`` (a daemon thread in this process: tests only).
  See :mod:`app.jobs.queue` and :mod:`app.jobs.worker`.
* :func:`run_job` claims the job (``queued`` → ``running``, one worker only), opens its own app
  context and session, keeps a heartbeat (:mod:`app.jobs.health`), calls the task registered
  for its ``kind`` with a :class:`Progress` reporter that commits, and records ``done`` with the
  result, ``failed`` with the error or ``cancelled`` (a cancel request seen at a progress
  report, or at the end before the result is committed). A task commits its work only through
  the reporter, so a failure leaves at most the batches it had finished (each one whole) and
  rolls back the rest.

Also here: :mod:`app.jobs.control` (cancel, retry, who may), :mod:`app.jobs.health`
(heartbeats, the reaper, ``/healthz``), :mod:`app.jobs.fanout` (a round's members as jobs of
their own), :mod:`app.jobs.model_files` (staged model directories with checksums),
:mod:`app.jobs.logs` (JSON-lines job logs), :mod:`app.jobs.tasks` (what each kind does) and
:mod:`app.jobs.file_tasks` (large imports and exports, undone by their :func:`cleanup`).

What a failed job tells its users (:func:`failure_message`, in ``error``, ``message`` and the
log tail): a ``ValueError``/``LookupError`` is a refusal the task explains in words (no trees to
train on, untagged words, ...) and a :class:`JobFailed` quotes such a message (a round's member
job failed): both are shown as they are; any other exception is a fault, shown as a
plain sentence with the job's number, while its traceback (SQL, server paths) goes to the server
log only (the app's logger).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask import Flask, current_app
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.job_models import ACTIVE_STATES, ROUND_KINDS, Job
from app.jobs.logs import log_event
from app.models import Treebank, User
from app.services import DbSession
from app.services.audit import record

LOG_TAIL_LINES = 40
"""Progress lines kept in ``Job.log_tail``."""

QUEUES = ("sqlite", "redis", "inline", "thread")
"""Values of ``JOB_QUEUE``."""


class JobCancelled(Exception):
    """Raised by :class:`Progress` when someone asked to cancel the running job."""


class JobFailed(Exception):
    """A failure whose message is written for users (e.g. a member job of a round failed, with
    that job's own shown error): :func:`failure_message` shows it as it is."""


class RoundBusy(Exception):
    """A round is already queued or running on this treebank (``active``: its job id, if found)."""

    def __init__(self, treebank_id: int, active: int | None) -> None:
        self.treebank_id, self.active = treebank_id, active
        which = f" (job {active})" if active else ""
        super().__init__(f"a round is already queued or running on this treebank{which}: "
                         "wait for it to finish, or cancel it")


def worker_name() -> str:
    """``host:pid`` of this process (what ``Job.worker`` records)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Progress:
    """Reports a job's progress: sets ``progress``/``message``, appends to the log tail and
    commits; raises :class:`JobCancelled` when a cancel was requested meanwhile."""

    def __init__(self, session: DbSession, job: Job) -> None:
        self.session = session
        self.job = job

    def __call__(self, message: str, fraction: float | None = None) -> None:
        self.job.message = message
        if fraction is not None:
            self.job.progress = max(0.0, min(1.0, fraction))
        self.job.log_tail = _append_line(self.job.log_tail, message)
        self.session.commit()
        log_event("job.progress", job=self.job.id, kind=self.job.kind, progress=round(self.job.progress, 4),
                  message=message)
        cancelled = self.session.scalar(select(Job.cancel_requested_at).where(Job.id == self.job.id))
        self.session.commit()  # end the read's transaction: the task may now wait outside the process
        if cancelled is not None:
            raise JobCancelled(message)


def _append_line(tail: str | None, message: str) -> str:
    lines = [*(tail or "").splitlines(), f"{datetime.now(UTC):%H:%M:%S} {message}"]
    return "\n".join(lines[-LOG_TAIL_LINES:])


Task = Callable[[DbSession, Job, Progress], dict[str, Any]]
TASKS: dict[str, Task] = {}
"""Task functions by job ``kind`` (registered by :mod:`app.jobs.tasks`)."""


def task(kind: str) -> Callable[[Task], Task]:
    """Register ``function`` as the task run for jobs of ``kind``."""
    def register(function: Task) -> Task:
        TASKS[kind] = function
        return function
    return register


Cleanup = Callable[[DbSession, Job], None]
CLEANUPS: dict[str, Cleanup] = {}
"""Undo functions by job ``kind``: called by :func:`finish_job` when such a job fails or is
cancelled (e.g. an import job removes the rows its committed batches wrote)."""


def cleanup(kind: str) -> Callable[[Cleanup], Cleanup]:
    """Register ``function`` as what undoes a failed or cancelled job of ``kind``."""
    def register(function: Cleanup) -> Cleanup:
        CLEANUPS[kind] = function
        return function
    return register


def create_job(
    session: DbSession, *, kind: str, user: User, treebank_id: int | None = None,
    params: dict[str, Any] | None = None, retry_of: int | None = None,
) -> Job:
    """Add a queued job (flushes; the caller commits and then calls :func:`submit`).

    :raise RoundBusy: ``kind`` is a round and ``treebank_id`` has one queued or running; the
        session is rolled back (a round job is the first thing its caller writes).
    """
    from app.jobs import tasks  # noqa: F401  (registers the tasks)

    if kind not in TASKS:
        raise ValueError(f"unknown job kind {kind!r}")
    job = Job(kind=kind, user_id=user.id, treebank_id=treebank_id, params=params or {},
              state="queued", progress=0.0, message="waiting for a worker", log_tail="",
              retry_of_id=retry_of)
    session.add(job)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        if kind in ROUND_KINDS and treebank_id is not None:
            raise RoundBusy(treebank_id, active_round(session, treebank_id)) from None
        raise
    record(session, "job-start", user=user,
           treebank=session.get(Treebank, treebank_id) if treebank_id is not None else None,
           job=job.id, kind=kind)
    log_event("job.queued", job=job.id, kind=kind, treebank=treebank_id, user=user.id, retry_of=retry_of)
    return job


def active_round(session: DbSession, treebank_id: int) -> int | None:
    """The id of the round job queued or running on ``treebank_id``, if any."""
    return session.scalar(select(Job.id).where(Job.treebank_id == treebank_id, Job.kind.in_(ROUND_KINDS),
                                               Job.state.in_(ACTIVE_STATES)))


def submit(app: Flask, job_id: int) -> None:
    """Hand the (committed) job to the configured queue (``JOB_QUEUE``)."""
    queue = app.config.get("JOB_QUEUE", "sqlite")
    if queue == "inline":
        run_job(app, job_id)
    elif queue == "thread":
        threading.Thread(target=run_job, args=(app, job_id), name=f"job-{job_id}", daemon=True).start()
    elif queue in QUEUES:
        from app.jobs.queue import enqueue

        enqueue(app, job_id)
    else:
        raise ValueError(f"unknown JOB_QUEUE {queue!r} ({', '.join(QUEUES)})")


def run_job(app: Flask, job_id: int) -> None:
    """Execute one job in its own app context and session, recording how it ended.

    Does nothing unless the job is still ``queued`` (cancelled meanwhile, or claimed by another
    worker): the claim is one conditional UPDATE.
    """
    from app.jobs import tasks  # noqa: F401
    from app.jobs.health import job_heartbeat

    with app.app_context():
        session = db.session
        try:
            now = datetime.now(UTC)
            claimed = session.execute(
                update(Job).where(Job.id == job_id, Job.state == "queued")
                .values(state="running", started_at=now, heartbeat_at=now, worker=worker_name(),
                        message="starting")).rowcount  # type: ignore[attr-defined]
            session.commit()
            if not claimed:
                return
            job = session.get(Job, job_id)
            assert job is not None
            log_event("job.started", job=job.id, kind=job.kind, treebank=job.treebank_id, worker=job.worker)
            with job_heartbeat(app, job_id):
                result = TASKS[job.kind](session, job, Progress(session, job))
                if session.scalar(select(Job.cancel_requested_at).where(Job.id == job_id)) is not None:
                    raise JobCancelled("the end, before its results were kept")  # asked after its last report
                job.state, job.progress, job.result = "done", 1.0, result
                job.finished_at = datetime.now(UTC)
                job.log_tail = _append_line(job.log_tail, "done")
                session.commit()
            log_event("job.done", job=job_id, kind=job.kind, treebank=job.treebank_id)
            if job.kind in ROUND_KINDS and job.treebank_id is not None:
                _prune_old_models(session, job.treebank_id)
        except JobCancelled as stopped:
            session.rollback()
            finish_job(session, job_id, "cancelled", f"stopped at: {stopped}")
        except Exception as error:  # noqa: BLE001  (every failure is recorded on the job)
            session.rollback()
            current_app.logger.error("job %s failed", job_id, exc_info=error)
            shown = failure_message(job_id, error)
            finish_job(session, job_id, "failed", "failed: " + shown[:300], error=shown)
        finally:
            db.session.remove()


def _prune_old_models(session: DbSession, treebank_id: int) -> None:
    """Delete old rounds' models by the retention rule (:mod:`app.services.retention`) once a round
    is registered; a failure is logged, never turned into a failed job (the round is done)."""
    from app.services.retention import prune_after_round

    try:
        for pruned in prune_after_round(session, current_app.config, treebank_id):
            log_event("models.pruned", treebank=pruned.treebank_id, round=pruned.number,
                      model_dir=pruned.model_dir)
    except Exception as error:  # noqa: BLE001  (the round is registered whatever happens here)
        current_app.logger.error("pruning old models of treebank %s failed", treebank_id, exc_info=error)


def failure_message(job_id: int, error: Exception) -> str:
    """What users read about a failed job: the task's own explanation, or a plain sentence."""
    if isinstance(error, ValueError | LookupError | JobFailed) and str(error):
        return str(error)[:500]
    return (f"the job stopped on an unexpected error ({type(error).__name__}); the server log has "
            f"the details under job {job_id}")


def finish_job(
    session: DbSession, job_id: int, state: str, message: str, *, error: str | None = None,
) -> None:
    """Record that the job ended ``failed`` or ``cancelled`` (commits; logs the event).

    ``message`` and ``error`` are shown to users: never a traceback (see :func:`failure_message`).
    A failed job keeps no ``result``; the cleanup registered for its kind (:func:`cleanup`)
    undoes what it left behind.
    """
    job = session.get(Job, job_id)
    if job is None:
        return
    if job.kind in CLEANUPS:
        CLEANUPS[job.kind](session, job)
    job.state, job.finished_at, job.message = state, datetime.now(UTC), message
    job.error = error if state == "failed" else None
    if state == "failed":
        job.result = None
    job.log_tail = _append_line(job.log_tail, message)
    session.commit()
    log_event(f"job.{state}", level=logging.WARNING if state == "failed" else logging.INFO,
              job=job_id, kind=job.kind, treebank=job.treebank_id, message=message, error=error)
