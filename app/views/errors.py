"""Error pages: 404, 413 (upload too large) and 500 (rolls the transaction back)."""

from __future__ import annotations

from flask import Flask, current_app, render_template
from werkzeug.exceptions import HTTPException

from app.extensions import db


def register(app: Flask) -> None:
    """Install the error handlers on ``app``."""
    app.register_error_handler(404, _not_found)
    app.register_error_handler(413, _too_large)
    app.register_error_handler(500, _server_error)


def _not_found(error: HTTPException) -> tuple[str, int]:
    return render_template("errors/404.html"), 404


def _too_large(error: HTTPException) -> tuple[str, int]:
    limit = current_app.config["MAX_CONTENT_LENGTH"] // 2**20
    return render_template("errors/413.html", limit=limit), 413


def _server_error(error: Exception) -> tuple[str, int]:
    db.session.rollback()
    return render_template("errors/500.html"), 500
