"""Access rules of the views: every view function carries exactly one of these decorators.

* :func:`public`: anyone, signed in or not (sign-in form, invitation and reset links);
* :func:`signed_in`: any signed-in, active user (treebank list, new imports, own password);
* :func:`admin_only`: site admins (user management); others get 403;
* :func:`requires` ``(action)``: the action of :mod:`app.services.permissions` on the treebank
  named by the URL (``treebank_id``, or the treebank of ``sentence_id``/``job_id``), with its
  404/403 rule.

Signed-out requests are sent to the sign-in page, or get 401 JSON under ``/api/`` and
``/jobs/``. Each decorator records its rule on the view as ``view.access`` (``"public"``,
``"signed-in"``, ``"admin"`` or the action); the role matrix test reads it for every route
of ``app.url_map``, so a route without a rule fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Flask, abort, jsonify, request
from flask_login import current_user

from app.extensions import db, login_manager
from app.job_models import Job
from app.models import Sentence, Treebank
from app.services.permissions import ACTIONS, can, refusal, role_of

View = TypeVar("View", bound=Callable[..., Any])

JSON_PREFIXES = ("/api/", "/jobs/")
"""Paths answered with JSON errors (see :mod:`app.views.errors`)."""


def wants_json() -> bool:
    """True for requests to the JSON endpoints."""
    return request.path.startswith(JSON_PREFIXES)


def _mark(view: Callable[..., Any], rule: str) -> None:
    view.access = rule  # type: ignore[attr-defined]


def public(view: View) -> View:
    """Anyone may open the view."""
    _mark(view, "public")
    return view


def _guarded(rule: str, check: Callable[[dict[str, Any]], None]) -> Callable[[View], View]:
    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not current_user.is_authenticated:
                if wants_json():
                    return jsonify(error="sign in first"), 401
                return login_manager.unauthorized()
            check(kwargs)
            return view(*args, **kwargs)
        _mark(wrapped, rule)
        return wrapped  # type: ignore[return-value]
    return decorate


def signed_in(view: View) -> View:
    """Any signed-in user may open the view."""
    return _guarded("signed-in", lambda _kwargs: None)(view)


def _admin(_kwargs: dict[str, Any]) -> None:
    if not current_user.is_admin:
        abort(403, "only an administrator may do this")


def admin_only(view: View) -> View:
    """Only site admins may open the view (403 for others)."""
    return _guarded("admin", _admin)(view)


def requires(action: str) -> Callable[[View], View]:
    """The signed-in user must be allowed ``action`` on the URL's treebank."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")

    def check(kwargs: dict[str, Any]) -> None:
        treebank = treebank_of(kwargs)
        if treebank is None:  # a job of no treebank: its starter's and the admins'
            return
        denied = refusal(current_user, action, treebank)
        if denied is not None:
            abort(404 if denied.hidden else 403, str(denied))
    return _guarded(action, check)


def treebank_of(kwargs: dict[str, Any]) -> Treebank | None:
    """The treebank named by the view arguments; 404 when there is none. A job without a
    treebank gives None to whoever started it and to admins, 404 to others."""
    if "treebank_id" in kwargs:
        return db.get_or_404(Treebank, kwargs["treebank_id"])
    if "sentence_id" in kwargs:
        return db.get_or_404(Sentence, kwargs["sentence_id"]).document.treebank
    if "job_id" in kwargs:
        job = db.get_or_404(Job, kwargs["job_id"])
        if job.treebank_id is None:
            if job.user_id != current_user.id and not current_user.is_admin:
                abort(404)
            return None
        return db.get_or_404(Treebank, job.treebank_id)
    raise LookupError("requires() needs treebank_id, sentence_id or job_id in the URL")


def register(app: Flask) -> None:
    """Give templates ``can(action, treebank)`` and ``role_of(treebank)`` for the signed-in user."""
    app.add_template_global(lambda action, treebank: can(current_user, action, treebank), "can")
    app.add_template_global(lambda treebank: role_of(current_user, treebank), "role_of")
