"""Searched corpora saved on disk (``SEARCH_CORPORA_DIR``, default ``instance/search-corpora``;
off while testing unless set), so that a new process's first search of a source reads one file
instead of the database and building its graphs (issue #32).

A file holds one corpus of :mod:`app.services.search_cache`: it is named by a digest of the
database, the cache's key (treebank id and creation time, source, split) and the fingerprint it
was built under, and holds them too, so it is read only while the fingerprint still holds (the
cache's own rule: any new tree version, sentence, import, deletion or token edit changes it, and
the file of another state is never read), never for another database, Python or file format.
Files are written whole, then renamed (a reader never sees half of one); an unreadable one is
ignored. :data:`KEEP` files are kept, the least recently written dropped first.

The format is :mod:`marshal` (builtin types only: reading a file runs no code) of ``(header, ids,
[(features, heads, deprels, sent_id) per graph])``.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from parsing.grew import Corpus, Graph

KEEP = 8
"""Files kept in the folder (each about 6 MB for 110,000 words)."""

FORMAT = 1
"""Bumped whenever what a file holds changes meaning."""

SUFFIX = ".corpus"


def header(database: str, key: tuple[Any, ...], fingerprint: tuple[int, ...]) -> str:
    """What names a file and what it must hold to be read."""
    return repr((FORMAT, sys.version_info[:2], marshal.version, database, key, fingerprint))


def path_of(folder: Path, tag: str) -> Path:
    return folder / (hashlib.sha256(tag.encode()).hexdigest()[:40] + SUFFIX)


def load(folder: Path, tag: str) -> tuple[list[int], Corpus] | None:
    """The corpus saved under ``tag`` (a :func:`header`), or None (none, another, unreadable)."""
    try:
        data = marshal.loads(path_of(folder, tag).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 3 and data[0] == tag):
        return None
    _, ids, graphs = data
    return list(ids), Corpus([Graph(features, heads, deprels, sent_id)
                              for features, heads, deprels, sent_id in graphs])


def save(folder: Path, tag: str, built: tuple[list[int], Corpus]) -> None:
    """Write ``built`` under ``tag``, then drop the oldest files past :data:`KEEP`. A folder that
    cannot be written only means no file (the search does not fail)."""
    ids, corpus = built
    graphs = [(tuple(g.features), tuple(g.heads), tuple(g.deprels), g.sent_id) for g in corpus.graphs]
    target = path_of(folder, tag)
    partial = target.with_name(f".{target.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(marshal.dumps((tag, tuple(ids), tuple(graphs))))
        os.replace(partial, target)
        _prune(folder)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Drop the files past the :data:`KEEP` newest, and partial ones an hour old (a process that
    stopped while writing)."""
    files = sorted(folder.glob(f"*{SUFFIX}"), key=lambda path: path.stat().st_mtime, reverse=True)
    for old in files[KEEP:]:
        old.unlink(missing_ok=True)
    for partial in folder.glob(".*.tmp"):
        if partial.stat().st_mtime < time.time() - 3600:
            partial.unlink(missing_ok=True)
