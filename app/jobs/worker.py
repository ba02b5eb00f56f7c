"""``flask --app app worker``: a worker process that runs queued jobs.

It fails the jobs left running by dead workers of this host (and any job silent for
``JOB_STALE_SECONDS``), registers itself in ``job_workers`` with a heartbeat, then runs Huey's
consumer on the configured queue until SIGINT (finish the running jobs, then stop) or SIGTERM
(stop now; the jobs it was running are failed and can be retried). ``--workers N`` runs N jobs
at once in N processes (each opens its own database connections after the fork).
"""

from __future__ import annotations

import os

import click
from flask import current_app
from flask.cli import with_appcontext

from app.extensions import db
from app.jobs.health import WorkerHeartbeat
from app.jobs.logs import configure_job_logging
from app.jobs.queue import job_queue

DEFAULT_NICE = 10
"""How much lower a worker's CPU priority is than the web process's (config ``WORKER_NICE``)."""


def lower_priority(niceness: int) -> int:
    """Lower this process's CPU priority by ``niceness`` (its job processes inherit it) and return
    the new niceness: a round's training then leaves the cores to the web process's saves when
    both share a machine (issue #31: save p95 1,240 ms with a round running at equal priority)."""
    return os.nice(niceness) if niceness > 0 else os.nice(0)


@click.command("worker")
@click.option("--workers", "-w", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Jobs run at once (one process each when more than one).")
@click.option("--nice", "niceness", type=click.IntRange(0, 19), default=None,
              help=f"Lower the CPU priority by this much (default: WORKER_NICE, else {DEFAULT_NICE}).")
@with_appcontext
def worker_command(workers: int, niceness: int | None) -> None:
    """Run queued jobs (rounds) until stopped; JOB_QUEUE chooses the queue (sqlite or redis)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    lower_priority(niceness if niceness is not None else int(app.config.get("WORKER_NICE", DEFAULT_NICE)))
    queue = job_queue(app)
    if queue is None:
        raise click.ClickException(f"JOB_QUEUE={app.config.get('JOB_QUEUE')} runs jobs in the web process: "
                                   "set JOB_QUEUE=sqlite or JOB_QUEUE=redis to use workers")
    configure_job_logging()
    engine = db.engine
    os.register_at_fork(after_in_child=lambda: engine.dispose(close=False))  # no shared connections
    consumer = queue.create_consumer(workers=workers, worker_type="process" if workers > 1 else "thread",
                                     periodic=False, check_worker_health=True, health_check_interval=5,
                                     initial_delay=0.1, max_delay=1.0)
    click.echo(f"arcvote worker: {workers} on the {app.config.get('JOB_QUEUE')} queue; Ctrl-C stops it.")
    with WorkerHeartbeat(app, str(app.config.get("JOB_QUEUE"))):
        consumer.run()
