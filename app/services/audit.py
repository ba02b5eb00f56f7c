"""The append-only event log (:class:`app.team_models.AuditEvent`): write with :func:`record`,
read a treebank's, a user's or a sentence's events with :func:`events`; :func:`readable_details`
and :func:`sentence_names` say them in words for the audit pages (no Python dicts, no internal ids).

:func:`record` only adds a row in the caller's transaction (it flushes, never commits), so an
event is stored exactly when the change it describes is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import aliased

from app.models import Document, Sentence, Treebank, User
from app.services import DbSession
from app.team_models import AUDIT_ACTIONS, AuditEvent

EVENTS_PAGE = 200
"""Events shown per page of an audit log."""


def record(
    session: DbSession, action: str, *, user: User | None, treebank: Treebank | None = None,
    sentence_id: int | None = None, subject: User | None = None, **details: Any,
) -> AuditEvent:
    """Append one event (flushes). ``details`` must be JSON-able; the treebank's and the
    subject's names are kept in them so the event still reads well after a deletion."""
    if action not in AUDIT_ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    if treebank is not None:
        details.setdefault("treebank", treebank.name)
    if subject is not None:
        details.setdefault("subject", subject.username)
    event = AuditEvent(action=action, user_id=user.id if user is not None else None,
                       treebank_id=treebank.id if treebank is not None else None,
                       sentence_id=sentence_id, subject_user_id=subject.id if subject else None,
                       details=details)
    session.add(event)
    session.flush()
    return event


@dataclass(frozen=True)
class EventRow:
    """One event as the audit pages show it."""

    id: int
    created_at: datetime
    actor: str
    action: str
    treebank_id: int | None
    sentence_id: int | None
    subject: str | None
    details: dict[str, Any]


def events(
    session: DbSession, *, treebank_id: int | None = None, user_id: int | None = None,
    sentence_id: int | None = None, before: int | None = None, limit: int = EVENTS_PAGE,
) -> list[EventRow]:
    """Newest first: the events of a treebank, of a sentence, or by or about a user
    (``user_id`` matches the actor and the subject); ``before`` pages on by event id."""
    actor, subject = aliased(User), aliased(User)
    query = (select(AuditEvent, actor.username, subject.username)
             .outerjoin(actor, actor.id == AuditEvent.user_id)
             .outerjoin(subject, subject.id == AuditEvent.subject_user_id)
             .order_by(AuditEvent.id.desc()).limit(limit))
    if treebank_id is not None:
        query = query.where(AuditEvent.treebank_id == treebank_id)
    if sentence_id is not None:
        query = query.where(AuditEvent.sentence_id == sentence_id)
    if user_id is not None:
        query = query.where(or_(AuditEvent.user_id == user_id, AuditEvent.subject_user_id == user_id))
    if before is not None:
        query = query.where(AuditEvent.id < before)
    return [EventRow(event.id, event.created_at, actor_name or "—", event.action, event.treebank_id,
                     event.sentence_id, subject_name, dict(event.details or {}))
            for event, actor_name, subject_name in session.execute(query)]


def status_history(session: DbSession, sentence_id: int) -> list[dict[str, Any]]:
    """The sentence's review status changes, oldest first (``from``, ``to``, ``user``, ``at``)."""
    rows = events(session, sentence_id=sentence_id, limit=10_000)
    return [{"from": row.details.get("previous"), "to": row.details.get("to"), "user": row.actor,
             "at": row.created_at.isoformat()} for row in reversed(rows) if row.action == "status"]


FIELD_NAMES = {
    "agreeing_arcs": "arcs agreeing with", "blind": "double annotation", "by_link": "by link",
    "admin": "site admin", "changed": "arcs changed", "words": "words", "username": "user name",
    "from_version": "from version",
}
"""How :func:`readable_details` names a detail (others: the key with spaces)."""
HIDDEN_DETAILS = ("treebank", "subject", "first_ids")
"""Details shown elsewhere on the row (the treebank, the subject, the sentence links)."""


def _value(value: Any) -> str:
    """A detail's value in words: ``—`` for none, yes/no, ``name count`` pairs, lists joined."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key} {_value(item)}" for key, item in sorted(value.items())) or "—"
    if isinstance(value, list | tuple):
        return ", ".join(_value(item) for item in value) or "—"
    return str(value).replace("in_progress", "in progress")


def _name(key: str) -> str:
    return FIELD_NAMES.get(key, key.replace("_", " "))


def readable_details(details: dict[str, Any]) -> list[tuple[str, str]]:
    """``(name, value)`` pairs of an event's details in words, empty values left out; a change
    (``previous`` with ``to`` or ``role``, or ``previous`` and ``settings`` dicts: the fields that
    changed) reads ``before → after``."""
    shown = {key: value for key, value in details.items()
             if key not in HIDDEN_DETAILS and value is not None and value not in ("", [], {})}
    items: list[tuple[str, str]] = []
    before, after = shown.pop("previous", None), shown.pop("settings", None)
    if isinstance(before, dict) and isinstance(after, dict):
        items += [(_name(key), f"{_value(before.get(key))} → {_value(value)}")
                  for key, value in after.items() if before.get(key) != value]
    elif "to" in shown:
        items.append(("status", f"{_value(before)} → {_value(shown.pop('to'))}"))
    elif isinstance(before, str) and "role" in shown:
        items.append(("role", f"{before} → {_value(shown.pop('role'))}"))
    else:
        rest = {"previous": before, "settings": after}
        shown |= {key: value for key, value in rest.items() if value is not None}
    return items + [(_name(key), _value(value)) for key, value in sorted(shown.items())]


def sentence_names(session: DbSession, rows: list[EventRow]) -> dict[int, str]:
    """Sentence id → its name on the audit page (``sent_id``, else ``document #position``) for
    the sentences the events name (their ``sentence_id`` and an assignment's ``first_ids``);
    a deleted sentence has no name."""
    ids = {row.sentence_id for row in rows if row.sentence_id is not None}
    ids |= {int(i) for row in rows for i in row.details.get("first_ids") or [] if isinstance(i, int)}
    names: dict[int, str] = {}
    listed = sorted(ids)
    for start in range(0, len(listed), 5000):
        found = session.execute(select(Sentence.id, Sentence.sent_id, Sentence.position, Document.name)
                                .join(Document).where(Sentence.id.in_(listed[start:start + 5000])))
        names |= {sid: sent_id or f"{document} #{position}" for sid, sent_id, position, document in found}
    return names
