"""Searched trees kept in the process between searches: paging through results, or trying one
pattern after another, reads a treebank's trees from the database once.

A corpus is keyed by (treebank id and creation time, source, split) and stored with a fingerprint
of what it was built from: the newest tree version, the number and newest id of the treebank's
sentences, and its newest audit event (but those of :data:`QUIET_EVENTS`). Trees are only ever
added (corrections are new versions), tokens change only by token edits (which add trees and
events), and imports and deletions are audited (events are never deleted, so their ids are never
reused, unlike SQLite's row ids after a deletion): any of them changes the fingerprint and the
corpus is rebuilt. ``reviewed`` (which
depends on review marks) and ``NAME@R`` (on rounds) are not cached. At most :data:`SIZE`
corpora are kept, least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from sqlalchemy import func, select

from app.models import Document, Sentence, Treebank, TreeVersion
from app.services import DbSession
from app.team_models import AuditEvent
from parsing.grew import Corpus

SIZE = 2
"""Corpora kept per process (about 50 MB for 100,000 words each)."""

QUIET_EVENTS = ("query-save", "query-delete")
"""Events that change no tree, token or sentence (saving a named query must not rebuild the corpus)."""

Key = tuple[int, str, str, str | None]
Fingerprint = tuple[int, int, int, int]
Built = tuple[list[int], Corpus]
"""The sentence id of each graph, and the corpus."""

_lock = threading.Lock()
_cache: OrderedDict[Key, tuple[Fingerprint, Built]] = OrderedDict()


def fingerprint(session: DbSession, treebank: Treebank) -> Fingerprint:
    """(newest tree version id, sentences, newest sentence id, newest audit event id) of the treebank."""
    sentences = select(Sentence.id).join(Document).where(Document.treebank_id == treebank.id)
    newest_tree = session.scalar(select(func.max(TreeVersion.id))
                                 .where(TreeVersion.sentence_id.in_(sentences)))
    count, newest = session.execute(select(func.count(Sentence.id), func.max(Sentence.id))
                                    .join(Document).where(Document.treebank_id == treebank.id)).one()
    event = session.scalar(select(func.max(AuditEvent.id)).where(AuditEvent.treebank_id == treebank.id,
                                                                 AuditEvent.action.not_in(QUIET_EVENTS)))
    return int(newest_tree or 0), int(count or 0), int(newest or 0), int(event or 0)


def cached(session: DbSession, treebank: Treebank, source: str, split: str | None,
           build: Callable[[], Built]) -> Built:
    """The corpus for (treebank, source, split): the kept one while its fingerprint holds, else
    ``build()`` (kept for next time)."""
    if source == "reviewed" or "@" in source:
        return build()
    key = (treebank.id, str(treebank.created_at), source, split)
    now = fingerprint(session, treebank)
    with _lock:
        entry = _cache.get(key)
        if entry is not None and entry[0] == now:
            _cache.move_to_end(key)
            return entry[1]
    built = build()
    with _lock:
        _cache[key] = (now, built)
        _cache.move_to_end(key)
        while len(_cache) > SIZE:
            _cache.popitem(last=False)
    return built


def clear() -> None:
    """Forget every kept corpus."""
    with _lock:
        _cache.clear()
