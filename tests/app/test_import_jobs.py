"""Large imports and exports as background jobs (:mod:`app.jobs.file_tasks`), through the web
routes and the real job runner (``inline`` and ``thread`` queues), no mocks.

A file above the (lowered) ``IMPORT_INLINE_MAX_BYTES`` becomes an import job that ends with
the same rows as an import inside the request; a malformed one stores nothing and names the
line; a cancelled one leaves no rows (and can be retried from its staged file); an export job
writes the same bytes as the download inside the request, for readers only.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job
from app.models import Treebank
from app.services.exports import export_conllu
from app.services.staging import staged_path, sweep
from app.team_models import AuditEvent
from tests.app.conftest import PASSWORD
from tests.app.helpers import broken_line, conllu
from tests.app.job_workers import WorkerPool, queue_config, wait_for_job

LIMIT = 20_000
"""The lowered inline limit: the generated files below are larger."""
NO_ROWS = {"treebanks": 0, "documents": 0, "sentences": 0, "tokens": 0, "tree_versions": 0}


@pytest.fixture
def jobs(app: Flask, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Jobs run inline, uploads above :data:`LIMIT` go to a job, staging under ``tmp_path``."""
    for key, value in {"JOB_QUEUE": "inline", "IMPORT_INLINE_MAX_BYTES": LIMIT, "IMPORT_BATCH": 50,
                       "STAGING_DIR": str(tmp_path / "staging")}.items():
        monkeypatch.setitem(app.config, key, value)
    return tmp_path / "staging"


def upload(client: FlaskClient, data: bytes, name: str = "big", split: str = "train",
           **headers: str) -> object:
    return client.post("/treebanks/import", data={
        "name": name, "split": split, "file_format": "conllu",
        "file": (io.BytesIO(data), "big.conllu")}, content_type="multipart/form-data", headers=headers)


def job_of(response: object) -> int:
    location = response.headers["Location"]  # type: ignore[attr-defined]
    assert "/treebanks/jobs/" in location, location
    return int(location.rstrip("/").rsplit("/", 1)[1])


def ended(job: Job) -> bool:
    return job.state not in ("queued", "running")


def load_job(app: Flask, job_id: int) -> Job:
    return wait_for_job(app, job_id, lambda job: True)


def treebank_text(app: Flask, name: str) -> str:
    with app.app_context():
        treebank = db.session.scalars(select(Treebank).where(Treebank.name == name)).one()
        return export_conllu(db.session, treebank)


def test_a_large_import_is_a_job_with_the_rows_of_an_inline_import(
        app: Flask, logged_in: FlaskClient, jobs: Path, row_counts: Callable[[], dict[str, int]]) -> None:
    data = conllu(400)
    assert len(data) > LIMIT
    response = upload(logged_in, data, name="big")
    assert response.status_code == 302  # type: ignore[attr-defined]
    job = load_job(app, job_of(response))
    assert (job.kind, job.state, job.error) == ("import", "done", None)
    assert job.result is not None and job.result["sentences"] == 400 and job.result["words"] == 1200
    assert "stored 400 of 400 sentences" in job.log_tail and "stored 50 of 400" in job.log_tail
    assert list(jobs.glob("imports/*")) == []  # the staged upload is gone
    page = logged_in.get(f"/treebanks/jobs/{job.id}")
    assert page.status_code == 200 and b"Imported 400 sentences" in page.data
    crumbs = page.get_data(as_text=True).split('id="job-crumbs"')[1].split("</p>")[0]
    assert f'href="/treebanks/{job.result["treebank_id"]}/sentences">big</a>' in crumbs  # its treebank
    jobbed = row_counts()

    app.config["IMPORT_INLINE_MAX_BYTES"] = len(data)  # the same file, inside the request
    assert "/sentences" in upload(logged_in, data, name="small").headers["Location"]  # type: ignore[attr-defined]
    both = row_counts()
    assert {table: both[table] - jobbed[table] for table in both} == {
        table: count for table, count in jobbed.items()}
    assert treebank_text(app, "big") == treebank_text(app, "small") == data.decode("utf-8")
    with app.app_context():
        events = db.session.scalars(select(AuditEvent.action).where(AuditEvent.action == "import")).all()
    assert len(events) == 2  # audited like an inline import


def test_json_clients_get_202_with_the_job(app: Flask, logged_in: FlaskClient, jobs: Path) -> None:
    response = upload(logged_in, conllu(400), Accept="application/json")
    assert response.status_code == 202  # type: ignore[attr-defined]
    body = response.get_json()  # type: ignore[attr-defined]
    assert body["job"]["kind"] == "import" and body["page"] == f"/treebanks/jobs/{body['job']['id']}"


def test_a_malformed_large_file_stores_nothing_and_names_the_line(
        app: Flask, logged_in: FlaskClient, jobs: Path, row_counts: Callable[[], dict[str, int]]) -> None:
    job = load_job(app, job_of(upload(logged_in, conllu(400, broken_at=377))))
    assert job.state == "failed"
    assert job.error is not None and f"line {broken_line(377)}" in job.error and "HEAD" in job.error
    assert row_counts() == NO_ROWS
    shown = logged_in.get(f"/jobs/{job.id}").get_json()
    assert shown["state"] == "failed" and f"line {broken_line(377)}" in shown["error"]


def test_a_cancelled_import_leaves_no_rows_and_can_be_retried(
        app: Flask, logged_in: FlaskClient, jobs: Path, row_counts: Callable[[], dict[str, int]]) -> None:
    app.config.update(JOB_QUEUE="thread", IMPORT_BATCH=5)
    job_id = job_of(upload(logged_in, conllu(3000)))
    wait_for_job(app, job_id, lambda job: "stored" in job.message or job.state not in ("queued", "running"),
                 timeout=60)
    assert logged_in.post(f"/jobs/{job_id}/cancel").status_code == 200
    job = wait_for_job(app, job_id, ended, timeout=60)
    assert job.state == "cancelled" and "stored" in job.log_tail  # it had written batches
    assert row_counts() == NO_ROWS
    assert len(list(jobs.glob("imports/*"))) == 1  # kept for the retry

    app.config["IMPORT_BATCH"] = 1000
    retried = logged_in.post(f"/jobs/{job_id}/retry")
    assert retried.status_code == 202
    again = wait_for_job(app, retried.get_json()["job"]["id"], ended)
    assert again.state == "done" and row_counts()["sentences"] == 3000
    assert list(jobs.glob("imports/*")) == []


def test_a_cancelled_import_into_an_existing_treebank_leaves_it_as_it_was(
        app: Flask, logged_in: FlaskClient, jobs: Path, row_counts: Callable[[], dict[str, int]]) -> None:
    small = conllu(30)
    upload(logged_in, small, name="tb")  # inline: below the limit
    before = row_counts()
    assert before["sentences"] == 30
    app.config.update(JOB_QUEUE="thread", IMPORT_BATCH=5)
    job_id = job_of(upload(logged_in, conllu(3000), name="tb", split="dev"))
    with app.app_context():
        treebank_id = db.session.scalars(select(Treebank.id)).one()
    assert load_job(app, job_id).treebank_id == treebank_id
    wait_for_job(app, job_id, lambda job: "stored" in job.message or ended(job), timeout=60)
    assert logged_in.post(f"/jobs/{job_id}/cancel").status_code == 200
    assert wait_for_job(app, job_id, ended, timeout=60).state == "cancelled"
    assert row_counts() == before
    assert treebank_text(app, "tb") == small.decode("utf-8")


def test_a_worker_killed_mid_import_leaves_no_rows(
        app: Flask, logged_in: FlaskClient, jobs: Path, row_counts: Callable[[], dict[str, int]],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A real ``flask worker`` on the SQLite queue, SIGKILLed after some batches: the job page's
    heartbeat check fails the job, and its cleanup removes the committed batches."""
    for key, value in {**queue_config(tmp_path, "sqlite"), "IMPORT_BATCH": 5}.items():
        monkeypatch.setitem(app.config, key, value)
    pool = WorkerPool(app, tmp_path)
    try:
        worker = pool.start()
        job_id = job_of(upload(logged_in, conllu(3000)))
        wait_for_job(app, job_id, lambda job: "stored" in job.message or ended(job), timeout=60)
        pool.kill(worker)
        assert row_counts()["sentences"] > 0  # committed batches, until the job is found dead
        killed = time.monotonic()
        while (state := logged_in.get(f"/jobs/{job_id}").get_json())["state"] == "running":
            assert time.monotonic() - killed < 15, state
            time.sleep(0.2)
        assert state["state"] == "failed", state
        assert row_counts() == NO_ROWS
        assert len(list(jobs.glob("imports/*"))) == 1  # kept for a retry
    finally:
        pool.stop_all()


def test_only_the_starter_sees_a_job_of_a_new_treebank(
        app: Flask, logged_in: FlaskClient, jobs: Path, make_user: Callable[..., int]) -> None:
    app.config["JOB_QUEUE"] = "thread"
    app.config["IMPORT_BATCH"] = 5
    job_id = job_of(upload(logged_in, conllu(300)))
    make_user("bob")
    other = app.test_client()
    assert other.post("/auth/login", data={"username": "bob", "password": PASSWORD}).status_code == 302
    assert other.get(f"/treebanks/jobs/{job_id}").status_code == 404
    assert other.get(f"/jobs/{job_id}").status_code == 404
    assert other.post(f"/jobs/{job_id}/cancel").status_code == 404
    wait_for_job(app, job_id, ended)


def test_an_export_job_writes_the_bytes_of_the_inline_export(
        app: Flask, logged_in: FlaskClient, jobs: Path, make_user: Callable[..., int]) -> None:
    data = conllu(120)
    app.config["IMPORT_INLINE_MAX_BYTES"] = len(data)
    upload(logged_in, data, name="tb")
    with app.app_context():
        treebank_id = db.session.scalars(select(Treebank.id)).one()
    url = f"/treebanks/{treebank_id}/export?source=gold"
    inline = logged_in.get(url)
    assert inline.status_code == 200

    app.config["EXPORT_INLINE_MAX_SENTENCES"] = 100
    first = job_of(logged_in.get(url))
    job = load_job(app, first)
    assert (job.kind, job.state, job.treebank_id) == ("export", "done", treebank_id)
    page = logged_in.get(f"/treebanks/jobs/{first}")
    assert f"/jobs/{first}/download".encode() in page.data
    assert f'<a href="/treebanks/{treebank_id}/sentences">tb</a>'.encode() in page.data
    download = logged_in.get(f"/jobs/{first}/download")
    assert download.status_code == 200 and download.data == inline.data == data
    assert download.headers["X-Arcvote-Omitted"] == "0"
    assert "filename=tb-all-gold.conllu" in download.headers["Content-Disposition"]
    download.close()

    make_user("bob")
    other = app.test_client()
    other.post("/auth/login", data={"username": "bob", "password": PASSWORD})
    assert other.get(f"/jobs/{first}/download").status_code == 404  # cannot read the treebank

    time.sleep(0.01)
    second = load_job(app, job_of(logged_in.get(url)))
    assert second.state == "done"
    assert logged_in.get(f"/jobs/{first}/download").status_code == 410  # replaced by the newer one
    again = logged_in.get(f"/jobs/{second.id}/download")
    assert again.data == data
    again.close()
    assert logged_in.get(f"/treebanks/{treebank_id}/export?source=nope").status_code == 400
    with app.app_context():
        import_job = db.session.scalars(select(Job.id).where(Job.kind == "import")).first()
    if import_job is not None:
        assert logged_in.get(f"/jobs/{import_job}/download").status_code == 409


def test_a_large_text_file_is_tokenized_into_the_pool_by_a_job(
        app: Flask, logged_in: FlaskClient, jobs: Path) -> None:
    lines = "".join(f"Sentence number {k} is here .\n" for k in range(1, 1201)).encode("utf-8")
    assert len(lines) > LIMIT
    response = logged_in.post("/treebanks/import", data={
        "name": "text", "split": "pool", "file_format": "lines",
        "file": (io.BytesIO(lines), "lines.txt")}, content_type="multipart/form-data")
    job = load_job(app, job_of(response))
    assert job.state == "done" and job.result is not None
    assert (job.result["sentences"], job.result["trees"], job.result["split"]) == (1200, 0, "pool")


def test_staged_files_older_than_the_retention_time_are_swept(app: Flask, jobs: Path) -> None:
    app.config["STAGING_RETENTION_SECONDS"] = 60
    with app.app_context():
        old, new = staged_path(app, "exports", 1, ".conllu"), staged_path(app, "exports", 2, "../x")
        old.write_text("old")
        new.write_text("new")
        assert new.name == "job-2.x"  # a suffix never leaves the folder
        assert sweep(app, "exports", now=old.stat().st_mtime + 30) == []
        os.utime(old, (old.stat().st_mtime - 120,) * 2)
        assert sweep(app, "exports", now=new.stat().st_mtime + 30) == [old]
        assert not old.exists() and new.exists()
