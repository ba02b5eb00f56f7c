"""Background job status, polled by the browser: ``GET /jobs/<id>`` (JSON)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from app.extensions import db
from app.models import Job
from app.views.workspace_api import JsonResponse, api_login_required

bp = Blueprint("jobs", __name__, url_prefix="/jobs")


@bp.get("/<int:job_id>")
@api_login_required
def show(job_id: int) -> Response | JsonResponse:
    """The job's state, progress (0..1), last message, error and result."""
    job = db.session.get(Job, job_id)
    if job is None:
        return jsonify(error=f"no job {job_id}"), 404
    return jsonify(job.to_dict())
