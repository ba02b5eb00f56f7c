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

A corpus searched a second time is also saved on disk (:mod:`app.services.search_corpora`, in
``SEARCH_CORPORA_DIR``) under its key and fingerprint: a new process (another worker, a restart)
reads it there instead of building it, while the same fingerprint holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flask import current_app, has_app_context
from sqlalchemy import Connection, func, select

from app.models import Document, Sentence, Treebank, TreeVersion
from app.services import DbSession, search_corpora
from app.team_models import AuditEvent
from parsing.grew import Corpus

SIZE = 2
"""Corpora kept per process (about 65 MB for 110,000 words each, with the index entries of a
pattern or two: tracemalloc after a search)."""

QUIET_EVENTS = ("query-save", "query-delete")
"""Events that change no tree, token or sentence (saving a named query must not rebuild the corpus)."""

Key = tuple[int, str, str, str | None]
Fingerprint = tuple[int, int, int, int]
Built = tuple[list[int], Corpus]
"""The sentence id of each graph, and the corpus."""


@dataclass
class _Entry:
    fingerprint: Fingerprint
    built: Built
    on_disk: bool
    """Saved (or read) in the folder of :mod:`app.services.search_corpora` already."""


_lock = threading.Lock()
_cache: OrderedDict[Key, _Entry] = OrderedDict()


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
    """The corpus for (treebank, source, split): the kept one while its fingerprint holds, else the
    one saved on disk under that fingerprint, else ``build()`` (kept for next time; saved on disk
    the first time it is used again)."""
    if source == "reviewed" or "@" in source:
        return build()
    key = (treebank.id, str(treebank.created_at), source, split)
    now = fingerprint(session, treebank)
    folder = corpora_folder()
    with _lock:
        entry = _cache.get(key)
        if entry is not None and entry.fingerprint == now:
            _cache.move_to_end(key)
            save = folder is not None and not entry.on_disk
            entry.on_disk = entry.on_disk or save
        else:
            entry = None
    if entry is not None:
        if save and folder is not None:
            search_corpora.save(folder, _tag(session, key, now), entry.built)
        return entry.built
    built = search_corpora.load(folder, _tag(session, key, now)) if folder is not None else None
    entry = _Entry(now, built, True) if built is not None else _Entry(now, build(), False)
    with _lock:
        _cache[key] = entry
        _cache.move_to_end(key)
        while len(_cache) > SIZE:
            _cache.popitem(last=False)
    return entry.built


def corpora_folder() -> Path | None:
    """The app's ``SEARCH_CORPORA_DIR`` (None: corpora are not saved on disk)."""
    folder = current_app.config.get("SEARCH_CORPORA_DIR") if has_app_context() else None
    return Path(folder) if folder else None


def _tag(session: DbSession, key: Key, now: Fingerprint) -> str:
    bind = session.get_bind()
    engine = bind.engine if isinstance(bind, Connection) else bind
    database = engine.url.render_as_string(hide_password=True)
    return search_corpora.header(database, key, now)


def clear() -> None:
    """Forget every kept corpus."""
    with _lock:
        _cache.clear()
