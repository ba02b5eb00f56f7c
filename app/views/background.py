"""When an import or export is too large for the request, hand it to a job (:mod:`app.jobs.file_tasks`).

* An uploaded file or pasted text larger than ``IMPORT_INLINE_MAX_BYTES`` (default 2 MB) is
  saved to the staging folder (:mod:`app.services.staging`) and imported by an ``import`` job
  (pasted text too since issue #31: a 10 MB paste held a web worker for a minute); smaller ones
  are imported inside the request.
* An export of more than ``EXPORT_INLINE_MAX_SENTENCES`` sentences (default 20,000) is written
  by an ``export`` job; smaller ones are answered at once.

The caller checked the permission (``import`` on an existing treebank; ``read`` to export).
Each function commits the job and submits it, or returns None for "do it here".
"""

from __future__ import annotations

import os
from typing import Any

from flask import Flask, current_app
from flask_login import current_user
from sqlalchemy import func, select

from app.extensions import db
from app.forms import ImportForm
from app.job_models import Job
from app.jobs import create_job, submit
from app.models import Document, Sentence, Treebank
from app.services.staging import (
    EXPORT_INLINE_MAX_SENTENCES,
    IMPORT_INLINE_MAX_BYTES,
    remove,
    staged_path,
    sweep,
)


def _app() -> Flask:
    return current_app._get_current_object()  # type: ignore[attr-defined,no-any-return]


def upload_size(form: ImportForm) -> int:
    """Bytes of the form's uploaded file (0 for pasted text), without reading it into memory."""
    if (form.text.data or "").strip() or not form.file.data:
        return 0
    stream = form.file.data.stream
    stream.seek(0, os.SEEK_END)
    size = int(stream.tell())
    stream.seek(0)
    return size


def queue_import(form: ImportForm, existing: Treebank | None) -> Job | None:
    """Stage the form's upload or pasted text and queue its import, when it is larger than the
    inline limit (pasted text is plain text, as :func:`app.views.treebanks._import` reads it)."""
    app = _app()
    limit = int(app.config.get("IMPORT_INLINE_MAX_BYTES", IMPORT_INLINE_MAX_BYTES))
    pasted = (form.text.data or "").strip().encode("utf-8")
    if (len(pasted) if pasted else upload_size(form)) <= limit:
        return None
    sweep(app, "imports")
    upload = None if pasted else form.file.data
    filename = "pasted.txt" if upload is None else upload.filename or "upload.conllu"
    file_format = form.file_format.data or "conllu"
    if pasted and file_format == "conllu":
        file_format = "text"
    params: dict[str, Any] = {
        "filename": filename, "name": (form.name.data or "").strip(), "split": form.split.data or "train",
        "language": form.language.data or None, "format": file_format}
    job = create_job(db.session, kind="import", user=current_user,
                     treebank_id=existing.id if existing is not None else None, params=params)
    path = staged_path(app, "imports", job.id, filename.rsplit(".", 1)[-1] if "." in filename else "dat")
    try:
        if upload is None:
            path.write_bytes(pasted)
        else:
            upload.save(str(path))
        job.params = {**params, "staged": path.name}
        db.session.commit()
    except BaseException:
        db.session.rollback()
        remove(path)
        raise
    submit(app, job.id)
    return job


def export_sentences(treebank: Treebank, split: str | None) -> int:
    """How many sentences an export of ``treebank`` (one ``split``, or all) reads."""
    where = [Document.treebank_id == treebank.id, *([Document.split == split] if split else [])]
    return int(db.session.scalar(select(func.count()).select_from(Sentence)
                                 .join(Document, Document.id == Sentence.document_id).where(*where)) or 0)


def queue_export(treebank: Treebank, options: dict[str, Any]) -> Job | None:
    """Queue an export job for ``options`` (``source``, ``split``, ``reviewed_only``,
    ``provenance``) when the treebank has more sentences than the inline limit."""
    app = _app()
    limit = int(app.config.get("EXPORT_INLINE_MAX_SENTENCES", EXPORT_INLINE_MAX_SENTENCES))
    if export_sentences(treebank, options.get("split")) <= limit:
        return None
    sweep(app, "exports")
    job = create_job(db.session, kind="export", user=current_user, treebank_id=treebank.id, params=options)
    db.session.commit()
    submit(app, job.id)
    return job
