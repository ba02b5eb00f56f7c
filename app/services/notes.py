"""A sentence's notes: the discussion beside its tree, hidden from a blind annotator where they
would tell another annotator's choices."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select

from app.models import Sentence, SentenceNote, User
from app.services import DbSession
from app.services.assignments import blind_branches

MAX_NOTE = 5000
"""The longest note, in characters."""


def notes(session: DbSession, sentence_id: int, *, hide: Collection[str] = ()) -> list[dict[str, Any]]:
    """The sentence's notes, oldest first, except those by the users named in ``hide``."""
    rows = session.scalars(select(SentenceNote).where(SentenceNote.sentence_id == sentence_id)
                           .order_by(SentenceNote.created_at, SentenceNote.id))
    return [{"id": note.id, "body": note.body, "user": note.user.username,
             "created_at": note.created_at.isoformat()} for note in rows if note.user.username not in hide]


def hidden_authors(session: DbSession, sentence_id: int, branch: str) -> list[str]:
    """Whose work a blind annotator (``branch``; "" = not blind) must not see on the sentence:
    the other blind annotators."""
    return [name for name in blind_branches(session, sentence_id) if name != branch] if branch else []


def add_note(session: DbSession, sentence: Sentence, *, body: str, user: User) -> SentenceNote:
    """Add a note; :raise ValueError: empty or longer than :data:`MAX_NOTE` characters."""
    text = body.strip()
    if not text:
        raise ValueError("a note cannot be empty")
    if len(text) > MAX_NOTE:
        raise ValueError(f"a note has at most {MAX_NOTE} characters")
    note = SentenceNote(sentence_id=sentence.id, body=text, user_id=user.id)
    session.add(note)
    session.flush()
    return note
