"""The owner's assignment page: hand batches of the queue to annotators, the treebank's
assignment rules (assigned-only, annotators per sentence), and who has what."""

from __future__ import annotations

import re
from dataclasses import replace

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.wrappers import Response

from app.extensions import db
from app.forms import AssignForm, AssignmentSettingsForm
from app.models import Treebank, User
from app.services.assignments import (
    AssignmentError,
    assign,
    assigned_sentences,
    unassign_open,
    update_settings,
    workloads,
)
from app.services.members import members
from app.services.permissions import can
from app.services.queue import DEFAULT_ORDER, QueueFilter, build_queue
from app.views.access import requires
from app.views.errors import as_sentence
from app.wording import counted

bp = Blueprint("assignments", __name__, url_prefix="/treebanks")


def _assign_form(treebank: Treebank) -> AssignForm:
    spec = QueueFilter.from_args(request.args)
    form = AssignForm(order=spec.order, split=spec.split)
    form.annotators.choices = [(m.user.username, f"{m.user.username} ({m.role})")
                               for m in members(db.session, treebank)
                               if m.user.active and can(m.user, "annotate", treebank)]
    return form


def _page(treebank: Treebank, form: AssignForm | None = None, settings: AssignmentSettingsForm | None = None,
          status: int = 200) -> tuple[str, int]:
    settings = settings or AssignmentSettingsForm(
        assigned_only=treebank.assigned_only, annotators_per_sentence=treebank.annotators_per_sentence)
    source = request.form if request.method == "POST" else request.args
    filters = {key: value for key, value in QueueFilter.from_args(source).to_args().items()
               if key not in ("order", "split", "assigned")}
    return render_template("team/assignments.html", treebank=treebank, form=form or _assign_form(treebank),
                           settings=settings, workloads=workloads(db.session, treebank),
                           sentences=assigned_sentences(db.session, treebank),
                           filters=filters), status


@bp.get("/<int:treebank_id>/assignments")
@requires("manage")
def index(treebank_id: int) -> tuple[str, int]:
    """Who has what (open and done per annotator), the assign form and the rules; the queue's
    filter arguments (``?relation=...``: the queue page's "Hand out from this view") choose
    which sentences a batch is taken from."""
    return _page(db.get_or_404(Treebank, treebank_id))


def _ids(text: str) -> list[int]:
    """Sentence ids from text (any separators); :raise AssignmentError: something else in it."""
    words = [word for word in re.split(r"[\s,;]+", text.strip()) if word]
    if bad := [word for word in words if not (word.isascii() and word.isdigit() and len(word) < 10)]:
        raise AssignmentError(f"not sentence ids: {', '.join(bad[:5])}", "ids")
    return [int(word) for word in words]


@bp.post("/<int:treebank_id>/assignments")
@requires("manage")
def create(treebank_id: int) -> Response | tuple[str, int]:
    """Assign the next N unassigned sentences of the queue, or the ids given."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = _assign_form(treebank)
    if not form.validate_on_submit():
        return _page(treebank, form, status=400)
    try:
        if (form.ids.data or "").strip():
            ids = _ids(form.ids.data or "")
        elif form.count.data:
            spec = replace(QueueFilter.from_args(request.form), order=form.order.data or DEFAULT_ORDER,
                           split=form.split.data or "pool", assigned="unassigned")
            ids = [item["id"] for item in build_queue(db.session, treebank, spec).items[:form.count.data]]
        else:
            raise AssignmentError("say how many sentences, or list their ids", "count")
        made, skipped = assign(db.session, treebank, ids, form.annotators.data or [], by=current_user)
    except AssignmentError as error:
        db.session.rollback()
        target = getattr(form, error.field, form.annotators)
        target.errors = [*target.errors, as_sentence(error)]
        return _page(treebank, form, status=422)
    db.session.commit()
    sentences = len({a.sentence_id for a in made})
    note = f" ({skipped} already assigned, left as they were)" if skipped else ""
    k = treebank.annotators_per_sentence
    each = f" to {k} annotators each" if k > 1 else ""
    flash(f"Assigned {counted(sentences, 'sentence')}{each}{note}.", "success")
    return redirect(url_for("assignments.index", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/assignments/settings")
@requires("manage")
def settings(treebank_id: int) -> Response | tuple[str, int]:
    """Save the assignment rules."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = AssignmentSettingsForm()
    if not form.validate_on_submit():
        return _page(treebank, settings=form, status=400)
    update_settings(db.session, treebank, assigned_only=bool(form.assigned_only.data),
                    per_sentence=int(form.annotators_per_sentence.data or 1), by=current_user)
    db.session.commit()
    flash("Assignment rules saved.", "success")
    return redirect(url_for("assignments.index", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/assignments/<int:user_id>/unassign")
@requires("manage")
def unassign(treebank_id: int, user_id: int) -> Response:
    """Take back a user's open assignments (their saved trees stay)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    user = db.get_or_404(User, user_id)
    count = unassign_open(db.session, treebank, user, by=current_user)
    db.session.commit()
    flash(f"Took back {count} open sentences from {user.username}.", "success")
    return redirect(url_for("assignments.index", treebank_id=treebank.id))
