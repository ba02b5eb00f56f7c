"""Error pages: 400, 403 (signed in, not allowed), 404, 413 (upload too large) and 500 (rolls
the transaction back).

Requests to the JSON endpoints (``/api/...``, ``/jobs/...``) get JSON errors instead.
"""

from __future__ import annotations

from flask import Flask, Response, current_app, jsonify, render_template
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from app.extensions import db
from app.views.access import wants_json as _wants_json


def as_sentence(message: object) -> str:
    """A service's lower-case message as a sentence: first letter up, full stop (names keep
    their case, unlike ``str.capitalize``). Also the ``sentence`` template filter."""
    text = str(message).strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def register(app: Flask) -> None:
    """Install the error handlers on ``app`` and the ``sentence`` filter."""
    app.add_template_filter(as_sentence, "sentence")
    app.register_error_handler(400, _bad_request)
    app.register_error_handler(CSRFError, _bad_request)
    app.register_error_handler(403, _forbidden)
    app.register_error_handler(404, _not_found)
    app.register_error_handler(413, _too_large)
    app.register_error_handler(500, _server_error)


def _bad_request(error: HTTPException) -> tuple[Response, int]:
    if _wants_json():
        return jsonify(error=error.description), 400
    # Plain text: the description may quote what the request sent.
    return Response(str(error.description), mimetype="text/plain"), 400


def _forbidden(error: HTTPException) -> tuple[str | Response, int]:
    if _wants_json():
        return jsonify(error=error.description), 403
    return render_template("errors/403.html", reason=error.description), 403


def _not_found(error: HTTPException) -> tuple[str | Response, int]:
    if _wants_json():
        return jsonify(error="not found"), 404
    return render_template("errors/404.html"), 404


def _too_large(error: HTTPException) -> tuple[str | Response, int]:
    limit = current_app.config["MAX_CONTENT_LENGTH"] // 2**20
    if _wants_json():
        return jsonify(error=f"the request is larger than the {limit} MB limit"), 413
    return render_template("errors/413.html", limit=limit), 413


def _server_error(error: Exception) -> tuple[str | Response, int]:
    db.session.rollback()
    if _wants_json():
        return jsonify(error="server error"), 500
    return render_template("errors/500.html"), 500
