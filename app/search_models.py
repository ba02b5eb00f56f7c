"""Named search queries of a treebank (issue #32, Arborator's "constructicon"): migration 0016.

``saved_queries``: a Grew-match request ``pattern`` saved under ``name`` (unique per treebank) by
``created_by_id``; curators and owners save and delete them, anyone who reads the treebank runs
them (:mod:`app.services.saved_queries`). Deleting the treebank deletes its queries.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models import Base, _now

QUERY_NAME_LENGTH = 120
QUERY_PATTERN_LENGTH = 4000


class SavedQuery(Base):
    """One named query of a treebank."""

    __tablename__ = "saved_queries"
    __table_args__ = (UniqueConstraint("treebank_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    treebank_id: Mapped[int] = mapped_column(ForeignKey("treebanks.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(QUERY_NAME_LENGTH))
    pattern: Mapped[str] = mapped_column(Text)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
