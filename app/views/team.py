"""A treebank's team pages: members and roles, visibility, archive/restore/delete (with a
confirmation step), document deletion, and the treebank's audit log."""

from __future__ import annotations

import shutil

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import func, select
from werkzeug.wrappers import Response

from app.extensions import db
from app.forms import ConfirmNameForm, InviteForm, MemberForm, VisibilityForm
from app.models import Document, Sentence, Treebank
from app.services.audit import events, readable_details, record, sentence_names
from app.services.backup import backup_lines
from app.services.members import MemberError, members, remove_member, set_role, set_visibility
from app.services.permissions import roles_table
from app.services.removal import (
    RemovalError,
    archive,
    check_confirmation,
    delete_document,
    delete_treebank,
    restore,
)
from app.services.users import issue_token
from app.views.access import requires
from app.views.errors import as_sentence
from app.views.treebanks import safe_filename
from app.wording import counted

bp = Blueprint("team", __name__, url_prefix="/treebanks")


def _members_page(treebank: Treebank, form: MemberForm | None = None, status: int = 200,
                  link: str | None = None, invite: InviteForm | None = None) -> tuple[str, int]:
    return render_template(
        "team/members.html", treebank=treebank, members=members(db.session, treebank),
        form=form or MemberForm(), visibility=VisibilityForm(visibility=treebank.visibility),
        table=roles_table(), invite=invite or InviteForm(), link=link), status


@bp.get("/<int:treebank_id>/members")
@requires("manage")
def members_page(treebank_id: int) -> tuple[str, int]:
    """Members and their roles, the add form, who may do what, and the visibility."""
    return _members_page(db.get_or_404(Treebank, treebank_id))


@bp.post("/<int:treebank_id>/members")
@requires("manage")
def add_member(treebank_id: int) -> Response | tuple[str, int]:
    """Give a user a role (adds them, or changes the role of a member)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = MemberForm()
    if not form.validate_on_submit():
        return _members_page(treebank, form, 400)
    try:
        member = set_role(db.session, treebank, form.username.data or "", form.role.data or "",
                          by=current_user)
    except MemberError as error:
        db.session.rollback()
        field = getattr(form, error.field, form.username)
        field.errors = [*field.errors, as_sentence(error)]
        return _members_page(treebank, form, 422)
    db.session.commit()
    flash(f"{member.user.username} is {member.role} of {treebank.name}.", "success")
    return redirect(url_for("team.members_page", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/invite")
@requires("manage")
def invite(treebank_id: int) -> tuple[str, int]:
    """A one-time link with which someone creates an account and joins the treebank with the
    chosen role (shown once)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = InviteForm()
    if not form.validate_on_submit():
        return _members_page(treebank, status=400, invite=form)
    role = form.invite_role.data or "annotator"
    token = issue_token(db.session, "invite", by=current_user, treebank=treebank, role=role)
    db.session.commit()
    return _members_page(treebank, link=url_for("auth.link", token=token, _external=True), invite=form)


@bp.post("/<int:treebank_id>/members/<int:user_id>/remove")
@requires("manage")
def drop_member(treebank_id: int, user_id: int) -> Response:
    """Take a member's role away."""
    treebank = db.get_or_404(Treebank, treebank_id)
    try:
        remove_member(db.session, treebank, user_id, by=current_user)
    except MemberError as error:
        db.session.rollback()
        flash(as_sentence(error), "error")
    else:
        db.session.commit()
        flash("Member removed.", "success")
    return redirect(url_for("team.members_page", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/visibility")
@requires("manage")
def visibility(treebank_id: int) -> Response | tuple[str, int]:
    """Make the treebank private or public."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = VisibilityForm()
    if not form.validate_on_submit():
        return _members_page(treebank, status=400)
    set_visibility(db.session, treebank, form.visibility.data or "", by=current_user)
    db.session.commit()
    flash(f"{treebank.name} is {treebank.visibility}.", "success")
    return redirect(url_for("team.members_page", treebank_id=treebank.id))


def _remove_page(treebank: Treebank, form: ConfirmNameForm | None = None, status: int = 200,
                 error: str | None = None) -> tuple[str, int]:
    counts: dict[int, int] = {document_id: count for document_id, count in db.session.execute(
        select(Sentence.document_id, func.count()).join(Document)
        .where(Document.treebank_id == treebank.id).group_by(Sentence.document_id))}
    return render_template("team/remove.html", treebank=treebank, form=form or ConfirmNameForm(),
                           counts=counts, error=error), status


@bp.get("/<int:treebank_id>/remove")
@requires("remove")
def remove_page(treebank_id: int) -> tuple[str, int]:
    """The confirmation step: archive or restore, delete the treebank or one document."""
    return _remove_page(db.get_or_404(Treebank, treebank_id))


@bp.post("/<int:treebank_id>/archive")
@requires("remove")
def archive_treebank(treebank_id: int) -> Response | tuple[str, int]:
    """Archive (hide and freeze) the treebank once its name is typed."""
    return _confirmed(db.get_or_404(Treebank, treebank_id), "archive")


@bp.post("/<int:treebank_id>/delete")
@requires("remove")
def delete(treebank_id: int) -> Response | tuple[str, int]:
    """Delete the treebank for good once its name is typed."""
    return _confirmed(db.get_or_404(Treebank, treebank_id), "delete")


def _confirmed(treebank: Treebank, what: str) -> Response | tuple[str, int]:
    form = ConfirmNameForm()
    if not form.validate_on_submit():
        return _remove_page(treebank, form, 400)
    name = treebank.name
    try:
        check_confirmation(name, form.confirm.data)
        if what == "archive":
            archive(db.session, treebank, by=current_user)
        else:
            folders = delete_treebank(db.session, treebank, by=current_user,
                                      models_dir=current_app.config["MODELS_DIR"])
    except RemovalError as error:
        db.session.rollback()
        return _remove_page(treebank, form, 422, error=str(error))
    db.session.commit()
    if what == "archive":
        flash(f"{name} is archived: only its owners see it, under Archived; restore it there.", "success")
    else:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        flash(f"{name} was deleted.", "success")
    return redirect(url_for("treebanks.index"))


@bp.post("/<int:treebank_id>/restore")
@requires("remove")
def restore_treebank(treebank_id: int) -> Response:
    """Bring an archived treebank back."""
    treebank = db.get_or_404(Treebank, treebank_id)
    try:
        restore(db.session, treebank, by=current_user)
    except RemovalError as error:
        db.session.rollback()
        flash(as_sentence(error), "error")
        return redirect(url_for("team.remove_page", treebank_id=treebank.id))
    db.session.commit()
    flash(f"{treebank.name} is restored.", "success")
    return redirect(url_for("sentences.index", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/documents/<int:document_id>/delete")
@requires("remove")
def delete_doc(treebank_id: int, document_id: int) -> Response | tuple[str, int]:
    """Delete one document (its name typed to confirm)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    document = db.get_or_404(Document, document_id)
    if document.treebank_id != treebank.id:
        return _remove_page(treebank, status=404, error="no such document in this treebank")
    form = ConfirmNameForm()
    if not form.validate_on_submit():
        return _remove_page(treebank, form, 400)
    try:
        check_confirmation(document.name, form.confirm.data)
        gone = delete_document(db.session, document, by=current_user)
    except RemovalError as error:
        db.session.rollback()
        return _remove_page(treebank, form, 422, error=str(error))
    db.session.commit()
    flash(f"Deleted {document.name} ({counted(gone, 'sentence')}).", "success")
    return redirect(url_for("team.remove_page", treebank_id=treebank.id))


@bp.get("/<int:treebank_id>/backup")
@requires("manage")
def backup(treebank_id: int) -> Response:
    """Download the whole treebank as one backup file (see :mod:`app.services.backup`)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    record(db.session, "backup", user=current_user, treebank=treebank)
    text = "".join(backup_lines(db.session, treebank))
    db.session.commit()
    filename = safe_filename(f"{treebank.name}.arcvote-backup.jsonl")
    return Response(text.encode("utf-8"), mimetype="application/jsonl; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@bp.get("/<int:treebank_id>/events")
@requires("curate")
def treebank_events(treebank_id: int) -> str:
    """The treebank's audit log, newest first (``?sentence=`` keeps one sentence's events)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    sentence = request.args.get("sentence", type=int)
    rows = events(db.session, treebank_id=treebank.id, sentence_id=sentence,
                  before=request.args.get("before", type=int))
    args: dict[str, int] = {"treebank_id": treebank.id} | ({"sentence": sentence} if sentence else {})
    return render_template("audit/events.html", rows=rows, names=sentence_names(db.session, rows),
                           describe=readable_details, title=f"Events of {treebank.name}",
                           treebank=treebank, subject=None, endpoint="team.treebank_events", args=args)
