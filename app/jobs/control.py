"""Acting on a job from the page that started it: who may, cancelling and retrying."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from app.job_models import Job
from app.jobs import create_job, finish_job
from app.jobs.logs import log_event
from app.models import User
from app.services import DbSession


class JobStateError(Exception):
    """The job is not in a state the action applies to (HTTP 409)."""


def cancel_job(session: DbSession, job: Job, user: User) -> Job:
    """Cancel ``job`` (commits): a queued job is cancelled at once; a running one is asked to
    stop, which it does at its next progress report (its round is never registered).

    :raise JobStateError: the job already ended.
    """
    now = datetime.now(UTC)
    stopped = session.execute(update(Job).where(Job.id == job.id, Job.state == "queued")
                              .values(cancel_requested_at=now)).rowcount  # type: ignore[attr-defined]
    if stopped:
        session.commit()
        finish_job(session, job.id, "cancelled", f"by {user.username} before it started")
    else:
        asked = session.execute(update(Job).where(Job.id == job.id, Job.state == "running")
                                .values(cancel_requested_at=now, message="cancelling…")
                                ).rowcount  # type: ignore[attr-defined]
        session.commit()
        if not asked:
            session.refresh(job)
            raise JobStateError(f"job {job.id} is {job.state}: only queued or running jobs can be cancelled")
        log_event("job.cancel_requested", job=job.id, user=user.id)
    session.refresh(job)
    return job


def retry_job(session: DbSession, job: Job, user: User) -> Job:
    """A new queued job doing what the failed or cancelled ``job`` did (flushes; the caller
    commits and submits it).

    :raise JobStateError: the job did not fail and was not cancelled.
    :raise app.jobs.RoundBusy: another round is queued or running on the treebank.
    """
    if job.state not in ("failed", "cancelled"):
        raise JobStateError(f"job {job.id} is {job.state}: only failed or cancelled jobs can be retried")
    return create_job(session, kind=job.kind, user=user, treebank_id=job.treebank_id,
                      params=dict(job.params or {}), retry_of=job.id)
