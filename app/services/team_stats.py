"""A lead's statistics of a treebank (issue #30): per annotator, what they saved, how fast, how
much they changed, and how well they agree with the adjudicated trees.

Everything is read from the tree-version history (``annotation`` versions: who saved which tree
when, and which tree it was based on), so nothing extra is logged while people work:

* **sentences / words saved**: distinct sentences the user saved a version of, and their words;
* **active time**: the user's saves in time order; the time between two consecutive saves counts
  when it is at most :data:`IDLE` (10 minutes) and is credited to the sentence of the later save;
  a longer gap is a break (not counted), so the first save after a break adds no time;
* **sentences / words per hour**: sentences (words) saved over active hours;
* **median time per sentence**: over the sentences that were credited some active time;
* **edits per sentence**: on each sentence, arcs (head or label) of the user's newest version that
  differ from the tree they started from (the first tree in the ``based_on`` chain not saved by
  them: the pre-annotation, or a colleague's version), averaged over their sentences;
* **agreement with the adjudicated tree** (double annotation): the user's newest branch version
  against the sentence's adjudicated tree (the main line, which only adjudication writes on a
  doubly annotated sentence): LAS and UAS over all their words on adjudicated sentences.

:func:`annotator_stats` is the pure computation over :class:`SaveRow` and :class:`AgreementRow`;
:func:`treebank_stats` reads those rows from the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median

from sqlalchemy import select

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.services import DbSession, as_utc
from app.services.validation import differing_words
from app.team_models import Assignment

IDLE = timedelta(minutes=10)
"""A longer gap between two saves of one user is a break, not work."""


@dataclass(frozen=True)
class SaveRow:
    """One saved version: by ``user``, of ``sentence_id`` (``words`` long), at ``at``; ``changed``
    = arcs differing from the tree the user started from (None: no such tree)."""

    user: str
    sentence_id: int
    words: int
    at: datetime
    changed: int | None


@dataclass(frozen=True)
class AgreementRow:
    """A user's newest branch tree of an adjudicated sentence against the adjudicated tree:
    ``words``, words with the same head (``heads``) and the same head and label (``arcs``)."""

    user: str
    sentence_id: int
    words: int
    heads: int
    arcs: int


@dataclass(frozen=True)
class AnnotatorStats:
    """One annotator's row of the statistics page (see the module docstring); rates are None
    when no active time was counted, agreement when no adjudicated sentence of theirs exists."""

    user: str
    sentences: int
    words: int
    saves: int
    active_seconds: float
    sentences_per_hour: float | None
    words_per_hour: float | None
    median_seconds: float | None
    edits_per_sentence: float | None
    adjudicated: int
    las: float | None
    uas: float | None


def _time_per_sentence(saves: Sequence[SaveRow], idle: timedelta) -> dict[int, float]:
    """Sentence id → active seconds credited to it (gaps ≤ ``idle`` before each save)."""
    credited: dict[int, float] = {}
    ordered = sorted(saves, key=lambda row: row.at)
    for before, after in zip(ordered, ordered[1:], strict=False):
        gap = after.at - before.at
        if gap <= idle:
            credited[after.sentence_id] = credited.get(after.sentence_id, 0.0) + gap.total_seconds()
    return credited


def _one(user: str, saves: Sequence[SaveRow], agreement: Sequence[AgreementRow],
         idle: timedelta) -> AnnotatorStats:
    words_of = {row.sentence_id: row.words for row in saves}
    last: dict[int, SaveRow] = {}
    for row in sorted(saves, key=lambda row: row.at):
        last[row.sentence_id] = row
    credited = _time_per_sentence(saves, idle)
    active = sum(credited.values())
    hours = active / 3600
    edits = [row.changed for row in last.values() if row.changed is not None]
    words = sum(words_of.values())
    total = sum(row.words for row in agreement)
    return AnnotatorStats(
        user=user, sentences=len(words_of), words=words, saves=len(saves), active_seconds=active,
        sentences_per_hour=len(words_of) / hours if hours else None,
        words_per_hour=words / hours if hours else None,
        median_seconds=median(credited.values()) if credited else None,
        edits_per_sentence=sum(edits) / len(edits) if edits else None,
        adjudicated=len(agreement), las=sum(row.arcs for row in agreement) / total if total else None,
        uas=sum(row.heads for row in agreement) / total if total else None)


def annotator_stats(saves: Sequence[SaveRow], agreement: Sequence[AgreementRow] = (),
                    idle: timedelta = IDLE) -> list[AnnotatorStats]:
    """One :class:`AnnotatorStats` per user who saved (by user name), from their saves and
    their agreement rows (module docstring for the definitions)."""
    users = sorted({row.user for row in saves} | {row.user for row in agreement})
    return [_one(user, [row for row in saves if row.user == user],
                 [row for row in agreement if row.user == user], idle) for user in users]


def _start_tree(version: TreeVersion, versions: dict[int, TreeVersion], others: dict[int, TreeVersion],
                pre: dict[int, TreeVersion]) -> TreeVersion | None:
    """The tree ``version``'s author started from: back along ``based_on`` to the first tree not
    saved by them as an annotation; without a ``based_on``, the sentence's pre-annotation."""
    seen = {version.id}
    current = version
    while current.based_on_id is not None and current.based_on_id not in seen:
        seen.add(current.based_on_id)
        found = versions.get(current.based_on_id) or others.get(current.based_on_id)
        if found is None:
            return pre.get(version.sentence_id)
        if found.kind != "annotation" or found.user_id != version.user_id:
            return found
        current = found
    return pre.get(version.sentence_id)


def _changed(tree: TreeVersion, start: TreeVersion | None) -> int | None:
    if start is None or len(start.heads) != len(tree.heads):
        return None
    return len(differing_words((start.heads, start.deprels), (tree.heads, tree.deprels)))


def _agreement(session: DbSession, treebank: Treebank, versions: list[TreeVersion],
               names: dict[int, str], words: dict[int, int]) -> list[AgreementRow]:
    blind = set(session.execute(select(Assignment.sentence_id, Assignment.user_id).join(Sentence)
                                .join(Document).where(Document.treebank_id == treebank.id, Assignment.blind)))
    newest: dict[tuple[int, str], TreeVersion] = {}
    for tree in sorted(versions, key=lambda tree: tree.version):
        newest[(tree.sentence_id, tree.name)] = tree
    rows = []
    for (sentence_id, branch), tree in newest.items():
        adjudicated = newest.get((sentence_id, ""))
        user_id = next((uid for uid, name in names.items() if name == branch), None)
        if not branch or adjudicated is None or (sentence_id, user_id) not in blind:
            continue
        pairs = list(zip(tree.heads, tree.deprels, adjudicated.heads, adjudicated.deprels, strict=True))
        rows.append(AgreementRow(branch, sentence_id, words[sentence_id],
                                 heads=sum(h == h2 for h, _, h2, _ in pairs),
                                 arcs=sum(h == h2 and d == d2 for h, d, h2, d2 in pairs)))
    return rows


def treebank_stats(session: DbSession, treebank: Treebank, idle: timedelta = IDLE) -> list[AnnotatorStats]:
    """The statistics page's rows for ``treebank`` (see the module docstring)."""
    in_treebank = select(Sentence.id).join(Document).where(Document.treebank_id == treebank.id)
    words: dict[int, int] = {sid: n for sid, n in session.execute(
        select(Sentence.id, Sentence.n_words).where(Sentence.id.in_(in_treebank)))}
    versions = list(session.scalars(select(TreeVersion).where(
        TreeVersion.sentence_id.in_(in_treebank), TreeVersion.kind == "annotation")))
    by_id = {tree.id: tree for tree in versions}
    pre: dict[int, TreeVersion] = {}
    others: dict[int, TreeVersion] = {}
    for tree in session.scalars(select(TreeVersion).where(TreeVersion.sentence_id.in_(in_treebank),
                                                          TreeVersion.kind.in_(("ensemble", "gold")))
                                .order_by(TreeVersion.version)):
        others[tree.id] = tree
        if tree.kind == "ensemble" or (tree.kind == "gold" and tree.sentence_id not in pre):
            pre[tree.sentence_id] = tree
    missing = sorted({tree.based_on_id for tree in versions if tree.based_on_id is not None}
                     - set(by_id) - set(others))
    for start in range(0, len(missing), 5000):  # parser versions someone reverted to or started from
        others |= {tree.id: tree for tree in session.scalars(
            select(TreeVersion).where(TreeVersion.id.in_(missing[start:start + 5000])))}
    names: dict[int, str] = {uid: name for uid, name in session.execute(select(User.id, User.username))}
    saves = [SaveRow(names[tree.user_id], tree.sentence_id, words[tree.sentence_id], as_utc(tree.created_at),
                     _changed(tree, _start_tree(tree, by_id, others, pre))) for tree in versions]
    return annotator_stats(saves, _agreement(session, treebank, versions, names, words), idle)

