"""The task queue: Huey, with a SQLite file (default) or Redis as its storage.

``JOB_QUEUE`` chooses the storage: ``sqlite`` keeps the queue in ``JOB_QUEUE_FILE`` (default
``instance/job-queue.sqlite``): no extra service, workers on the same machine; ``redis`` keeps
it at ``REDIS_URL`` (default ``redis://127.0.0.1:6379/0``): workers on any machine that reaches
Redis and the database. ``JOB_QUEUE_NAME`` (default ``arcvote``) separates several apps (or test
runs) sharing one Redis. The queue carries only job ids: the ``jobs`` row is the job's record,
so a lost queue message leaves a visible queued job, never a hidden one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Flask
from huey import Huey, RedisHuey, SqliteHuey
from huey.api import TaskWrapper

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
TASK_NAME = "run_job"


def queue_settings(app: Flask) -> tuple[str, str, str] | None:
    """``(backend, location, name)`` of the configured Huey queue; None for inline/thread."""
    backend = app.config.get("JOB_QUEUE", "sqlite")
    name = str(app.config.get("JOB_QUEUE_NAME") or "arcvote")
    if backend == "sqlite":
        location = app.config.get("JOB_QUEUE_FILE") or str(Path(app.instance_path) / "job-queue.sqlite")
        return backend, str(location), name
    if backend == "redis":
        return backend, str(app.config.get("REDIS_URL") or DEFAULT_REDIS_URL), name
    return None


def job_queue(app: Flask) -> Huey | None:
    """The app's Huey instance for the current settings (built once per settings), or None."""
    built = _built(app)
    return None if built is None else built[0]


def _built(app: Flask) -> tuple[Huey, TaskWrapper] | None:
    settings = queue_settings(app)
    if settings is None:
        return None
    built: dict[tuple[str, str, str], tuple[Huey, TaskWrapper]] = app.extensions.setdefault(
        "arcvote_job_queues", {})
    if settings not in built:
        built[settings] = _build(app, *settings)
    return built[settings]


def _build(app: Flask, backend: str, location: str, name: str) -> tuple[Huey, TaskWrapper]:
    options: dict[str, Any] = {"results": False, "utc": True}
    if backend == "sqlite":
        Path(location).parent.mkdir(parents=True, exist_ok=True)
        queue: Huey = SqliteHuey(name, filename=location, **options)
    else:
        queue = RedisHuey(name, url=location, **options)

    def run_queued_job(job_id: int) -> None:
        """Run job ``job_id`` (in a worker process: :func:`app.jobs.run_job`)."""
        from app.jobs import run_job

        run_job(app, job_id)

    return queue, queue.task(name=TASK_NAME)(run_queued_job)


def enqueue(app: Flask, job_id: int) -> None:
    """Put job ``job_id`` on the configured queue (a worker will :func:`~app.jobs.run_job` it)."""
    built = _built(app)
    if built is None:
        raise ValueError(f"JOB_QUEUE {app.config.get('JOB_QUEUE')!r} has no queue to put jobs on")
    built[1](job_id)
