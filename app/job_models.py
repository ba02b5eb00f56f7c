"""Tables of the background jobs beside :mod:`app.models` (see :mod:`app.jobs`).

* ``jobs``: background work (a round, ...): ``state`` (``queued``/``running``/``done``/
  ``failed``/``cancelled``), ``progress`` 0..1, the last ``message``, the ``error`` of a failure,
  the ``log_tail``, the ``worker`` running it and its ``heartbeat_at``. At most one round job
  per treebank is queued or running (a partial unique index).
* ``job_workers``: one row per worker process (``flask worker``) and its last heartbeat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, DateTime, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from app.models import Base, _now

JOB_STATES = ("queued", "running", "done", "failed", "cancelled")
"""Life of a background job."""

ROUND_KINDS = ("preannotate",)
"""Job kinds that train a round: at most one of them is queued or running per treebank."""

ACTIVE_STATES = ("queued", "running")
"""Job states that hold a treebank's round (the partial unique index ``uq_jobs_active_round``)."""


def _sql_in(column: str, values: tuple[str, ...]) -> str:
    """``"state IN ('queued', 'running')"``: the SQL test of the check constraint below."""
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


class Job(Base):
    """A piece of background work and how far it got (polled by the browser)."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(_sql_in("state", JOB_STATES), name="state"),
        Index("uq_jobs_active_round", "treebank_id", unique=True,
              sqlite_where=text("kind = 'preannotate' AND state IN ('queued', 'running')"),
              postgresql_where=text("kind = 'preannotate' AND state IN ('queued', 'running')")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    treebank_id: Mapped[int | None] = mapped_column(
        ForeignKey("treebanks.id", ondelete="CASCADE"), index=True
    )
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(16), default="queued")
    progress: Mapped[float] = mapped_column(default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    worker: Mapped[str | None] = mapped_column(String(160))
    """``host:pid`` of the process running the job."""
    cancel_requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    log_tail: Mapped[str] = mapped_column(Text, default="")
    """The last progress lines (``HH:MM:SS message``), newest last."""
    retry_of_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state for ``GET /jobs/<id>``."""
        def iso(moment: datetime | None) -> str | None:
            return moment.isoformat() if moment else None

        return {
            "id": self.id, "kind": self.kind, "state": self.state, "progress": self.progress,
            "message": self.message, "error": self.error,
            "result": self.result if self.state != "failed" else None,  # older rows kept tracebacks
            "treebank_id": self.treebank_id, "log_tail": self.log_tail or "",
            "created_at": iso(self.created_at), "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at), "heartbeat_at": iso(self.heartbeat_at),
            "cancel_requested": self.cancel_requested_at is not None, "retry_of": self.retry_of_id,
        }


class JobWorker(Base):
    """A worker process (``flask worker``): who it is and when it last said it was alive."""

    __tablename__ = "job_workers"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(160), unique=True)
    """``host:pid``."""
    queue: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
