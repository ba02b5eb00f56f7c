"""Tree versions: which sources a sentence has, the current tree of a source, new versions.

A *source* as written in URLs and on the command line is ``gold`` (the imported tree),
``ensemble``, ``latest`` (the newest annotation, i.e. the latest correction, or the gold tree
when nobody corrected the sentence yet) or the name of a parser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.models import TreeVersion, User
from app.services import DbSession
from app.services.token_columns import STORED
from parsing.members import MEMBERS

RESERVED_SOURCES = ("gold", "ensemble", "latest", "annotation")
COLUMN_ATTRIBUTES = frozenset(STORED.values())
"""The word columns a tree version may store (see :mod:`app.services.token_columns`)."""
EXPORT_SOURCES = ("gold", "latest", "ensemble", *MEMBERS)
"""The sources a treebank can be exported with: its own trees, the ensemble's, or a parser's."""


def check_export_source(source: str) -> str:
    """``source`` when it is one of :data:`EXPORT_SOURCES`.

    :raise ValueError: naming the known sources.
    """
    if source not in EXPORT_SOURCES:
        raise ValueError(f"unknown source {source[:40]!r}: export gold, latest, ensemble or one of the "
                         f"parsers ({', '.join(MEMBERS)})")
    return source


class StaleVersionError(Exception):
    """Someone saved a newer version of the tree since the caller read it."""


def source_filter(source: str) -> tuple[str, str]:
    """The (kind, name) of tree versions for ``source`` (``latest`` means ``annotation``)."""
    if source in ("latest", "annotation"):
        return "annotation", ""
    if source in ("gold", "ensemble"):
        return source, ""
    return "parser", source


def latest_versions(
    session: DbSession, sentence_ids: Sequence[int], source: str
) -> dict[int, TreeVersion]:
    """The newest version of ``source`` for each of ``sentence_ids`` that has one.

    For ``latest``, sentences without an annotation fall back to their gold tree.
    """
    kind, name = source_filter(source)
    found = _newest(session, sentence_ids, kind, name)
    if source == "latest":
        missing = [sentence_id for sentence_id in sentence_ids if sentence_id not in found]
        if missing:
            found.update(_newest(session, missing, "gold", ""))
    return found


def _newest(
    session: DbSession, sentence_ids: Sequence[int], kind: str, name: str
) -> dict[int, TreeVersion]:
    found: dict[int, TreeVersion] = {}
    for start in range(0, len(sentence_ids), 5000):
        chunk = sentence_ids[start:start + 5000]
        newest = (
            select(TreeVersion.sentence_id, func.max(TreeVersion.version).label("version"))
            .where(TreeVersion.sentence_id.in_(chunk), TreeVersion.kind == kind,
                   TreeVersion.name == name)
            .group_by(TreeVersion.sentence_id)
            .subquery()
        )
        query = select(TreeVersion).join(
            newest,
            (TreeVersion.sentence_id == newest.c.sentence_id)
            & (TreeVersion.version == newest.c.version),
        ).where(TreeVersion.kind == kind, TreeVersion.name == name)
        found.update((tree.sentence_id, tree) for tree in session.scalars(query))
    return found


def sources_of(session: DbSession, sentence_id: int) -> list[str]:
    """The sources that have a tree for this sentence (gold first, then alphabetical)."""
    pairs = session.execute(
        select(TreeVersion.kind, TreeVersion.name)
        .where(TreeVersion.sentence_id == sentence_id)
        .distinct()
    ).all()
    names = {("latest" if kind == "annotation" else name or kind) for kind, name in pairs}
    order = {"gold": 0, "latest": 1, "ensemble": 2}
    return sorted(names, key=lambda source: (order.get(source, 3), source))


def add_version(
    session: DbSession,
    *,
    sentence_id: int,
    source: str,
    heads: Sequence[int],
    deprels: Sequence[str],
    user: User,
    scores: Sequence[float] | None = None,
    expected_version: int | None = None,
    based_on: TreeVersion | None = None,
    provenance: Sequence[str] | None = None,
    columns: Mapping[str, Sequence[str] | None] | None = None,
    branch: str = "",
) -> TreeVersion:
    """Store a new version of ``source``'s tree; nothing is overwritten.

    ``expected_version`` is the version the caller edited (0 for none); when the stored
    newest version differs, :class:`StaleVersionError` is raised (optimistic locking). The
    unique constraint on (sentence, kind, name, version) catches a save that raced this one
    between the check and the flush: that is a :class:`StaleVersionError` too, after the
    transaction is rolled back (the failed insert leaves nothing of it usable; callers with an
    ``expected_version`` write the tree first, so nothing else of theirs is lost).
    ``provenance``: each arc's source (:data:`~app.models.ARC_SOURCES`), for annotations.
    ``columns`` maps ``upos``/``xpos``/``lemmas``/``feats`` to the word columns to store with
    the tree. ``branch``: for annotations, the annotator's branch (``name``; "" = the main
    line), whose versions are numbered on their own.
    """
    if len(heads) != len(deprels) or (scores is not None and len(scores) != len(heads)) or (
            provenance is not None and len(provenance) != len(heads)):
        raise ValueError("heads, deprels, scores and provenance must have one entry per word")
    stored = {name: None if values is None else list(values) for name, values in (columns or {}).items()}
    if set(stored) - COLUMN_ATTRIBUTES or any(len(v) != len(heads) for v in stored.values() if v is not None):
        raise ValueError(f"columns are {', '.join(sorted(COLUMN_ATTRIBUTES))}, one entry per word")
    kind, name = source_filter(source)
    if kind == "annotation":
        name = branch
    current = session.scalar(
        select(func.max(TreeVersion.version)).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == kind,
            TreeVersion.name == name,
        )
    ) or 0
    if expected_version is not None and expected_version != current:
        raise StaleVersionError(f"version {current} was saved after version {expected_version}")
    tree = TreeVersion(
        sentence_id=sentence_id, kind=kind, name=name, version=current + 1, heads=list(heads),
        deprels=list(deprels), scores=None if scores is None else list(scores), user=user,
        based_on_id=based_on.id if based_on else None, **stored,
        provenance=None if provenance is None else list(provenance),
    )
    session.add(tree)
    try:
        session.flush()
    except IntegrityError as error:
        if expected_version is None or not is_unique_violation(error):
            raise
        session.rollback()
        raise StaleVersionError(f"version {current + 1} was saved by someone else first") from None
    return tree


def is_unique_violation(error: IntegrityError) -> bool:
    """True when ``error`` broke a unique constraint (PostgreSQL code 23505, SQLite's message)."""
    code = getattr(error.orig, "pgcode", None)
    return code == "23505" or (code is None and "UNIQUE constraint failed" in str(error.orig))
