"""Sign in and out, change your own password, and the one-time invitation/reset links."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user
from werkzeug.wrappers import Response

from app.extensions import db, login_manager
from app.forms import LinkForm, LoginForm, PasswordChangeForm
from app.models import User
from app.services.audit import record
from app.services.members import memberships_of
from app.services.users import authenticate, change_password, find_token, redeem_token
from app.throttle import login_throttle
from app.views.access import public, signed_in
from app.views.errors import as_sentence

bp = Blueprint("auth", __name__, url_prefix="/auth")


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    """The signed-in user for Flask-Login, if ``user_id`` (``"<id>:<epoch>"``, from the session or
    the remember-me cookie) carries the user's current session epoch and the account is active;
    revoked cookies and deactivated accounts get None (they are signed out)."""
    number, _, epoch = user_id.partition(":")
    if not (number.isdecimal() and epoch.isdecimal()) or len(number) > 18:
        return None
    user = db.session.get(User, int(number))
    if user is None or user.get_id() != user_id or not user.active:
        return None
    return user


@bp.route("/login", methods=["GET", "POST"])
@public
def login() -> str | Response:
    """Show the sign-in form; sign in on a valid POST (both outcomes are audit events; 429
    after too many failures, see :mod:`app.throttle`)."""
    if current_user.is_authenticated:
        return redirect(url_for("index"))
    form = LoginForm()
    if form.validate_on_submit():
        address, username = request.remote_addr or "", form.username.data or ""
        wait = login_throttle().retry_after(address, username)
        if wait is not None:
            flash(f"Too many failed sign-ins: try again in {wait} seconds.", "error")
            page = render_template("auth/login.html", form=form)
            return Response(page, 429, headers={"Retry-After": str(wait)})
        user = authenticate(db.session, username, form.password.data or "")
        if user is not None:
            login_throttle().succeeded(address, username)
            login_user(user, remember=form.remember.data)
            record(db.session, "sign-in", user=user)
            db.session.commit()
            flash(f"Signed in as {user.username}.", "success")
            return redirect(_safe_next(request.args.get("next")))
        login_throttle().failed(address, username)
        record(db.session, "sign-in-failed", user=None, username=username[:80])
        db.session.commit()
        flash("Wrong user name or password.", "error")
    return render_template("auth/login.html", form=form)


@bp.route("/logout", methods=["POST"])
@signed_in
def logout() -> Response:
    """Sign out (POST, so a link elsewhere cannot sign a user out) everywhere: the user's sessions
    and remember-me cookies on every device stop working, including copies of them."""
    record(db.session, "sign-out", user=current_user)
    current_user.revoke_sessions()
    db.session.commit()
    logout_user()
    flash("Signed out.", "info")
    return redirect(url_for("auth.login"))


@bp.route("/password", methods=["GET", "POST"])
@signed_in
def password() -> str | Response | tuple[str, int]:
    """Change your own password (the current one is asked again); this session stays signed in,
    every other one (other devices, remember-me cookies) is signed out."""
    form = PasswordChangeForm()
    if form.validate_on_submit():
        try:
            change_password(db.session, current_user, form.current.data or "", form.password.data or "")
        except ValueError as error:
            db.session.rollback()
            form.current.errors = [*form.current.errors, as_sentence(error)]
            return render_template("auth/password.html", form=form), 422
        db.session.commit()
        # The new password revoked every session (see User.set_password); this one carries on.
        remembered = current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token") in request.cookies
        login_user(current_user._get_current_object(), remember=remembered)
        flash("Your password was changed; your other sessions were signed out.", "success")
        return redirect(url_for("index"))
    return render_template("auth/password.html", form=form), 400 if form.errors else 200


@bp.route("/link/<token>", methods=["GET", "POST"])
@public
def link(token: str) -> str | Response | tuple[str, int]:
    """An invitation (choose a user name and password) or a password reset link, usable once."""
    try:
        kind = find_token(db.session, token).kind
    except ValueError as error:
        return render_template("auth/link.html", form=None, bad=str(error)), 404
    form = LinkForm()
    if form.validate_on_submit():
        try:
            user = redeem_token(db.session, token, form.password.data or "", form.username.data)
        except ValueError as error:
            db.session.rollback()
            field = form.username if kind == "invite" else form.password
            field.errors = [*field.errors, as_sentence(error)]
            return render_template("auth/link.html", form=form, kind=kind), 422
        db.session.commit()
        joined = [m.treebank.name for m in memberships_of(db.session, user)]
        where = f" You have joined {', '.join(joined)}." if joined else ""
        flash(f"Account {user.username} is ready: sign in with your new password.{where}", "success")
        return redirect(url_for("auth.login"))
    return render_template("auth/link.html", form=form, kind=kind), 400 if form.errors else 200


def _safe_next(target: str | None) -> str:
    """``target`` when it is a path on this site, else the start page."""
    if target and target.startswith("/") and not urlsplit(target).netloc and "\\" not in target:
        return target
    return url_for("index")
