"""The ``import`` and ``export`` jobs: a large upload or a large treebank, handled by a worker.

* ``import`` (params: ``staged`` (the upload's file in the staging folder,
  :mod:`app.services.staging`), ``filename``, ``name`` (treebank), ``split``, ``language``,
  ``format`` (``conllu``, ``text`` or ``lines``)): parses the file like an import inside the
  request, then stores it in batches of ``IMPORT_BATCH`` sentences, each committed with a
  progress report (so the job can be followed and cancelled). All or nothing: the first report
  records the new document (and the treebank, when the import created it) in ``params``, and
  :func:`undo_import` removes them when the job fails, is cancelled or its worker died
  (:func:`app.jobs.finish_job` calls it), so no half-imported document stays.
* ``export`` (params: ``source``, ``split``, ``reviewed_only``, ``provenance``): writes the
  export to ``staging/exports/job-<id>.conllu``, downloaded from ``GET /jobs/<id>/download``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flask import Flask, current_app
from sqlalchemy import delete, func, select

from app.job_models import Job
from app.jobs import Progress, cleanup, task
from app.models import Document, Treebank, User
from app.services import DbSession
from app.services.audit import record
from app.services.exports import export_treebank
from app.services.imports import ImportResult, import_conllu, import_text
from app.services.permissions import PermissionDenied, require
from app.services.staging import remove, staged_path, staging_dir
from app.wording import counted

IMPORT_BATCH = 2000
"""Default sentences stored per committed batch of an import job (``IMPORT_BATCH``)."""
UNDO_KEYS = ("document_id", "new_treebank")
"""What an import job records in ``params`` once it wrote rows (removed again by the undo)."""


def _app() -> Flask:
    return current_app._get_current_object()  # type: ignore[attr-defined,no-any-return]


def staged_upload(app: Flask, params: dict[str, Any]) -> Path:
    """The staged upload named in an import job's params (a bare file name, never a path)."""
    name = str(params.get("staged") or "")
    if not name or Path(name).name != name:
        raise ValueError("this import job names no staged upload")
    return staging_dir(app, "imports") / name


@task("import")
def import_file(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Import the staged upload in batches (see the module docstring)."""
    app = _app()
    job.params = {key: value for key, value in (job.params or {}).items() if key not in UNDO_KEYS}
    params = dict(job.params)
    path = staged_upload(app, params)
    user = session.get(User, job.user_id)
    if user is None:
        raise ValueError("the user who started this import no longer exists")
    if not path.exists():
        raise ValueError("the uploaded file is no longer kept on the server: upload it again")
    name = str(params["name"]).strip()
    existed = session.scalar(select(Treebank.id).where(Treebank.name == name)) is not None
    progress(f"reading {params['filename']}", 0.01)

    def report(treebank: Treebank, document: Document, done: int, total: int) -> None:
        if "document_id" not in job.params:
            job.params = {**job.params, "document_id": document.id,
                          "new_treebank": None if existed else treebank.id}
        progress(f"stored {done:,} of {counted(total, 'sentence')}", 0.05 + 0.95 * done / max(total, 1))

    try:
        result = _import(session, path.read_bytes(), params, user, report,
                         int(app.config.get("IMPORT_BATCH") or IMPORT_BATCH))
    except PermissionDenied as denied:
        raise ValueError(f"treebank {name!r}: {denied}") from None
    remove(path)
    return {"treebank_id": result.treebank.id, "treebank": result.treebank.name,
            "document": result.document.name, "split": result.document.split,
            "sentences": result.sentences, "words": result.words, "trees": result.trees}


def _import(session: DbSession, data: bytes, params: dict[str, Any], user: User, report: Any,
            batch: int) -> ImportResult:
    common: dict[str, Any] = {"data": data, "filename": str(params["filename"]), "user": user,
                              "treebank_name": str(params["name"]), "split": str(params["split"]),
                              "language": params.get("language") or None, "batch": batch,
                              "report": report}
    if params.get("format", "conllu") == "conllu":
        return import_conllu(session, **common)
    return import_text(session, one_per_line=params["format"] == "lines", **common)


@cleanup("import")
def undo_import(session: DbSession, job: Job) -> None:
    """Remove the rows a failed or cancelled import job wrote: its document and, when the job
    created it, the treebank (unless another import added a document to it meanwhile).
    Flushes; :func:`app.jobs.finish_job` commits."""
    params = job.params or {}
    if document_id := params.get("document_id"):
        session.execute(delete(Document).where(Document.id == int(document_id)))
    if treebank_id := params.get("new_treebank"):
        others = session.scalar(select(func.count()).select_from(Document)
                                .where(Document.treebank_id == int(treebank_id)))
        if not others:
            session.execute(delete(Treebank).where(Treebank.id == int(treebank_id)))
    job.params = {key: value for key, value in params.items() if key not in UNDO_KEYS}
    session.flush()


@task("export")
def export_file(session: DbSession, job: Job, progress: Progress) -> dict[str, Any]:
    """Write the treebank's export to the staging folder (removing its earlier export jobs' files)."""
    app = _app()
    treebank = session.get(Treebank, job.treebank_id)
    user = session.get(User, job.user_id)
    if treebank is None or user is None:
        raise ValueError("the treebank or user of this export no longer exists")
    try:
        require(user, "read", treebank)
    except PermissionDenied as denied:
        raise ValueError(str(denied)) from None
    params = job.params or {}
    options = {"source": params.get("source", "gold"), "split": params.get("split"),
               "reviewed_only": bool(params.get("reviewed_only")),
               "provenance": bool(params.get("provenance"))}
    progress(f"reading the sentences of {treebank.name}", 0.05)
    export = export_treebank(session, treebank, **options)
    progress(f"writing {counted(export.sentences, 'sentence')}", 0.8)
    path = export_path(app, job.id)
    partial = path.with_suffix(".partial")
    data = export.text.encode("utf-8")
    partial.write_bytes(data)
    os.replace(partial, path)
    progress(f"wrote {counted(export.sentences, 'sentence')} ({len(data) / 2**20:.1f} MB)", 1.0)
    for earlier in session.scalars(select(Job.id).where(Job.kind == "export", Job.id != job.id,
                                                        Job.treebank_id == treebank.id)):
        remove(export_path(app, earlier))
    record(session, "export", user=user, treebank=treebank, sentences=export.sentences, via="job", **options)
    suffix = "-reviewed" if options["reviewed_only"] else ""
    return {"file": f"{treebank.name}-{options['split'] or 'all'}-{options['source']}{suffix}.conllu",
            "sentences": export.sentences, "omitted": export.omitted, "bytes": len(data)}


@cleanup("export")
def drop_export(session: DbSession, job: Job) -> None:
    """A failed or cancelled export keeps no file."""
    remove(export_path(_app(), job.id))


def export_path(app: Flask, job_id: int) -> Path:
    """Where export job ``job_id`` writes its file."""
    return staged_path(app, "exports", job_id, ".conllu")
