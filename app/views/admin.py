"""User management for site admins: create, invite, deactivate/reactivate, reset a password,
and each user's audit log."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import func, select
from werkzeug.wrappers import Response

from app.extensions import db
from app.forms import UserCreateForm
from app.models import Membership, User
from app.services.audit import events, readable_details, record, sentence_names
from app.services.users import TOKEN_DAYS, UserExistsError, create_user, issue_token, set_active
from app.views.access import admin_only
from app.views.errors import as_sentence

bp = Blueprint("admin", __name__, url_prefix="/admin")


def _users_page(form: UserCreateForm, status: int = 200, **extra: object) -> tuple[str, int]:
    roles: dict[int, int] = {user_id: count for user_id, count in db.session.execute(
        select(Membership.user_id, func.count()).group_by(Membership.user_id))}
    users = db.session.scalars(select(User).order_by(User.username)).all()
    return render_template("admin/users.html", users=users, roles=roles, form=form,
                           token_days=TOKEN_DAYS, **extra), status


@bp.get("/users")
@admin_only
def users() -> tuple[str, int]:
    """Every account, the create form and the invitation button."""
    return _users_page(UserCreateForm())


@bp.post("/users")
@admin_only
def create() -> Response | tuple[str, int]:
    """Create an account with a password the admin passes on."""
    form = UserCreateForm()
    if not form.validate_on_submit():
        return _users_page(form, 400)
    try:
        user = create_user(db.session, form.username.data or "", form.password.data or "",
                           admin=bool(form.admin.data))
    except (UserExistsError, ValueError) as error:
        db.session.rollback()
        form.username.errors = [*form.username.errors, as_sentence(error)]
        return _users_page(form, 422)
    record(db.session, "user-create", user=current_user, subject=user, admin=user.is_admin)
    db.session.commit()
    flash(f"Created {'administrator' if user.is_admin else 'user'} {user.username}.", "success")
    return redirect(url_for("admin.users"))


@bp.post("/users/invite")
@admin_only
def invite() -> tuple[str, int]:
    """A one-time link with which someone creates their own account (shown once)."""
    token = issue_token(db.session, "invite", by=current_user)
    db.session.commit()
    return _users_page(UserCreateForm(), link=url_for("auth.link", token=token, _external=True),
                       link_for=None)


@bp.post("/users/<int:user_id>/reset")
@admin_only
def reset(user_id: int) -> tuple[str, int]:
    """A one-time link with which the user sets a new password (shown once)."""
    user = db.get_or_404(User, user_id)
    token = issue_token(db.session, "reset", by=current_user, user=user)
    db.session.commit()
    return _users_page(UserCreateForm(), link=url_for("auth.link", token=token, _external=True),
                       link_for=user.username)


@bp.post("/users/<int:user_id>/active")
@admin_only
def active(user_id: int) -> Response:
    """Deactivate (``active=0``) or reactivate (``active=1``) an account."""
    user = db.get_or_404(User, user_id)
    wanted = request.form.get("active")
    if wanted not in ("0", "1"):
        flash("active must be 0 or 1.", "error")
        return redirect(url_for("admin.users"))
    try:
        set_active(db.session, user, wanted == "1", by=current_user)
    except ValueError as error:
        db.session.rollback()
        flash(as_sentence(error), "error")
        return redirect(url_for("admin.users"))
    db.session.commit()
    flash(f"{user.username} is {'active again' if user.active else 'deactivated'}.", "success")
    return redirect(url_for("admin.users"))


@bp.get("/users/<int:user_id>/events")
@admin_only
def user_events(user_id: int) -> str:
    """What the user did and what was done to their account, newest first."""
    user = db.get_or_404(User, user_id)
    before = request.args.get("before", type=int)
    rows = events(db.session, user_id=user.id, before=before)
    return render_template("audit/events.html", rows=rows, names=sentence_names(db.session, rows),
                           describe=readable_details, title=f"Events of {user.username}",
                           subject=user, treebank=None, endpoint="admin.user_events",
                           args={"user_id": user.id})
