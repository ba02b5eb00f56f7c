"""Real ``flask worker`` processes for the job-queue tests (and the browser test of the job box).

:class:`WorkerPool` starts workers as subprocesses of this repository against the test
database and a queue (a SQLite file or Redis), each in its own process group so that a test can
kill one (and the processes it forked) the way a machine dies: SIGKILL, no clean-up.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job, JobWorker
from app.jobs.queue import DEFAULT_REDIS_URL

ROOT = Path(__file__).resolve().parents[2]


def redis_answers(url: str = DEFAULT_REDIS_URL) -> bool:
    """Whether a Redis server answers PING at ``url``."""
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def queue_config(
    tmp_path: Path, backend: str, *, stale: float = 3.0, heartbeat: float = 0.5
) -> dict[str, Any]:
    """App settings for a real queue: ``backend`` (sqlite or redis), a queue name of its own
    (so runs sharing one Redis never see each other's jobs) and quick heartbeats."""
    return {"JOB_QUEUE": backend, "JOB_QUEUE_FILE": str(tmp_path / "queue.sqlite"),
            "JOB_QUEUE_NAME": f"arcvote-test-{uuid.uuid4().hex[:12]}", "REDIS_URL": DEFAULT_REDIS_URL,
            "JOB_STALE_SECONDS": stale, "JOB_HEARTBEAT_SECONDS": heartbeat}


class WorkerPool:
    """Starts ``flask worker`` processes configured like ``app`` and stops them all at the end."""

    def __init__(self, app: Flask, log_dir: Path) -> None:
        self.app, self.log_dir = app, log_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def environment(self, overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
        """The worker's environment: the app's database, queue, models and member settings."""
        config = {**self.app.config, **(overrides or {})}
        keys = ("JOB_QUEUE_FILE", "JOB_QUEUE_NAME", "JOB_STALE_SECONDS", "JOB_HEARTBEAT_SECONDS",
                "MODELS_DIR", "MEMBER_PARAMS", "ENSEMBLE_PARAMS")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "DATABASE_URL": str(config["SQLALCHEMY_DATABASE_URI"]),
               "JOB_QUEUE": str(config["JOB_QUEUE"]), "REDIS_URL": str(config["REDIS_URL"])}
        env.update({f"FLASK_{key}": json.dumps(config[key]) for key in keys})
        optional = ("STAGING_DIR", "IMPORT_BATCH", "IMPORT_INLINE_MAX_BYTES", "EXPORT_INLINE_MAX_SENTENCES")
        env.update({f"FLASK_{key}": json.dumps(config[key]) for key in optional if key in config})
        # A worker is not TESTING: it refuses to start without a real key (it signs no cookies).
        env["FLASK_SECRET_KEY"] = json.dumps(secrets.token_hex(32))
        return env

    def start(self, *, workers: int = 1, wait: float = 60.0, **overrides: Any) -> subprocess.Popen[bytes]:
        """Start a worker (settings ``overrides`` the app's) and wait until it registered itself."""
        before = self.registered()
        log = (self.log_dir / f"worker-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "worker", "--workers", str(workers)],
            cwd=ROOT, env=self.environment(overrides), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.processes.append(process)
        deadline = time.monotonic() + wait
        while self.registered() - before == set():
            assert process.poll() is None, f"the worker exited: {self.log(len(self.processes) - 1)}"
            assert time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.1)
        return process

    def registered(self) -> set[str]:
        """Names of the workers in ``job_workers``."""
        with self.app.app_context():
            names = set(db.session.scalars(select(JobWorker.name)))
            db.session.remove()
        return names

    def log(self, index: int) -> str:
        """What worker ``index`` wrote so far."""
        return (self.log_dir / f"worker-{index}.log").read_text(errors="replace")

    @staticmethod
    def kill(process: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker and every process of its group; wait for it."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.processes:
            self.kill(process)


def wait_for_job(app: Flask, job_id: int, done: Callable[[Job], bool], *, timeout: float = 90.0,
                 seen: list[tuple[str, float, str]] | None = None) -> Job:
    """Poll job ``job_id`` every 50 ms until ``done(job)``; ``seen`` collects every
    ``(state, progress, message)`` observed. Returns the job (detached, loaded)."""
    deadline = time.monotonic() + timeout
    while True:
        with app.app_context():
            job = db.session.get(Job, job_id)
            assert job is not None
            db.session.expunge(job)
            db.session.remove()
        if seen is not None and (not seen or seen[-1] != (job.state, job.progress, job.message)):
            seen.append((job.state, job.progress, job.message))
        if done(job):
            return job
        assert time.monotonic() < deadline, f"job {job_id} is still {job.state}: {job.message}"
        time.sleep(0.05)
