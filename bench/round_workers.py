"""A round through the app's own job path with 1 and with 2 workers: wall times and pre-annotation speed.

usage: PYTHONPATH=. python bench/round_workers.py [--treebank UD_X] [--workers 1,2] [--parsers a,b]
           [--tags gold|predicted] [--pool 10000] [--fast] [--redis [URL]] [--database-url URL] [--out FILE]
       python bench/round_workers.py --report [--out FILE]

For each worker count W, nothing reused: a fresh app in a temporary folder (SQLite database and
the embedded SQLite Huey queue; or ``--database-url`` emptied and migrated, ``--redis`` with a
queue name of its own), an admin user, and a treebank imported by the app's import service
(:func:`app.services.imports.import_conllu`): the UD treebank's train and dev splits with their
trees and a pool of ``--pool`` sentences without trees (:func:`build_pool`: the treebank's test,
dev and train sentences cycled until there are enough, HEAD/DEPREL/DEPS blanked, and with
predicted tags LEMMA/UPOS/XPOS/FEATS too, as raw text would be). Then ``flask --app app worker
--workers W`` starts as a subprocess, the bench signs in and POSTs the round to
``/api/treebanks/<id>/preannotate`` (the queue page's request: the view checks it, adds the job
and puts it on the queue), polls ``GET /jobs/<id>`` until it ends, and stops the worker (SIGINT).

Times come from the worker's JSON-lines job log (:mod:`app.jobs.logs`, millisecond stamps): total
= the POST to ``job.done``; training = ``job.started`` to the progress line "round N trained"
(members, ensemble, models written); pre-annotation = from there to ``job.done`` (every pool
batch parsed and stored). Also recorded: the round's members, tags, ensemble and dev LAS, each
member's training seconds from the round's manifest and which worker process trained it.
One JSON line per run is appended to ``--out`` (default ``bench/out/round_workers.jsonl``), and the
worker's log is kept beside it (``round_workers-<treebank>-w<W>.log``: every member's start and end).
``--fast`` uses the app's cheap member settings (a trial, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_speed import fresh_app  # noqa: E402
from round_workers_report import read_records, report_table  # noqa: E402

from app.extensions import db  # noqa: E402
from app.job_models import Job, JobWorker  # noqa: E402
from app.jobs.queue import DEFAULT_REDIS_URL  # noqa: E402
from app.parser_models import TrainingRound  # noqa: E402
from app.services.imports import import_conllu  # noqa: E402
from app.services.preannotate import FAST_ENSEMBLE_PARAMS, FAST_MEMBER_PARAMS  # noqa: E402
from app.services.users import create_user  # noqa: E402
from parsing.conllu_io import ConlluSentence, decode_utf8, format_conllu, parse_conllu  # noqa: E402
from parsing.pipeline import read_manifest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
UD = Path(os.environ.get("ARCVOTE_UD_ROOT") or REPO.parent / "shared" / "ud")
OUT = REPO / "bench" / "out" / "round_workers.jsonl"
PASSWORD = "bench-password-round"
POOL_SOURCE = "test+dev+train sentences cycled, tree columns blanked"
TRAINED = re.compile(r"round \d+ trained")
FINISHED = ("done", "failed", "cancelled")


@dataclass(frozen=True)
class Splits:
    """A UD treebank's sentences by split (``test`` may be empty)."""

    name: str
    train: list[ConlluSentence]
    dev: list[ConlluSentence]
    test: list[ConlluSentence]


def word_count(sentences: Iterable[ConlluSentence]) -> int:
    """Syntactic words (integer IDs) of ``sentences``."""
    return sum(len(sentence.words) for sentence in sentences)


def read_splits(folder: Path) -> Splits:
    """The train, dev and test files of the UD treebank in ``folder``."""
    def split(name: str) -> list[ConlluSentence]:
        found = sorted(folder.glob(f"*-ud-{name}.conllu"))
        return parse_conllu(decode_utf8(found[0].read_bytes(), source=found[0].name),
                            source=found[0].name) if found else []
    return Splits(folder.name, split("train"), split("dev"), split("test"))


def largest_treebank(root: Path) -> Path:
    """The treebank folder under ``root`` whose train file has the most words."""
    def train_words(folder: Path) -> int:
        text = "".join(path.read_text(encoding="utf-8") for path in folder.glob("*-ud-train.conllu"))
        return sum(1 for line in text.splitlines() if re.match(r"[1-9][0-9]*\t", line))
    folders = [folder for folder in sorted(root.iterdir()) if any(folder.glob("*-ud-train.conllu"))]
    if not folders:
        raise FileNotFoundError(f"no UD treebank with a train file under {root}")
    return max(folders, key=train_words)


def build_pool(sentences: Sequence[ConlluSentence], size: int, *, blank_tags: bool) -> list[ConlluSentence]:
    """``size`` sentences to pre-annotate: ``sentences`` cycled, HEAD/DEPREL/DEPS set to ``_``
    (and LEMMA/UPOS/XPOS/FEATS with ``blank_tags``), sent_id ``pool-<k>-<original>``."""
    if not sentences and size:
        raise ValueError("no sentences to build a pool from")
    first, last = (2, 9) if blank_tags else (6, 9)
    pool: list[ConlluSentence] = []
    for k in range(size):
        source = sentences[k % len(sentences)]
        original = source.sent_id or str(k % len(sentences))
        comments = [line for line in source.comments if not re.match(r"#\s*sent_id\s*=", line)]
        rows = [[*row[:first], *["_"] * (last - first), *row[last:]] for row in source.rows]
        pool.append(ConlluSentence([f"# sent_id = pool-{k + 1}-{original}", *comments], rows))
    return pool


def bench_app(folder: Path, options: argparse.Namespace) -> Flask:
    """A fresh, migrated app whose jobs go to a queue of its own (``folder`` holds its files)."""
    app: Flask = fresh_app(options.database_url or f"sqlite:///{folder / 'arcvote.sqlite'}")
    fast = bool(options.fast)
    app.config.update(
        JOB_QUEUE="redis" if options.redis else "sqlite", REDIS_URL=options.redis or DEFAULT_REDIS_URL,
        JOB_QUEUE_FILE=str(folder / "job-queue.sqlite"),
        JOB_QUEUE_NAME=f"arcvote-bench-{uuid.uuid4().hex[:12]}",
        MODELS_DIR=str(folder / "models"), STAGING_DIR=str(folder / "staging"), WTF_CSRF_ENABLED=False,
        MEMBER_PARAMS=FAST_MEMBER_PARAMS if fast else {},
        ENSEMBLE_PARAMS=FAST_ENSEMBLE_PARAMS if fast else {}, PREANNOTATE_PROCESSES=1)
    return app


def load_treebank(app: Flask, splits: Splits, pool: list[ConlluSentence]) -> int:
    """Import train, dev and pool as the app's import does, with an admin owner; the treebank id."""
    with app.app_context():
        user = create_user(db.session, "bench", PASSWORD, admin=True)
        treebank_id = 0
        for split, sentences in (("train", splits.train), ("dev", splits.dev), ("pool", pool)):
            if sentences:
                result = import_conllu(db.session, data=format_conllu(sentences).encode("utf-8"),
                                       filename=f"{splits.name}-{split}.conllu", treebank_name=splits.name,
                                       split=split, user=user)
                treebank_id = result.treebank.id
        db.session.commit()
        db.session.remove()
    return treebank_id


def worker_environment(app: Flask) -> dict[str, str]:
    """The worker's settings: the bench app's database, queue, models and member settings."""
    config = app.config
    env = {**os.environ, "PYTHONPATH": str(REPO), "DATABASE_URL": str(config["SQLALCHEMY_DATABASE_URI"]),
           "JOB_QUEUE": str(config["JOB_QUEUE"]), "REDIS_URL": str(config["REDIS_URL"]),
           "MODELS_DIR": str(config["MODELS_DIR"]), "FLASK_SECRET_KEY": json.dumps(secrets.token_hex(32))}
    for key in ("JOB_QUEUE_FILE", "JOB_QUEUE_NAME", "MODELS_DIR", "STAGING_DIR", "MEMBER_PARAMS",
                "ENSEMBLE_PARAMS", "PREANNOTATE_PROCESSES"):
        env[f"FLASK_{key}"] = json.dumps(config[key])
    return env


def start_worker(app: Flask, workers: int, log: Path) -> subprocess.Popen[bytes]:
    """``flask --app app worker --workers N`` in its own process group; returns once it registered."""
    with log.open("wb") as handle:
        process = subprocess.Popen([sys.executable, "-m", "flask", "--app", "app", "worker", "--workers",
                                    str(workers)], cwd=REPO, env=worker_environment(app), stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        with app.app_context():
            registered = db.session.scalar(select(JobWorker.id).limit(1))
            db.session.remove()
        if registered is not None:
            return process
        if process.poll() is not None or time.monotonic() > deadline:
            stop_worker(process)
            raise RuntimeError(f"the worker did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    """SIGINT (Huey finishes and exits), then SIGKILL whatever of its process group is left."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the group is this worker's own (start_new_session)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


def log_events(text: str) -> list[dict[str, Any]]:
    """The JSON-lines events of a worker log (other lines skipped)."""
    events = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def phase_times(events: Iterable[dict[str, Any]], job_id: int) -> dict[str, datetime]:
    """When job ``job_id`` started, said its round was trained, and finished (``done``/``failed``...)."""
    times: dict[str, datetime] = {}
    for event in events:
        if event.get("job") != job_id:
            continue
        moment = datetime.fromisoformat(event["time"])
        name = str(event.get("event"))
        if name == "job.started":
            times.setdefault("started", moment)
        elif name == "job.progress" and TRAINED.fullmatch(str(event.get("message"))):
            times.setdefault("trained", moment)
        elif name in {f"job.{state}" for state in FINISHED}:
            times.setdefault("finished", moment)
    return times


def run_round(app: Flask, treebank_id: int, options: argparse.Namespace, log: Path) -> dict[str, Any]:
    """Sign in, POST the round as the queue page does, poll the job until it ends; its timings."""
    client = app.test_client()
    signed_in = client.post("/auth/login", data={"username": "bench", "password": PASSWORD})
    assert signed_in.status_code == 302, signed_in.status_code
    body: dict[str, Any] = {"tags": options.tags}
    if options.parsers:
        body["parsers"] = options.parsers
    posted = datetime.now(UTC)
    response = client.post(f"/api/treebanks/{treebank_id}/preannotate", json=body)
    assert response.status_code == 202, response.get_json()
    job_id = int(response.get_json()["job"]["id"])
    while (job := client.get(f"/jobs/{job_id}").get_json())["state"] not in FINISHED:
        time.sleep(1.0)
    if job["state"] != "done":
        raise RuntimeError(f"job {job_id} {job['state']}: {job['error'] or job['message']}")
    times = phase_times(log_events(log.read_text(errors="replace")), job_id)
    started = times.get("started") or datetime.fromisoformat(job["started_at"])
    finished = times.get("finished") or datetime.fromisoformat(job["finished_at"])
    trained = times["trained"]
    return {"job": job_id, "parsed": job["result"]["parsed"], "ensemble": job["result"]["ensemble"],
            "queue_wait_s": (started - posted).total_seconds(),
            "total_s": (finished - posted).total_seconds(),
            "train_s": (trained - started).total_seconds(),
            "preannotate_s": (finished - trained).total_seconds()}


def round_details(app: Flask, job_id: int) -> dict[str, Any]:
    """The registered round: members, tags, dev LAS, manifest train seconds, who trained each member."""
    with app.app_context():
        round_ = db.session.scalars(select(TrainingRound)).one()
        members = db.session.scalars(select(Job).where(Job.kind == "train_member")).all()
        trained_by = {str(job.params["member"]): job.worker for job in members
                      if (job.params or {}).get("parent") == job_id and job.state == "done"}
        details = {"members": list(round_.parsers), "tags": round_.tags,
                   "dev_las": ((round_.scores or {}).get("ensemble") or {}).get("las"),
                   "member_seconds": read_manifest(round_.model_dir).get("train_seconds", {}),
                   "member_workers": trained_by, "worker_processes_used": len(set(trained_by.values())),
                   **tagger_fits(db.session.scalars(select(Job).where(Job.kind == "tag_fold")).all(), job_id)}
        db.session.remove()
    return details


def tagger_fits(jobs: Sequence[Job], round_job: int) -> dict[str, Any]:
    """A predicted-tags round's tagger fits (the kept tagger and the jackknife folds, fanned out
    as ``tag_fold`` jobs): which worker did each, their summed seconds and their wall time
    (first start to last end); empty for a gold-tags round."""
    done = [job for job in jobs if (job.params or {}).get("parent") == round_job and job.state == "done"]
    if not done:
        return {}
    return {"tagger_fit_workers": {str(job.params["fold"]): job.worker for job in done},
            "tagger_fits_s": sum(float((job.result or {}).get("seconds", 0.0)) for job in done),
            "tagger_wall_s": (max(job.finished_at for job in done if job.finished_at)
                              - min(job.started_at for job in done if job.started_at)).total_seconds()}


def measure(splits: Splits, workers: int, options: argparse.Namespace) -> dict[str, Any]:
    """One round with ``workers`` worker processes on a fresh app; the JSONL record."""
    pool = build_pool([*splits.test, *splits.dev, *splits.train], options.pool,
                      blank_tags=options.tags == "predicted")
    with tempfile.TemporaryDirectory(prefix="round-workers-") as folder:
        app = bench_app(Path(folder), options)
        app.config["PREANNOTATE_PROCESSES"] = workers if options.parallel_preannotation else 1
        treebank_id = load_treebank(app, splits, pool)
        log = Path(folder) / "worker.log"
        process = start_worker(app, workers, log)
        try:
            timings = run_round(app, treebank_id, options, log)
        finally:
            stop_worker(process)
            shutil.copyfile(log, options.out.with_name(f"round_workers-{splits.name}-w{workers}.log"))
        details = round_details(app, timings["job"])
        with app.app_context():
            db.engine.dispose()
    pool_words = word_count(pool)
    return {"treebank": splits.name, "workers": workers, "backend": backend(options),
            "preannotate_processes": workers if options.parallel_preannotation else 1,
            "fast": bool(options.fast), "requested_parsers": options.parsers, **details,
            "train_sentences": len(splits.train), "train_words": word_count(splits.train),
            "dev_sentences": len(splits.dev), "pool_sentences": len(pool), "pool_words": pool_words,
            "pool_source": POOL_SOURCE, **timings,
            "sentences_per_s": len(pool) / timings["preannotate_s"],
            "words_per_s": pool_words / timings["preannotate_s"],
            "cpus": os.cpu_count(), "host": platform.node(), "commit": git_commit(),
            "when": datetime.now(UTC).isoformat(timespec="seconds")}


def backend(options: argparse.Namespace) -> str:
    """``queue+database``, e.g. ``sqlite+sqlite`` or ``redis+postgresql``."""
    database = (options.database_url or "sqlite").split(":")[0].split("+")[0]
    database = "postgresql" if database == "postgres" else database
    return f"{'redis' if options.redis else 'sqlite'}+{database}"


def git_commit() -> str:
    """The worktree's commit (``+`` when it has changes)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True)
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def parse_options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebank", default=None, help="a folder under the UD root (default: the largest "
                        "by train words)")
    parser.add_argument("--workers", default="1,2", help="worker counts, one fresh run each")
    parser.add_argument("--parsers", default=None, help="members (default: the app's round default)")
    parser.add_argument("--tags", choices=["gold", "predicted"], default="gold")
    parser.add_argument("--pool", type=int, default=10_000, help="pool sentences to pre-annotate")
    parser.add_argument("--fast", action="store_true", help="the app's cheap member settings (a trial)")
    parser.add_argument("--parallel-preannotation", action="store_true",
                        help="the round's members parse the pool in as many processes as there are "
                             "workers (PREANNOTATE_PROCESSES)")
    parser.add_argument("--redis", nargs="?", const=DEFAULT_REDIS_URL, default=None,
                        help="the Redis queue (default URL %(const)s) instead of the SQLite one")
    parser.add_argument("--database-url", default=None,
                        help="a database to EMPTY and migrate for each run (default: temporary SQLite)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--report", action="store_true", help="only print the table of --out")
    return parser.parse_args(argv)


def main() -> None:
    """Measure one round per worker count (appending to --out), then print the table."""
    options = parse_options()
    if options.report:
        print(report_table(read_records(options.out)))
        return
    folder = UD / options.treebank if options.treebank else largest_treebank(UD)
    splits = read_splits(folder)
    records = []
    options.out.parent.mkdir(parents=True, exist_ok=True)
    for workers in [int(part) for part in options.workers.split(",") if part.strip()]:
        print(f"{splits.name}: a round with {workers} worker(s)...", file=sys.stderr, flush=True)
        record = measure(splits, workers, options)
        with options.out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
        records.append(record)
    print(report_table(records))


if __name__ == "__main__":
    main()
