"""The validation report of a treebank (issue #32): the UD validator over one source and split,
run as a ``validate`` job (:mod:`app.jobs.check_tasks`); the page draws the newest finished
report (or ``?job=ID``) with its counts per test, each expandable to its sentences and words.

Reading the report needs ``read``; starting a validation needs ``curate`` (curators and owners).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.job_models import ACTIVE_STATES, Job
from app.jobs import create_job, submit
from app.jobs.check_tasks import KIND
from app.models import SPLITS, Treebank
from app.services.search import check_source, search_sources
from app.services.sources import SourceError
from app.services.treebank_checks import incidents_by_test
from app.services.ud_checks import levels_for
from app.views.access import requires

bp = Blueprint("checks", __name__, url_prefix="/treebanks")

SHOWN_PER_TEST = 500
"""Incidents listed under one test on the page (the count covers them all)."""


def _report_job(treebank: Treebank, job_id: int | None) -> Job | None:
    """The job whose report is shown: ``job_id`` (a validate job of this treebank, else 404) or
    the newest finished one."""
    if job_id is not None:
        job = db.session.get(Job, job_id)
        if job is None or job.treebank_id != treebank.id or job.kind != KIND:
            abort(404, description="this treebank has no such validation")
        return job
    return db.session.scalars(select(Job).where(Job.treebank_id == treebank.id, Job.kind == KIND,
                                                Job.state == "done").order_by(Job.id.desc()).limit(1)).first()


@bp.route("/<int:treebank_id>/validation")
@requires("read")
def page(treebank_id: int) -> str:
    """The report, the validations still running, and (for curators) the form that starts one."""
    treebank = db.get_or_404(Treebank, treebank_id)
    job = _report_job(treebank, request.args.get("job", type=int))
    report: dict[str, Any] | None = job.result if job is not None and job.state == "done" else None
    running = list(db.session.scalars(select(Job).where(Job.treebank_id == treebank.id, Job.kind == KIND,
                                                        Job.state.in_(ACTIVE_STATES)).order_by(Job.id)))
    return render_template(
        "checks/validation.html", treebank=treebank, job=job, report=report, running=running,
        grouped=incidents_by_test(report) if report else {}, shown=SHOWN_PER_TEST,
        sources=search_sources(db.session, treebank), splits=SPLITS,
        levels=levels_for(treebank.language or ""))


@bp.route("/<int:treebank_id>/validation", methods=["POST"])
@requires("curate")
def start(treebank_id: int) -> BaseResponse:
    """Queue a validation of the form's ``source`` and ``split``; open its job page."""
    treebank = db.get_or_404(Treebank, treebank_id)
    source, split = request.form.get("source") or "gold", request.form.get("split") or None
    try:
        check_source(db.session, treebank, source)
        if split is not None and split not in SPLITS:
            raise SourceError(f"split must be one of {', '.join(SPLITS)}, not {split[:20]!r}")
    except SourceError as error:
        flash(f"Not started: {error}", "error")
        return redirect(url_for("checks.page", treebank_id=treebank.id))
    job = create_job(db.session, kind=KIND, user=current_user, treebank_id=treebank.id,
                     params={"source": source, "split": split})
    db.session.commit()
    submit(current_app._get_current_object(), job.id)  # type: ignore[attr-defined]
    return redirect(url_for("treebanks.job_page", job_id=job.id))
