"""Treebank list, CoNLL-U upload and download."""

from __future__ import annotations

import re

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from sqlalchemy import select
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.forms import ImportForm
from app.job_models import Job
from app.jobs.file_tasks import export_path
from app.models import SPLITS, Treebank, User
from app.services.audit import record
from app.services.browse import treebank_stats
from app.services.exports import OMITTED_HEADER, export_treebank
from app.services.imports import ImportResult, import_conllu, import_text
from app.services.members import welcome
from app.services.permissions import PermissionDenied, can, readable_treebanks, require
from app.services.trees import check_export_source
from app.views.access import requires, signed_in
from app.views.background import queue_export, queue_import
from app.wording import counted
from parsing.conllu_io import ConlluError

bp = Blueprint("treebanks", __name__, url_prefix="/treebanks")


@bp.route("/")
@signed_in
def index() -> str:
    """The treebanks the user may read, with their sentence, word and tree counts (archived
    ones, which only their owners see, apart)."""
    stats = treebank_stats(db.session, where=readable_treebanks(current_user))
    return render_template("treebanks/index.html", welcome=welcome(db.session, current_user),
                           stats=[entry for entry in stats if entry.treebank.archived_at is None],
                           archived=[entry.treebank for entry in stats if entry.treebank.archived_at])


@bp.route("/import", methods=["GET", "POST"])
@signed_in
def upload() -> str | BaseResponse | tuple[str | BaseResponse, int]:
    """Import an uploaded CoNLL-U or text file, or pasted text; a bad one is refused with its
    line and problem. A new name makes a treebank the user owns; an existing one needs the
    ``import`` permission (403; a treebank the user cannot see just has a taken name: 422).
    A file above ``IMPORT_INLINE_MAX_BYTES`` becomes an import job: the answer is its page
    (or, to ``Accept: application/json``, 202 with the job)."""
    form = ImportForm()
    if request.method == "GET" and request.args.get("name"):
        form.name.data = request.args["name"]
    if not form.validate_on_submit():
        status = 400 if request.method == "POST" else 200
        return render_template("treebanks/import.html", form=form), status
    existing = db.session.scalar(select(Treebank).where(Treebank.name == (form.name.data or "").strip()))
    try:
        if existing is not None:  # refused before the file is read, not after
            require(current_user, "import", existing)
        job = queue_import(form, existing)
        if job is not None:
            return _queued(job)
        result = _import(form)
    except (ConlluError, ValueError) as error:
        db.session.rollback()
        return render_template("treebanks/import.html", form=form, error=error), 422
    except PermissionDenied as denied:
        db.session.rollback()
        if denied.hidden:
            form.name.errors = [*form.name.errors, "This name is taken: choose another."]
            return render_template("treebanks/import.html", form=form), 422
        return render_template("errors/403.html", reason=str(denied)), 403
    db.session.commit()
    flash(f"Imported {counted(result.sentences, 'sentence')} ({counted(result.words, 'word')}) into "
          f"{result.treebank.name} ({result.document.split}).", "success")
    return redirect(url_for("sentences.index", treebank_id=result.treebank.id))


def _queued(job: Job) -> BaseResponse | tuple[BaseResponse, int]:
    """The answer to a request that started a job: its page, or 202 with it for JSON clients."""
    if request.accept_mimetypes.best == "application/json":
        return jsonify(job=job.to_dict(), page=url_for("treebanks.job_page", job_id=job.id)), 202
    return redirect(url_for("treebanks.job_page", job_id=job.id))


@bp.route("/jobs/<int:job_id>")
@requires("read")
def job_page(job_id: int) -> str:
    """A background import or export: a link back to its treebank (once it has one), its
    progress bar, Cancel and Retry (for who may), and when it is done the imported document's
    link or the export's download link."""
    job = db.get_or_404(Job, job_id)
    starter = db.session.get(User, job.user_id)
    treebank_id = job.treebank_id if job.treebank_id is not None else (job.result or {}).get("treebank_id")
    treebank = db.session.get(Treebank, treebank_id) if isinstance(treebank_id, int) else None
    names = {"import": "Importing", "export": "Exporting", "validate": "Validating"}
    subject = (job.params or {}).get("filename") or (treebank.name if treebank else "")
    return render_template(
        "treebanks/job.html", job=job, starter=starter.username if starter else "?", treebank=treebank,
        title=f"{names.get(job.kind, job.kind.capitalize())} {subject}".strip(),
        may_cancel=treebank is None or can(current_user, "train", treebank),
        file_kept=job.kind == "export" and export_path(current_app._get_current_object(),  # type: ignore[attr-defined]
                                                       job.id).exists())


def _import(form: ImportForm) -> ImportResult:
    """Store the form's file or pasted text (pasted text is always plain text)."""
    name, split, language = form.name.data or "", form.split.data or "train", form.language.data or None
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    file_format = form.file_format.data or "conllu"
    pasted = (form.text.data or "").strip()
    if pasted:
        data, filename = pasted.encode("utf-8"), "pasted.txt"
    else:
        data, filename = form.file.data.read(), form.file.data.filename or "upload.conllu"
    if file_format == "conllu" and not pasted:
        return import_conllu(db.session, data=data, filename=filename, treebank_name=name, split=split,
                             user=current_user, language=language, max_bytes=limit)
    return import_text(db.session, data=data, filename=filename, treebank_name=name, split=split,
                       user=current_user, one_per_line=file_format == "lines", language=language,
                       max_bytes=limit)


@bp.route("/<int:treebank_id>/export")
@requires("read")
def export(treebank_id: int) -> BaseResponse | tuple[BaseResponse, int]:
    """Download the treebank (or one split) as CoNLL-U with the trees of one source.

    Sentences without a tree from the source are left out; the ``X-Arcvote-Omitted`` header
    says how many. An unknown ``source`` is a 400 naming the known ones. ``reviewed_only=1``
    keeps only reviewed sentences, ``provenance=1`` adds each annotated arc's source to MISC
    (``ArcSource=human|parser``; see the exports service). More sentences than
    ``EXPORT_INLINE_MAX_SENTENCES``: an export job, whose page offers the download.
    """
    treebank = db.get_or_404(Treebank, treebank_id)
    source = request.args.get("source", "gold")
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        split = None
    reviewed_only = request.args.get("reviewed_only") in ("1", "on", "true", "yes")
    provenance = request.args.get("provenance") in ("1", "on", "true", "yes")
    try:
        check_export_source(source)
    except ValueError as error:
        abort(400, str(error))
    job = queue_export(treebank, {"source": source, "split": split, "reviewed_only": reviewed_only,
                                  "provenance": provenance})
    if job is not None:
        return _queued(job)
    try:
        export = export_treebank(db.session, treebank, source=source, split=split,
                                 reviewed_only=reviewed_only, provenance=provenance)
    except ValueError as error:
        abort(400, str(error))
    record(db.session, "export", user=current_user, treebank=treebank, source=source, split=split,
           reviewed_only=reviewed_only, provenance=provenance, sentences=export.sentences)
    db.session.commit()
    suffix = "-reviewed" if reviewed_only else ""
    filename = safe_filename(f"{treebank.name}-{split or 'all'}-{source}{suffix}.conllu")
    return Response(
        export.text.encode("utf-8"),
        mimetype="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"',
                 OMITTED_HEADER: str(export.omitted)},
    )


def safe_filename(name: str) -> str:
    """``name`` with anything but letters, digits, ``.``, ``_`` and ``-`` replaced (for downloads)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)
