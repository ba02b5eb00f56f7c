"""Jobs on the real task queue: ``flask worker`` processes on a SQLite queue file and on Redis
(127.0.0.1:6379), the test database (SQLite or PostgreSQL), no mocks.

A round completes with progress updates and registered checksums; a worker killed mid-round
leaves a failed, retryable job and no registered round (found by the job page's heartbeat
check, and by the next worker's start-up); a running round can be cancelled; a second round on
the same treebank is refused by the database while one is queued or running; ``/healthz``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.job_models import Job
from app.jobs.model_files import STAGING_PREFIX, changed_files
from app.jobs.queue import job_queue
from app.models import Treebank, User
from app.parser_models import TrainingRound
from app.services.demo import setup_demo
from app.services.preannotate import FAST_MEMBER_PARAMS
from tests.app.job_workers import WorkerPool, queue_config, redis_answers, wait_for_job

SLOW_MEMBER_PARAMS = {**FAST_MEMBER_PARAMS, "graph1": {"max_iter": 25}}
"""graph1 trains for seconds on the tiny treebank: long enough to kill or cancel it mid-round."""

PARSERS = "graph1,eager"


@pytest.fixture
def pool(app: Flask, tmp_path: Path) -> Iterator[WorkerPool]:
    workers = WorkerPool(app, tmp_path)
    yield workers
    workers.stop_all()


def use_queue(app: Flask, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, backend: str,
              **options: Any) -> None:
    for key, value in queue_config(tmp_path, backend, **options).items():
        monkeypatch.setitem(app.config, key, value)


@pytest.fixture
def sqlite_queue(app: Flask, fast: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Cheap members and the SQLite queue (workers must be started by the test)."""
    use_queue(app, monkeypatch, tmp_path, "sqlite")


@pytest.fixture
def treebank_id(app: Flask, logged_in: FlaskClient) -> int:
    """The demo treebank's first 50 sentences (30 train, 10 dev, 10 pool), imported by ana."""
    with app.app_context():
        setup_demo(db.session, user=db.session.scalars(select(User)).one(), sentences=50)
        db.session.commit()
        return int(db.session.scalars(select(Treebank.id)).one())


def start_round(client: FlaskClient, treebank_id: int) -> int:
    response = client.post(f"/api/treebanks/{treebank_id}/preannotate",
                           json={"parsers": PARSERS, "tags": "gold"})
    assert response.status_code == 202, response.get_json()
    job = response.get_json()["job"]
    assert job["state"] == "queued"
    return int(job["id"])


def rounds(app: Flask) -> list[TrainingRound]:
    with app.app_context():
        found = list(db.session.scalars(select(TrainingRound)))
        db.session.expunge_all()
        db.session.remove()
    return found


def model_entries(models: Path) -> list[str]:
    """Every directory under the models folder, relative (staging ones included)."""
    return sorted(str(path.relative_to(models)) for path in models.glob("*/*") if path.is_dir())


def check_round_completes(
    app: Flask, client: FlaskClient, pool: WorkerPool, treebank_id: int, models: Path
) -> None:
    pool.start()
    job_id = start_round(client, treebank_id)
    seen: list[tuple[str, float, str]] = []
    job = wait_for_job(app, job_id, lambda j: j.state in ("done", "failed"), seen=seen)
    assert job.state == "done", job.error
    assert job.result is not None and job.result["parsed"] == 10
    running = [(progress, message) for state, progress, message in seen if state == "running"]
    assert len({progress for progress, _ in running}) >= 2, seen  # progress moved while it ran
    lines = [line.split(" ", 1)[1] for line in job.log_tail.splitlines()]
    assert lines[0] == "reading training trees" and lines[-1] == "done", lines
    assert "training graph1" in lines and "round 1 trained" in lines  # one worker: the round trains both
    assert any(line.startswith("trained graph1 in ") for line in lines)
    assert "parsed 10 of 10 sentences" in lines and job.worker and job.heartbeat_at
    (round_,) = rounds(app)
    assert round_.number == 1 and round_.finished_at is not None and round_.checksums
    directory = Path(round_.model_dir)
    assert directory.parent.parent == models and "manifest.json" in round_.checksums
    assert changed_files(directory, round_.checksums) == []
    assert model_entries(models) == [f"{directory.parent.name}/1"]  # no staging directory left
    health = client.get("/healthz")
    assert health.status_code == 200 and health.get_json()["workers"]["alive"], health.get_json()


def test_sqlite_queue_worker_completes_a_round_with_progress(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path
) -> None:
    check_round_completes(app, logged_in, pool, treebank_id, fast)


def test_redis_queue_worker_completes_a_round_with_progress(
    app: Flask, logged_in: FlaskClient, fast: Path, pool: WorkerPool, treebank_id: int,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    if not redis_answers():
        if os.environ.get("CI") or os.environ.get("ARCVOTE_REQUIRE_REDIS"):
            pytest.fail("CI must run the Redis job tests: no Redis answers on 127.0.0.1:6379")
        pytest.skip("no Redis on 127.0.0.1:6379 (apt-get install redis-server; redis-server --daemonize yes)")
    use_queue(app, monkeypatch, tmp_path, "redis")
    try:
        check_round_completes(app, logged_in, pool, treebank_id, fast)
        # the round claimed its two member jobs itself; the worker then drops their queue messages
        # (already claimed), which on a busy machine can take a moment after the round is done
        deadline = time.monotonic() + 30
        while (queue_health := logged_in.get("/healthz").get_json()["queue"])["pending"] and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert queue_health == {"backend": "redis", "ok": True, "pending": 0}
    finally:
        queue = job_queue(app)
        assert queue is not None
        queue.flush()


def test_two_workers_share_a_rounds_members(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int
) -> None:
    pool.start(workers=2, MEMBER_PARAMS=SLOW_MEMBER_PARAMS)
    response = logged_in.post(f"/api/treebanks/{treebank_id}/preannotate",
                              json={"parsers": "eager,hybrid,graph1", "tags": "gold"})
    job_id = response.get_json()["job"]["id"]
    done = wait_for_job(app, job_id, lambda j: j.state in ("done", "failed"))
    assert done.state == "done", done.error
    with app.app_context():
        members = {job.params["member"]: job.worker for job in db.session.scalars(
            select(Job).where(Job.kind == "train_member", Job.state == "done"))}
        db.session.remove()
    assert sorted(members) == ["eager", "graph1", "hybrid"]
    assert members["graph1"] == done.worker  # the round's job takes members from the back...
    assert len(set(members.values())) == 2  # ...while the other worker takes them from the front
    (round_,) = rounds(app)
    assert round_.parsers == ["eager", "hybrid", "graph1"]
    assert {f"parsers/{name}.model" for name in members} <= set(round_.checksums or {})


def test_two_workers_share_a_predicted_tags_rounds_tagger_fits(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path
) -> None:
    """The kept tagger and its ten jackknife folds run as ``tag_fold`` jobs on both workers."""
    pool.start(workers=2, MEMBER_PARAMS={**FAST_MEMBER_PARAMS, "tagger": {"max_iter": 120, "min_iter": 120}})
    response = logged_in.post(f"/api/treebanks/{treebank_id}/preannotate",
                              json={"parsers": PARSERS, "tags": "predicted"})
    assert response.status_code == 202, response.get_json()
    job_id = response.get_json()["job"]["id"]
    done = wait_for_job(app, job_id, lambda j: j.state in ("done", "failed"))
    assert done.state == "done", done.error
    with app.app_context():
        fits = {job.params["fold"]: job.worker for job in db.session.scalars(
            select(Job).where(Job.kind == "tag_fold", Job.state == "done"))}
        db.session.remove()
    assert sorted(fits) == sorted(["full", *(f"seed0-fold{k}" for k in range(10))])
    assert fits["seed0-fold9"] == done.worker  # the round's job takes fits from the back...
    assert len(set(fits.values())) == 2  # ...while the other worker takes them from the front
    lines = [line.split(" ", 1)[1] for line in (done.log_tail or "").splitlines()]
    assert "tagger fit seed0-fold9" in lines, lines
    (round_,) = rounds(app)
    assert round_.tags == "predicted" and "tagger" in (round_.checksums or {})
    assert not list(fast.glob("**/*-tag-folds")) and not list(fast.glob("**/*-members"))  # data removed


def finished_round(app: Flask, client: FlaskClient, treebank_id: int, parsers: str, tags: str) -> Job:
    """Start a round of ``parsers`` with ``tags`` through the API; its job once done (a failed one
    fails the test)."""
    response = client.post(f"/api/treebanks/{treebank_id}/preannotate",
                           json={"parsers": parsers, "tags": tags})
    assert response.status_code == 202, response.get_json()
    done = wait_for_job(app, response.get_json()["job"]["id"], lambda j: j.state in ("done", "failed"))
    assert done.state == "done", done.error
    return done


def test_a_worker_fits_the_neural_member_as_a_job_of_its_own(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path
) -> None:
    """``biaffine`` (PyTorch) fitted by ``train_member`` in a process worker's child, then loaded,
    scored and parsing the pool in the round's job."""
    pytest.importorskip("torch")
    pool.start(workers=2)
    done = finished_round(app, logged_in, treebank_id, "graph1,biaffine", "gold")
    with app.app_context():
        fitted = {job.params["member"]: job.result or {} for job in db.session.scalars(
            select(Job).where(Job.kind == "train_member", Job.state == "done"))}
        db.session.remove()
    assert sorted(fitted) == ["biaffine", "graph1"] and fitted["biaffine"]["seconds"] > 0
    (round_,) = rounds(app)
    assert "parsers/biaffine.model" in (round_.checksums or {})
    assert set((round_.scores or {})["members"]) == {"graph1", "biaffine"}
    assert done.result is not None and done.result["parsed"] == 10


def test_two_workers_fit_the_neural_members_folds_as_pieces_of_their_own(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path
) -> None:
    """With ``member_folds`` (:mod:`parsing.member_folds`) and the neural member tagging dev better
    (a tagger without features here), its fold copies are queued as pieces of their own, each with
    its own spec, and the round records them."""
    pytest.importorskip("torch")
    from tests.parsing.biaffine_data import TINY

    pool.start(workers=2, MEMBER_PARAMS={
        **FAST_MEMBER_PARAMS, "tagger": {"max_iter": 1, "min_feature_count": 10**6, "member_folds": 2},
        "biaffine": {**TINY, "max_epochs": 15, "max_seconds": 60.0}})
    finished_round(app, logged_in, treebank_id, "graph1,biaffine", "predicted")
    with app.app_context():
        pieces = sorted(job.params["member"] for job in db.session.scalars(
            select(Job).where(Job.kind == "train_member", Job.state == "done")))
        specs = {job.params["spec"] for job in db.session.scalars(
            select(Job).where(Job.kind == "train_member"))}
        db.session.remove()
    assert pieces == ["biaffine", "biaffine-0", "biaffine-1", "graph1"] and len(specs) == 4
    (round_,) = rounds(app)
    tagging = (round_.scores or {})["tagging"]
    assert tagging["source"] == "biaffine" and tagging["member_folds"]["folds"] == 2, tagging
    assert not any("member-folds" in name for name in round_.checksums or {})  # the fold models are gone


def wait_until_training(app: Flask, job_id: int) -> None:
    wait_for_job(app, job_id, lambda j: j.state == "running" and j.message.startswith("training graph1"))


def test_killed_worker_leaves_a_failed_retryable_job_and_no_round(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path
) -> None:
    worker = pool.start(MEMBER_PARAMS=SLOW_MEMBER_PARAMS)
    job_id = start_round(logged_in, treebank_id)
    wait_until_training(app, job_id)
    pool.kill(worker)
    killed = time.monotonic()
    while (state := logged_in.get(f"/jobs/{job_id}").get_json())["state"] == "running":
        assert time.monotonic() - killed < 15, state  # stale after 3 s here; 45 s by default
        time.sleep(0.2)
    assert state["state"] == "failed" and state["error"].startswith("WorkerLost"), state
    assert "retry it" in state["message"]
    assert rounds(app) == [] and all(STAGING_PREFIX in entry for entry in model_entries(fast))
    pool.start()
    retried = logged_in.post(f"/jobs/{job_id}/retry")
    assert retried.status_code == 202, retried.get_json()
    new_id = retried.get_json()["job"]["id"]
    assert new_id != job_id and retried.get_json()["job"]["retry_of"] == job_id
    done = wait_for_job(app, new_id, lambda j: j.state in ("done", "failed"))
    assert done.state == "done", done.error
    (round_,) = rounds(app)
    assert round_.number == 1 and model_entries(fast) == [f"{Path(round_.model_dir).parent.name}/1"]
    assert logged_in.post(f"/jobs/{new_id}/retry").status_code == 409  # done jobs are not retried


def test_next_worker_fails_the_jobs_of_a_dead_worker_at_start_up(
    app: Flask, logged_in: FlaskClient, fast: Path, pool: WorkerPool, treebank_id: int,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    use_queue(app, monkeypatch, tmp_path, "sqlite", stale=600.0)  # the heartbeat check would wait 10 min
    worker = pool.start(MEMBER_PARAMS=SLOW_MEMBER_PARAMS)
    job_id = start_round(logged_in, treebank_id)
    wait_until_training(app, job_id)
    pool.kill(worker)
    assert logged_in.get(f"/jobs/{job_id}").get_json()["state"] == "running"
    pool.start()
    failed = wait_for_job(app, job_id, lambda j: j.state != "running", timeout=5)
    assert failed.state == "failed" and failed.error and "stopped" in failed.error
    assert rounds(app) == []


def test_cancel_a_running_round(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, pool: WorkerPool, treebank_id: int, fast: Path,
    make_user: Any, client: FlaskClient,
) -> None:
    pool.start(MEMBER_PARAMS=SLOW_MEMBER_PARAMS)
    job_id = start_round(logged_in, treebank_id)
    wait_until_training(app, job_id)
    other = app.test_client()
    make_user("bo")
    other.post("/auth/login", data={"username": "bo", "password": "correct horse battery"})
    assert other.post(f"/jobs/{job_id}/cancel").status_code == 404  # bo may not see the treebank
    asked = logged_in.post(f"/jobs/{job_id}/cancel")
    assert asked.status_code == 200 and asked.get_json()["job"]["cancel_requested"]
    stopped = wait_for_job(app, job_id, lambda j: j.state != "running", timeout=60)
    assert stopped.state == "cancelled" and stopped.error is None, stopped.message
    assert rounds(app) == [] and model_entries(fast) == []
    assert logged_in.post(f"/jobs/{job_id}/cancel").status_code == 409  # already over


def test_a_second_round_on_the_same_treebank_is_refused(
    app: Flask, logged_in: FlaskClient, sqlite_queue: None, treebank_id: int, runner: FlaskCliRunner
) -> None:
    first = start_round(logged_in, treebank_id)  # no worker: it stays queued
    second = logged_in.post(f"/api/treebanks/{treebank_id}/preannotate", json={"parsers": PARSERS})
    assert second.status_code == 409 and second.get_json()["active_job"] == first
    assert "already queued or running" in second.get_json()["error"]
    cli = runner.invoke(args=["treebank", "preannotate", "Turkish demo", "--parsers", "graph1", "--user=ana"])
    assert cli.exit_code != 0 and f"already queued or running on this treebank (job {first})" in cli.output
    with app.app_context():  # the guard is the database's, not a check in the view
        user_id = db.session.scalar(select(User.id))
        with pytest.raises(IntegrityError), db.engine.begin() as connection:
            connection.execute(insert(Job).values(kind="preannotate", treebank_id=treebank_id, params={},
                                                  state="queued", progress=0.0, message="", log_tail="",
                                                  user_id=user_id))
        assert db.session.scalar(select(func.count()).select_from(Job)) == 1
    cancelled = logged_in.post(f"/jobs/{first}/cancel")
    assert cancelled.status_code == 200 and cancelled.get_json()["job"]["state"] == "cancelled"
    third = start_round(logged_in, treebank_id)  # the treebank is free again
    assert logged_in.post(f"/jobs/{first}/retry").status_code == 409  # third holds it
    assert logged_in.post(f"/jobs/{third}/cancel").status_code == 200
    assert logged_in.post(f"/jobs/{first}/retry").status_code == 202
    assert logged_in.post("/jobs/999999/retry").status_code == 404


def test_healthz_says_when_no_worker_runs(
    app: Flask, client: FlaskClient, fast: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    inline = client.get("/healthz")
    assert inline.status_code == 200 and inline.get_json()["status"] == "ok"
    assert inline.get_json()["workers"] == {"required": False, "ok": True, "alive": 0,
                                            "newest_heartbeat": None}
    use_queue(app, monkeypatch, tmp_path, "sqlite")
    alone = client.get("/healthz")
    body = alone.get_json()
    assert alone.status_code == 503 and body["status"] == "unhealthy" and body["database"] == {"ok": True}
    assert body["queue"] == {"backend": "sqlite", "ok": True, "pending": 0}
    assert not body["workers"]["ok"] and "flask --app app worker" in body["workers"]["error"]
