"""Archive, restore and delete (owner only; :mod:`app.services.permissions` action ``remove``).

* Archiving hides a treebank from everyone but its owners and admins and freezes it (no
  saves, imports or rounds) until :func:`restore`; nothing is lost.
* Deleting a treebank or a document removes its rows for good (the database cascades to
  sentences, tokens, trees, states, notes, rounds, jobs and memberships). The audit events
  stay. Deleting is refused while a job of the treebank is queued or running.

Each function flushes and records an audit event; the caller commits (and, after a treebank
is deleted, removes the model folders :func:`delete_treebank` returns).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete, func, select

from app.job_models import Job
from app.models import Document, Sentence, Treebank, User
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.audit import record


class RemovalError(ValueError):
    """The removal was refused (a wrong confirmation, a running job, nothing to restore)."""


def check_confirmation(expected: str, typed: str | None) -> None:
    """:raise RemovalError: unless ``typed`` is ``expected`` (surrounding spaces ignored)."""
    if (typed or "").strip() != expected.strip():
        raise RemovalError(f"type {expected!r} exactly to confirm")


def _refuse_while_running(session: DbSession, treebank: Treebank) -> None:
    running = session.scalar(select(func.count()).select_from(Job).where(
        Job.treebank_id == treebank.id, Job.state.in_(("queued", "running"))))
    if running:
        raise RemovalError(f"a job of {treebank.name!r} is still running: wait until it ends")


def archive(session: DbSession, treebank: Treebank, *, by: User) -> None:
    """Hide and freeze the treebank."""
    if treebank.archived_at is not None:
        raise RemovalError(f"{treebank.name!r} is already archived")
    treebank.archived_at = datetime.now(UTC)
    record(session, "archive", user=by, treebank=treebank)
    session.flush()


def restore(session: DbSession, treebank: Treebank, *, by: User) -> None:
    """Undo :func:`archive`."""
    if treebank.archived_at is None:
        raise RemovalError(f"{treebank.name!r} is not archived")
    treebank.archived_at = None
    record(session, "restore", user=by, treebank=treebank)
    session.flush()


def delete_document(session: DbSession, document: Document, *, by: User) -> int:
    """Delete one document and its sentences; returns how many sentences went."""
    treebank = document.treebank
    _refuse_while_running(session, treebank)
    sentences = session.scalar(select(func.count()).select_from(Sentence)
                               .where(Sentence.document_id == document.id)) or 0
    record(session, "delete-document", user=by, treebank=treebank, document=document.name,
           split=document.split, sentences=sentences)
    session.execute(delete(Document).where(Document.id == document.id))
    session.expire(treebank, ["documents"])
    session.flush()
    return sentences


def delete_treebank(
    session: DbSession, treebank: Treebank, *, by: User, models_dir: str | Path
) -> list[Path]:
    """Delete the treebank and everything in it; returns its rounds' model folders that lie
    inside ``models_dir`` (for the caller to remove once the deletion is committed). A folder
    recorded elsewhere, or empty, is never returned: deleting must not reach outside the models."""
    _refuse_while_running(session, treebank)
    root = Path(models_dir).resolve()
    folders = [folder for folder in (Path(recorded).resolve() for recorded in session.scalars(
        select(TrainingRound.model_dir).where(TrainingRound.treebank_id == treebank.id)) if recorded)
        if folder != root and folder.is_relative_to(root)]
    documents = session.scalar(select(func.count()).select_from(Document)
                               .where(Document.treebank_id == treebank.id))
    record(session, "delete-treebank", user=by, treebank=treebank, documents=documents)
    treebank_id = treebank.id
    session.expunge(treebank)
    session.execute(delete(Treebank).where(Treebank.id == treebank_id))
    session.flush()
    return folders
