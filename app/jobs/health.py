"""Liveness of jobs and workers: heartbeats, the reaper of jobs whose worker died, ``/healthz``.

* :func:`job_heartbeat`: while a job runs, a thread of its process writes ``jobs.heartbeat_at``
  every ``JOB_HEARTBEAT_SECONDS`` (default 10), so a long training step still looks alive.
* :func:`reap_stale_jobs`: running jobs without a heartbeat for ``JOB_STALE_SECONDS`` (default
  45) are marked failed (cancelled when a cancel was asked for). Workers run it every heartbeat
  (:class:`WorkerHeartbeat`), the job page runs it for the job it polls, so a dead worker's job
  is failed within a minute even when no worker is left.
* :func:`reap_dead_local_jobs`: at worker start-up (and exit), running jobs recorded on this
  host by a process that no longer exists are failed at once.
* :func:`health_report`: the database, the queue and the workers' heartbeats for ``/healthz``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from sqlalchemy import delete, func, select, text, update

from app.extensions import db
from app.job_models import Job, JobWorker
from app.jobs import finish_job, worker_name
from app.jobs.logs import log_event
from app.services import DbSession, as_utc


def heartbeat_seconds(app: Flask) -> float:
    """How often a running job and a worker say they are alive."""
    return float(app.config.get("JOB_HEARTBEAT_SECONDS", 10))


def stale_seconds(app: Flask) -> float:
    """Silence after which a running job's worker is taken for dead."""
    return float(app.config.get("JOB_STALE_SECONDS", 45))


@contextlib.contextmanager
def job_heartbeat(app: Flask, job_id: int) -> Iterator[None]:
    """Write the job's heartbeat from a thread until the block ends."""
    stop = threading.Event()

    def beat() -> None:
        with app.app_context():
            while not stop.wait(heartbeat_seconds(app)):
                with contextlib.suppress(Exception):  # a locked SQLite file: the next beat will do
                    with db.engine.begin() as connection:
                        connection.execute(update(Job).where(Job.id == job_id, Job.state == "running")
                                           .values(heartbeat_at=datetime.now(UTC)))

    thread = threading.Thread(target=beat, name=f"job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def reap_stale_jobs(session: DbSession, stale_after: float, *, job_id: int | None = None) -> list[int]:
    """Fail the running jobs (only ``job_id`` if given) silent for ``stale_after`` seconds (commits)."""
    cutoff = datetime.now(UTC) - timedelta(seconds=stale_after)
    last_sign = func.coalesce(Job.heartbeat_at, Job.started_at)
    query = select(Job.id, Job.heartbeat_at, Job.worker).where(Job.state == "running", last_sign < cutoff)
    if job_id is not None:
        query = query.where(Job.id == job_id)
    rows = list(session.execute(query))
    for stale, heartbeat, worker in rows:
        since = f"{as_utc(heartbeat):%H:%M:%S} UTC" if heartbeat else "it started"
        _fail_orphan(session, stale, f"the worker running this job ({worker}) stopped: "
                                     f"no heartbeat since {since}")
    return [row[0] for row in rows]


def reap_dead_local_jobs(session: DbSession, *, also: str | None = None) -> list[int]:
    """Fail the running jobs whose worker was a process of this host that is gone (or ``also``,
    a worker name that is about to go); commits."""
    host = socket.gethostname()
    rows = session.execute(select(Job.id, Job.worker).where(Job.state == "running",
                                                            Job.worker.like(f"{host}:%"))).all()
    dead = [(job_id, worker) for job_id, worker in rows if worker == also or not _alive(worker or "")]
    for job_id, worker in dead:
        _fail_orphan(session, job_id, f"the worker running this job ({worker}) stopped")
    return [job_id for job_id, _ in dead]


def _alive(worker: str) -> bool:
    """Whether the process ``host:pid`` (of this host) still exists."""
    try:
        os.kill(int(worker.rsplit(":", 1)[1]), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _fail_orphan(session: DbSession, job_id: int, why: str) -> None:
    job = session.get(Job, job_id)
    if job is None or job.state != "running":
        return
    if job.cancel_requested_at is not None:
        finish_job(session, job_id, "cancelled", why)
    else:
        finish_job(session, job_id, "failed", f"failed: {why}; retry it", error=f"WorkerLost: {why}")
    log_event("job.reaped", job=job_id, reason=why)


class WorkerHeartbeat:
    """A worker process's row in ``job_workers``, refreshed (and stale jobs reaped) by a thread.

    Use as a context manager around the consumer: on exit the row is deleted and the jobs this
    process (or its dead children) left running are failed.
    """

    def __init__(self, app: Flask, queue: str) -> None:
        self.app, self.queue, self.name = app, queue, worker_name()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-heartbeat", daemon=True)

    def __enter__(self) -> WorkerHeartbeat:
        with self.app.app_context():
            session = db.session
            session.execute(delete(JobWorker).where(JobWorker.name == self.name))
            session.add(JobWorker(name=self.name, queue=self.queue))
            session.commit()
            failed = reap_dead_local_jobs(session) + reap_stale_jobs(session, stale_seconds(self.app))
            log_event("worker.started", worker=self.name, queue=self.queue, failed_jobs=failed)
            db.session.remove()
        self._thread.start()
        return self

    def _run(self) -> None:
        with self.app.app_context():
            while not self._stop.wait(heartbeat_seconds(self.app)):
                try:
                    session = db.session
                    session.execute(update(JobWorker).where(JobWorker.name == self.name)
                                    .values(heartbeat_at=datetime.now(UTC)))
                    session.commit()
                    reap_stale_jobs(session, stale_seconds(self.app))
                    forgotten = datetime.now(UTC) - timedelta(days=1)
                    session.execute(delete(JobWorker).where(JobWorker.heartbeat_at < forgotten))
                    session.commit()
                except Exception as error:  # noqa: BLE001  (a locked database: try again next beat)
                    db.session.rollback()
                    log_event("worker.heartbeat_failed", worker=self.name, error=str(error)[:300])
                finally:
                    db.session.remove()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        with self.app.app_context():
            session = db.session
            failed = reap_dead_local_jobs(session, also=self.name)
            session.execute(delete(JobWorker).where(JobWorker.name == self.name))
            session.commit()
            db.session.remove()
        log_event("worker.stopped", worker=self.name, failed_jobs=failed)


def health_report(app: Flask) -> tuple[bool, dict[str, Any]]:
    """``(healthy, report)``: ``{"database": {"ok"}, "queue": {"backend", "ok", "pending"},
    "workers": {"ok", "required", "alive": [names], "newest_heartbeat"}}``; each check's
    ``error`` says what failed. Workers are required unless ``JOB_QUEUE`` is inline or thread."""
    from app.jobs.queue import job_queue

    report: dict[str, Any] = {}
    try:
        db.session.execute(text("SELECT 1"))
        report["database"] = {"ok": True}
    except Exception as error:  # noqa: BLE001
        db.session.rollback()
        report["database"] = {"ok": False, "error": str(error).splitlines()[0][:300]}
    backend = app.config.get("JOB_QUEUE", "sqlite")
    report["queue"] = {"backend": backend, "ok": True}
    queue = job_queue(app)
    if queue is not None:
        try:
            report["queue"]["pending"] = queue.pending_count()
        except Exception as error:  # noqa: BLE001
            report["queue"] = {"backend": backend, "ok": False, "error": str(error)[:300]}
    required = queue is not None
    workers: dict[str, Any] = {"required": required, "ok": not required, "alive": []}
    if report["database"]["ok"]:
        fresh = datetime.now(UTC) - timedelta(seconds=stale_seconds(app))
        rows = db.session.execute(select(JobWorker.name, JobWorker.heartbeat_at)
                                  .where(JobWorker.heartbeat_at >= fresh)
                                  .order_by(JobWorker.heartbeat_at.desc())).all()
        workers["alive"] = [name for name, _ in rows]
        workers["newest_heartbeat"] = as_utc(rows[0][1]).isoformat() if rows else None
        workers["ok"] = bool(rows) or not required
        if not workers["ok"]:
            workers["error"] = "no worker sent a heartbeat lately: start one (flask --app app worker)"
    report["workers"] = workers
    return all(part["ok"] for part in report.values()), report
