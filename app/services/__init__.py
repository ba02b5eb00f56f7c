"""Service layer: plain functions that take a SQLAlchemy session.

They read and write through the session and may ``flush``; they never commit, never read
``request``/``g``/``current_user``. The caller (a view or a CLI command) owns the transaction.
"""

from datetime import UTC, datetime
from typing import Any, TypeAlias

from sqlalchemy.orm import Session, scoped_session

DbSession: TypeAlias = Session | scoped_session[Any]
"""What services accept: a plain session or Flask-SQLAlchemy's ``db.session``."""


def as_utc(moment: datetime) -> datetime:
    """An aware UTC datetime (SQLite gives back naive datetimes, which are stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
