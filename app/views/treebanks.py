"""Treebank list, CoNLL-U upload and download."""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.forms import ImportForm
from app.models import SPLITS, Treebank
from app.services.browse import treebank_stats
from app.services.exports import OMITTED_HEADER, export_treebank
from app.services.imports import ImportResult, import_conllu, import_text
from parsing.conllu_io import ConlluError

bp = Blueprint("treebanks", __name__, url_prefix="/treebanks")


@bp.route("/")
@login_required
def index() -> str:
    """All treebanks with their sentence, word and tree counts."""
    return render_template("treebanks/index.html", stats=treebank_stats(db.session))


@bp.route("/import", methods=["GET", "POST"])
@login_required
def upload() -> str | BaseResponse | tuple[str, int]:
    """Import an uploaded CoNLL-U or text file, or pasted text; a bad one is refused with its
    line and problem."""
    form = ImportForm()
    if request.method == "GET" and request.args.get("name"):
        form.name.data = request.args["name"]
    if not form.validate_on_submit():
        status = 400 if request.method == "POST" else 200
        return render_template("treebanks/import.html", form=form), status
    try:
        result = _import(form)
    except (ConlluError, ValueError) as error:
        db.session.rollback()
        return render_template("treebanks/import.html", form=form, error=error), 422
    db.session.commit()
    flash(f"Imported {result.sentences} sentences ({result.words} words) into "
          f"{result.treebank.name} ({result.document.split}).", "success")
    return redirect(url_for("sentences.index", treebank_id=result.treebank.id))


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
@login_required
def export(treebank_id: int) -> Response:
    """Download the treebank (or one split) as CoNLL-U with the trees of one source.

    Sentences without a tree from the source are left out; the ``X-Arcvote-Omitted`` header
    says how many. ``reviewed_only=1`` keeps only reviewed sentences (see the exports service).
    """
    treebank = db.get_or_404(Treebank, treebank_id)
    source = request.args.get("source", "gold")
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        split = None
    reviewed_only = request.args.get("reviewed_only") in ("1", "on", "true", "yes")
    export = export_treebank(db.session, treebank, source=source, split=split, reviewed_only=reviewed_only)
    suffix = "-reviewed" if reviewed_only else ""
    filename = _safe_filename(f"{treebank.name}-{split or 'all'}-{source}{suffix}.conllu")
    return Response(
        export.text.encode("utf-8"),
        mimetype="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"',
                 OMITTED_HEADER: str(export.omitted)},
    )


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)
