"""Pasted text over the inline limit is imported by a job, like an upload (issue #31, finding 9):
the request answers at once with the job's page; the job stores what an inline paste would."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, Sentence, Treebank
from tests.app.test_import_jobs import LIMIT, job_of, jobs, load_job  # noqa: F401  (the fixture)

TEXT = "".join(f"Sentence number {k} is here.\n" for k in range(1, 1201))


def _paste(client: FlaskClient, name: str, text: str, file_format: str = "lines") -> object:
    return client.post("/treebanks/import", data={"name": name, "split": "pool", "file_format": file_format,
                                                  "text": text})


def _sentences(app: Flask, name: str) -> int:
    with app.app_context():
        return int(db.session.scalar(select(func.count()).select_from(Sentence).join(Document).join(Treebank)
                                     .where(Treebank.name == name)) or 0)


def test_a_large_paste_is_a_job(app: Flask, logged_in: FlaskClient, jobs: Path) -> None:  # noqa: F811
    assert len(TEXT.encode()) > LIMIT
    response = _paste(logged_in, "pasted", TEXT)
    job = load_job(app, job_of(response))
    assert job.kind == "import" and job.state == "done", job.error
    assert job.params["filename"] == "pasted.txt" and job.params["format"] == "lines"
    assert job.result is not None and (job.result["sentences"], job.result["split"]) == (1200, "pool")
    app.config["IMPORT_INLINE_MAX_BYTES"] = len(TEXT.encode())  # the same paste, inside the request
    inline = _paste(logged_in, "inline", TEXT)
    assert "/treebanks/jobs/" not in inline.headers["Location"]  # type: ignore[attr-defined]
    assert _sentences(app, "inline") == _sentences(app, "pasted") == 1200


def test_a_large_conllu_paste_is_read_as_running_text(app: Flask, logged_in: FlaskClient,
                                                      jobs: Path) -> None:  # noqa: F811
    job = load_job(app, job_of(_paste(logged_in, "running", TEXT.replace("\n", " "), "conllu")))
    assert job.state == "done" and job.params["format"] == "text"
    assert job.result is not None and job.result["sentences"] == 1200
