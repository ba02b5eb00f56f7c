"""Tree versions: which sources a sentence has, the current tree of a source, new versions.

A *source* as written in URLs and on the command line is ``gold`` (the imported tree),
``ensemble``, ``latest`` (the newest annotation, i.e. the latest correction, or the gold tree
when nobody corrected the sentence yet) or the name of a parser.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select

from app.models import TreeVersion, User
from app.services import DbSession

RESERVED_SOURCES = ("gold", "ensemble", "latest", "annotation")


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
) -> TreeVersion:
    """Store a new version of ``source``'s tree; nothing is overwritten.

    ``expected_version`` is the version the caller edited (0 for none); when the stored
    newest version differs, :class:`StaleVersionError` is raised (optimistic locking; the
    unique constraint catches a race between this check and the flush).
    """
    if len(heads) != len(deprels) or (scores is not None and len(scores) != len(heads)):
        raise ValueError("heads, deprels and scores must have one entry per word")
    kind, name = source_filter(source)
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
        based_on_id=based_on.id if based_on else None,
    )
    session.add(tree)
    session.flush()
    return tree
