"""Background jobs from the page that started them: ``GET /jobs/<id>`` (JSON, polled; who may
read the job's treebank), ``POST /jobs/<id>/cancel`` and ``POST /jobs/<id>/retry`` (CSRF token in
``X-CSRFToken``; who may ``train`` on its treebank: its owners and admins; a job of no treebank:
whoever started it, or an admin), and ``GET /jobs/<id>/download``: the file a finished export
job wrote (who may read its treebank)."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, send_file
from flask_login import current_user

from app.extensions import db
from app.job_models import Job
from app.jobs import RoundBusy, submit
from app.jobs.control import JobStateError, cancel_job, retry_job
from app.jobs.file_tasks import export_path
from app.jobs.health import reap_stale_jobs, stale_seconds
from app.models import Treebank
from app.services.exports import OMITTED_HEADER
from app.services.permissions import can
from app.views.access import requires
from app.views.treebanks import safe_filename
from app.views.workspace_api import JsonResponse

bp = Blueprint("jobs", __name__, url_prefix="/jobs")


@bp.get("/<int:job_id>")
@requires("read")
def show(job_id: int) -> JsonResponse:
    """The job's state, progress (0..1), last message, log tail, error and result (a round's
    ``plugin_details``, what failing plugins' endpoints did, only for who may manage the
    treebank); a running job whose worker stopped sending heartbeats is marked failed here."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if reap_stale_jobs(db.session, stale_seconds(app), job_id=job_id):
        db.session.expire_all()
    job = db.get_or_404(Job, job_id)
    shown = job.to_dict()
    treebank = db.session.get(Treebank, job.treebank_id) if job.treebank_id is not None else None
    owner = treebank is not None and can(current_user, "manage", treebank)
    if isinstance(shown["result"], dict) and not owner:
        # what a failing plugin's endpoint answered tells open ports from closed: owners only (#31)
        shown["result"] = {k: v for k, v in shown["result"].items() if k != "plugin_details"}
    return jsonify(shown)


@bp.post("/<int:job_id>/cancel")
@requires("train")
def cancel(job_id: int) -> JsonResponse:
    """Cancel a queued job, or ask a running one to stop (409 when it already ended)."""
    job = db.get_or_404(Job, job_id)
    try:
        return jsonify(job=cancel_job(db.session, job, current_user).to_dict())
    except JobStateError as error:
        return jsonify(error=str(error), job=job.to_dict()), 409


@bp.post("/<int:job_id>/retry")
@requires("train")
def retry(job_id: int) -> JsonResponse:
    """Queue a failed or cancelled job again, as a new job (202; 409 when it did not fail or
    another round is queued or running on its treebank)."""
    try:
        job = retry_job(db.session, db.get_or_404(Job, job_id), current_user)
    except (JobStateError, RoundBusy) as error:
        return jsonify(error=str(error)), 409
    db.session.commit()
    submit(current_app._get_current_object(), job.id)  # type: ignore[attr-defined]
    db.session.expire_all()
    return jsonify(job=job.to_dict()), 202


@bp.get("/<int:job_id>/download")
@requires("read")
def download(job_id: int) -> JsonResponse:
    """The CoNLL-U file of a finished export job (409 for another kind of job or one not done;
    410 when the file was replaced by a newer export or expired)."""
    job = db.get_or_404(Job, job_id)
    if job.kind != "export" or job.state != "done" or not job.result:
        return jsonify(error=f"job {job.id} is a {job.kind} job, {job.state}: it has no file "
                             "to download"), 409
    path = export_path(current_app._get_current_object(), job.id)  # type: ignore[attr-defined]
    if not path.exists():
        return jsonify(error="this export's file is no longer kept: export the treebank again"), 410
    response = send_file(path, mimetype="text/plain; charset=utf-8", as_attachment=True,
                         download_name=safe_filename(str(job.result.get("file") or "export.conllu")))
    response.headers[OMITTED_HEADER] = str(job.result.get("omitted", 0))
    return response
