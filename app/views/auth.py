"""Sign in and out."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from werkzeug.wrappers import Response

from app.extensions import db, login_manager
from app.forms import LoginForm
from app.models import User
from app.services.users import authenticate

bp = Blueprint("auth", __name__, url_prefix="/auth")


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    """The signed-in user for Flask-Login."""
    return db.session.get(User, int(user_id))


@bp.route("/login", methods=["GET", "POST"])
def login() -> str | Response:
    """Show the sign-in form; sign in on a valid POST."""
    if current_user.is_authenticated:
        return redirect(url_for("index"))
    form = LoginForm()
    if form.validate_on_submit():
        user = authenticate(db.session, form.username.data or "", form.password.data or "")
        if user is not None:
            login_user(user, remember=form.remember.data)
            flash(f"Signed in as {user.username}.", "success")
            return redirect(_safe_next(request.args.get("next")))
        flash("Wrong user name or password.", "error")
    return render_template("auth/login.html", form=form)


@bp.route("/logout", methods=["POST"])
@login_required
def logout() -> Response:
    """Sign out (POST, so a link elsewhere cannot sign a user out)."""
    logout_user()
    flash("Signed out.", "info")
    return redirect(url_for("auth.login"))


def _safe_next(target: str | None) -> str:
    """``target`` when it is a path on this site, else the start page."""
    if target and target.startswith("/") and not urlsplit(target).netloc and "\\" not in target:
        return target
    return url_for("index")
