"""Error pages: 400, 404, 413 (upload too large) and 500 (rolls the transaction back).

Requests to the JSON endpoints (``/api/...``, ``/jobs/...``) get JSON errors instead.
"""

from __future__ import annotations

from flask import Flask, Response, current_app, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from app.extensions import db


def register(app: Flask) -> None:
    """Install the error handlers on ``app``."""
    app.register_error_handler(400, _bad_request)
    app.register_error_handler(CSRFError, _bad_request)
    app.register_error_handler(404, _not_found)
    app.register_error_handler(413, _too_large)
    app.register_error_handler(500, _server_error)


def _wants_json() -> bool:
    return request.path.startswith(("/api/", "/jobs/"))


def _bad_request(error: HTTPException) -> tuple[str | Response, int]:
    if _wants_json():
        return jsonify(error=error.description), 400
    return str(error.description), 400


def _not_found(error: HTTPException) -> tuple[str | Response, int]:
    if _wants_json():
        return jsonify(error="not found"), 404
    return render_template("errors/404.html"), 404


def _too_large(error: HTTPException) -> tuple[str, int]:
    limit = current_app.config["MAX_CONTENT_LENGTH"] // 2**20
    return render_template("errors/413.html", limit=limit), 413


def _server_error(error: Exception) -> tuple[str | Response, int]:
    db.session.rollback()
    if _wants_json():
        return jsonify(error="server error"), 500
    return render_template("errors/500.html"), 500
