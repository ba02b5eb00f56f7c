"""``GET /healthz``: the database, the job queue and the workers' heartbeats, as JSON.

200 when all are fine, 503 otherwise (for load balancers and monitors; no sign-in, no secrets).
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from app.jobs.health import health_report
from app.views.access import public
from app.views.workspace_api import JsonResponse

bp = Blueprint("health", __name__)


@bp.get("/healthz")
@public
def healthz() -> JsonResponse:
    """``{"status": "ok"|"unhealthy", "database": ..., "queue": ..., "workers": ...}``; public, so
    ``workers.alive`` is how many workers are alive, not their ``host:pid`` names (issue #31)."""
    healthy, report = health_report(current_app._get_current_object())  # type: ignore[attr-defined]
    report["workers"]["alive"] = len(report["workers"]["alive"])
    return jsonify(status="ok" if healthy else "unhealthy", **report), 200 if healthy else 503
