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
from app.services.exports import export_conllu
from app.services.imports import import_conllu
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
    """Import an uploaded CoNLL-U file; a bad file is refused with its line and problem."""
    form = ImportForm()
    if request.method == "GET" and request.args.get("name"):
        form.name.data = request.args["name"]
    if not form.validate_on_submit():
        status = 400 if request.method == "POST" else 200
        return render_template("treebanks/import.html", form=form), status
    upload_file = form.file.data
    try:
        result = import_conllu(
            db.session, data=upload_file.read(), filename=upload_file.filename or "upload.conllu",
            treebank_name=form.name.data or "", split=form.split.data or "train",
            user=current_user, language=form.language.data or None,
            max_bytes=current_app.config["MAX_CONTENT_LENGTH"],
        )
    except (ConlluError, ValueError) as error:
        db.session.rollback()
        return render_template("treebanks/import.html", form=form, error=error), 422
    db.session.commit()
    flash(f"Imported {result.sentences} sentences ({result.words} words) into "
          f"{result.treebank.name} ({result.document.split}).", "success")
    return redirect(url_for("sentences.index", treebank_id=result.treebank.id))


@bp.route("/<int:treebank_id>/export")
@login_required
def export(treebank_id: int) -> Response:
    """Download the treebank (or one split) as CoNLL-U with the trees of one source."""
    treebank = db.get_or_404(Treebank, treebank_id)
    source = request.args.get("source", "gold")
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        split = None
    text = export_conllu(db.session, treebank, source=source, split=split)
    filename = _safe_filename(f"{treebank.name}-{split or 'all'}-{source}.conllu")
    return Response(
        text.encode("utf-8"),
        mimetype="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)
