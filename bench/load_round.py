"""A pre-annotation round with a slow HTTP plugin, kept running while ``bench/load.py`` loads the app
(issue #31's last goal: saves stay fast while a round waits on a plugin outside the process).

:class:`SlowPlugin` is an HTTP parser on 127.0.0.1 that waits before answering and then trickles
its reply (each word attached to the previous one). :class:`RoundsUnderLoad` registers it as the
treebank's plugin ``slow`` (loopback allowed through ``PLUGIN_ALLOWED_HOSTS``), starts a job worker
(``flask --app app worker``) and, while the load runs, keeps a round going: cheap members
(``FAST_MEMBER_PARAMS``), gold tags, ``vote-uniform`` with ``slow`` as an external voter; a new
round is queued as soon as the previous one ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.job_models import Job
from app.jobs import create_job, submit
from app.models import Treebank, User
from app.services.demo import DEMO_NAME
from app.services.external import set_plugin
from app.services.preannotate import FAST_ENSEMBLE_PARAMS, FAST_MEMBER_PARAMS

ROOT_DIR = Path(__file__).resolve().parents[1]
PLUGIN_LABEL = "slow"
ROUND_PARAMS = {"parsers": ["graph1", "eager"], "tags": "gold", "ensemble": "vote-uniform",
                "externals": [PLUGIN_LABEL]}


def chained(body: str) -> bytes:
    """``body`` (CoNLL-U) with every word attached to the previous one, the first to ROOT."""
    lines = []
    for line in body.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7] = str(int(cols[0]) - 1), "root" if cols[0] == "1" else "dep"
        lines.append("\t".join(cols))
    return ("\n".join(lines) + "\n").encode("utf-8")


@dataclass
class SlowPlugin:
    """An HTTP plugin on 127.0.0.1 that sleeps ``delay`` s before its headers, then sends its reply
    in 10 pieces over ``trickle`` s. ``calls``: (sentences, seconds from request to last byte)."""

    delay: float = 3.0
    trickle: float = 2.0
    calls: list[tuple[int, float]] = field(default_factory=list)

    def start(self) -> str:
        """Serve on a free port; the plugin's URL."""
        plugin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                started = time.monotonic()
                body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
                data = chained(body)
                time.sleep(plugin.delay)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                piece = len(data) // 10 + 1
                try:
                    for at in range(0, len(data), piece):
                        self.wfile.write(data[at:at + piece])
                        self.wfile.flush()
                        time.sleep(plugin.trickle / 10)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                plugin.calls.append((body.count("\n\n"), time.monotonic() - started))

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/parse"

    def stop(self) -> None:
        self.server.shutdown()


class RoundsUnderLoad:
    """The worker, the plugin and the rounds of one load test (see the module docstring)."""

    def __init__(self, url: str, plugin: SlowPlugin) -> None:
        self.url, self.plugin = url, plugin
        self.folder = tempfile.mkdtemp(prefix="arcvote-load-")
        self.jobs: list[dict[str, Any]] = []  # id, state, error, seconds, started (s into the load)
        self.stop_at = 0.0
        self.current: tuple[int, float] | None = None  # the round being waited on: job id, queued at

    def env(self) -> dict[str, str]:
        """Settings gunicorn and the worker share (queue file, models folder, loopback plugins)."""
        import json

        return {"DATABASE_URL": self.url, "FLASK_JOB_QUEUE": "sqlite",
                "FLASK_JOB_QUEUE_FILE": str(Path(self.folder) / "job-queue.sqlite"),
                "MODELS_DIR": str(Path(self.folder) / "models"), "FLASK_PLUGIN_ALLOWED_HOSTS": "127.0.0.1",
                "FLASK_MEMBER_PARAMS": json.dumps(FAST_MEMBER_PARAMS),
                "FLASK_ENSEMBLE_PARAMS": json.dumps(FAST_ENSEMBLE_PARAMS)}

    def start(self, secret_env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Register the plugin on the demo treebank and start the job worker."""
        os.environ.update({**self.env(), **secret_env})
        self.app = create_app({"SQLALCHEMY_DATABASE_URI": self.url})
        with self.app.app_context():
            treebank = db.session.scalars(select(Treebank).where(Treebank.name == DEMO_NAME)).one()
            owner = db.session.scalars(select(User).where(User.username == "annotator00")).one()
            set_plugin(db.session, treebank, label=PLUGIN_LABEL, command=None, url=self.plugin.start(),
                       timeout=60, user=owner, allowed=["127.0.0.1"])
            db.session.commit()
            self.treebank_id, self.owner_id = treebank.id, owner.id
        command = [str(Path(sys.executable).parent / "flask"), "--app", "app", "worker"]
        return subprocess.Popen(command, cwd=ROOT_DIR, env=dict(os.environ))

    def keep_running(self, seconds: float) -> threading.Thread:
        """A thread queueing one round after another for ``seconds`` (waits for the last to end)."""
        self.began, self.stop_at = time.monotonic(), time.monotonic() + seconds
        thread = threading.Thread(target=self._rounds, daemon=True)
        thread.start()
        return thread

    def _rounds(self) -> None:
        while time.monotonic() < self.stop_at:
            with self.app.app_context():
                owner = db.session.get(User, self.owner_id)
                assert owner is not None
                job = create_job(db.session, kind="preannotate", user=owner, treebank_id=self.treebank_id,
                                 params=dict(ROUND_PARAMS))
                db.session.commit()
                job_id = job.id
                submit(self.app, job_id)
            queued = time.monotonic()
            self.current = (job_id, queued)
            state, error = self._wait(job_id, queued + 900)
            self.current = None
            self.jobs.append({"id": job_id, "state": state, "error": error,
                              "queued_at_s": round(queued - self.began, 1),
                              "seconds": round(time.monotonic() - queued, 1)})
            if state != "done":
                return

    def _wait(self, job_id: int, deadline: float) -> tuple[str, str | None]:
        while time.monotonic() < deadline:
            time.sleep(2)
            with self.app.app_context():
                job = db.session.get(Job, job_id)
                assert job is not None
                if job.state in ("done", "failed", "cancelled"):
                    return job.state, job.error
        return "still running", None

    def summary(self) -> list[str]:
        """Lines for the report: the rounds and the plugin's calls."""
        done = [j for j in self.jobs if j["state"] == "done"]
        lines = [f"rounds: {len(self.jobs)} queued, {len(done)} done during/after the load: "
                 + "; ".join(f"job {j['id']} {j['state']} (queued at {j['queued_at_s']} s, "
                             f"{j['seconds']} s){' ' + str(j['error'])[:120] if j['error'] else ''}"
                             for j in self.jobs)]
        if self.current is not None:
            job_id, queued = self.current
            lines.append(f"job {job_id} (queued at {queued - self.began:.1f} s) still running "
                         f"{time.monotonic() - queued:.0f} s after it was queued, when this was written")
        times = [seconds for _, seconds in self.plugin.calls]
        lines.append(f"plugin {PLUGIN_LABEL} (waits {self.plugin.delay:g} s, trickles over "
                     f"{self.plugin.trickle:g} s): {len(times)} calls, "
                     f"{sum(n for n, _ in self.plugin.calls)} sentences, seconds per call "
                     f"{min(times, default=0):.1f}-{max(times, default=0):.1f}")
        return lines
