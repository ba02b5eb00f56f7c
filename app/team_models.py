"""Tables of the team model beside :mod:`app.models`: one-time account links and the audit log.

* ``account_tokens``: an invitation (``kind`` ``invite``: whoever opens the link picks a user
  name and password; with ``treebank_id`` and ``role`` the new account joins that treebank) or a
  password reset (``reset``: sets ``user_id``'s password). Only the
  SHA-256 of the token is stored; a token works once (``used_at``) and until ``expires_at``.
* ``audit_events``: the append-only event log: who (``user_id``; NULL for an unknown user
  name), what (``action``, :data:`AUDIT_ACTIONS`), on which treebank / sentence / user
  (plain ids, no foreign keys, so events outlive what they name; ``details`` keeps names),
  when. Rows are never updated or deleted: :func:`_refuse_change` stops the ORM from doing it.
  Review status changes are events too (``status``, with ``sentence_id``): their history.
* ``assignments`` (migration 0013): sentence ``sentence_id`` is handed to annotator ``user_id``
  by ``assigned_by_id``; ``blind`` (double annotation) means the annotator corrects their own
  branch of the sentence (:mod:`app.services.assignments`); ``done_at`` is when they saved it
  as reviewed (NULL: still open). At most one per (sentence, user).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    String,
    UniqueConstraint,
    event,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models import Base, _now

TOKEN_KINDS = ("invite", "reset")

AUDIT_ACTIONS = (
    "sign-in", "sign-in-failed", "sign-out", "password-change",
    "user-create", "user-invite", "user-deactivate", "user-activate", "password-reset",
    "import", "export", "job-start", "status",
    "role-add", "role-change", "role-remove", "visibility",
    "archive", "restore", "delete-document", "delete-treebank",
    "assign", "unassign", "settings", "adjudicate", "backup", "restore-backup",
    "save", "revert", "rule-apply", "rule-revert", "token-edit", "token-undo",
    "query-save", "query-delete",
)
"""Every ``audit_events.action``."""


class AccountToken(Base):
    """A one-time invitation or password-reset link (see the module docstring)."""

    __tablename__ = "account_tokens"
    __table_args__ = (CheckConstraint("kind IN ('invite', 'reset')", name="kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    """reset: whose password; invite: the account made from it, once used."""
    created_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    treebank_id: Mapped[int | None] = mapped_column(ForeignKey("treebanks.id", ondelete="CASCADE"))
    """An invitation from a treebank's members page (migration 0016): the new account joins
    this treebank with ``role``."""
    role: Mapped[str | None] = mapped_column(String(16))


class AuditEvent(Base):
    """One entry of the append-only event log (see the module docstring)."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_treebank", "treebank_id", "id"),
        Index("ix_audit_events_user", "user_id", "id"),
        Index("ix_audit_events_subject", "subject_user_id", "id"),
        Index("ix_audit_events_sentence", "sentence_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    action: Mapped[str] = mapped_column(String(32))
    treebank_id: Mapped[int | None]
    sentence_id: Mapped[int | None]
    subject_user_id: Mapped[int | None]
    """The account an administrative or role event is about."""
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


@event.listens_for(AuditEvent, "before_update")
@event.listens_for(AuditEvent, "before_delete")
def _refuse_change(_mapper: Any, _connection: Any, target: AuditEvent) -> None:
    """The log is append-only."""
    raise PermissionError(f"audit event {target.id} cannot be changed or deleted")



class Assignment(Base):
    """A sentence handed to an annotator (see the module docstring)."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("sentence_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    blind: Mapped[bool] = mapped_column(default=False, server_default=false())
    assigned_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
