"""Assignment of sentences to annotators, and which tree line a user edits.

An owner hands sentences to annotators (:func:`assign`): a batch (the first N unassigned
sentences of the queue, or explicit ids) goes to one annotator, or is spread round-robin over
several. With double annotation (the treebank's ``annotators_per_sentence`` k ≥ 2) each sentence
goes to k different annotators, *blind*: each corrects their own branch of the sentence (the
``annotation`` versions named after them, see :mod:`app.models`) and does not see the others'.

:func:`editing_line` says which line a user's save, revert or status change goes to: their
branch (a blind assignee), else the main line, which :func:`app.services.permissions.line_refusal`
may refuse (the treebank's ``assigned_only``, or a doubly annotated sentence that only
adjudication writes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError

from app.models import Document, Sentence, SentenceState, Treebank, User
from app.services import DbSession
from app.services.audit import record
from app.services.permissions import can, line_refusal
from app.team_models import Assignment

MAX_ANNOTATORS_PER_SENTENCE = 5
MAX_BATCH = 10_000


class AssignmentError(ValueError):
    """A refused assignment; ``field`` names the form field at fault."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Line:
    """Where a user's writes to a sentence go: ``branch`` ("" = the main line), whether the
    sentence is doubly annotated (``double``), and ``refusal`` (None when they may write)."""

    branch: str
    double: bool
    refusal: str | None


def branch_name(user: User) -> str:
    """The ``name`` of ``user``'s annotation branch (their user name, which never changes)."""
    return user.username


def sentence_assignments(session: DbSession, sentence_id: int) -> list[Assignment]:
    """The sentence's assignments, oldest first."""
    return list(session.scalars(select(Assignment).where(Assignment.sentence_id == sentence_id)
                                .order_by(Assignment.id)))


def editing_line(session: DbSession, user: Any, sentence: Sentence) -> Line:
    """Which line ``user`` writes on ``sentence`` (see the module docstring)."""
    mine = sentence_assignments(session, sentence.id)
    double = any(a.blind for a in mine)
    own = next((a for a in mine if a.user_id == getattr(user, "id", None)), None)
    if own is not None and own.blind:
        return Line(branch_name(user), True, None)
    refusal = line_refusal(user, sentence.document.treebank, assigned=own is not None, double=double)
    return Line("", double, refusal)


def blind_branches(session: DbSession, sentence_id: int) -> list[str]:
    """Branch names of the sentence's blind assignees (their user names), in assignment order."""
    return list(session.scalars(select(User.username).join(Assignment, Assignment.user_id == User.id)
                                .where(Assignment.sentence_id == sentence_id, Assignment.blind)
                                .order_by(Assignment.id)))


def mark_done(session: DbSession, sentence_id: int, user: User | None, done: bool) -> None:
    """Set (or clear) ``done_at`` of ``user``'s assignment of the sentence; ``user`` None: every
    non-blind assignment of it (the sentence itself was reviewed or reopened)."""
    query = select(Assignment).where(Assignment.sentence_id == sentence_id)
    query = query.where(Assignment.user_id == user.id) if user is not None else query.where(~Assignment.blind)
    for assignment in session.scalars(query):
        if done and assignment.done_at is None:
            assignment.done_at = datetime.now(UTC)
        elif not done:
            assignment.done_at = None
    session.flush()


def _annotators(session: DbSession, treebank: Treebank, names: Sequence[str]) -> list[User]:
    users = []
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        user = session.scalar(select(User).where(User.username == name))
        if user is None or not can(user, "read", treebank):
            raise AssignmentError(f"{name!r} is not a member of {treebank.name}", "annotators")
        if not can(user, "annotate", treebank):
            raise AssignmentError(f"{name} may not annotate {treebank.name} (role: viewer)", "annotators")
        users.append(user)
    if not users:
        raise AssignmentError("choose at least one annotator", "annotators")
    return users


def assign(
    session: DbSession, treebank: Treebank, sentence_ids: Sequence[int], annotator_names: Sequence[str],
    *, by: User,
) -> tuple[list[Assignment], int]:
    """Hand ``sentence_ids`` (in that order) to the annotators, round-robin; with double
    annotation each sentence to ``annotators_per_sentence`` different annotators, blind.
    Sentences already assigned are left as they are. Returns the new assignments and how many
    sentences were skipped. One ``assign`` audit event per annotator.

    :raise AssignmentError: an unknown or non-annotating user, too few annotators for k, an id
        that is not a sentence of this treebank, a batch over :data:`MAX_BATCH`, or a race with
        another assignment of the same sentence (the caller rolls back).
    """
    users = _annotators(session, treebank, annotator_names)
    k = treebank.annotators_per_sentence
    if len(users) < k:
        raise AssignmentError(f"double annotation needs {k} annotators per sentence: choose at least {k}",
                              "annotators")
    ids = list(dict.fromkeys(int(i) for i in sentence_ids))
    if len(ids) > MAX_BATCH:
        raise AssignmentError(f"at most {MAX_BATCH} sentences at once", "sentences")
    found = set(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Sentence.id.in_(ids)))) if ids else set()
    if missing := [i for i in ids if i not in found]:
        raise AssignmentError(f"not sentences of {treebank.name}: {', '.join(map(str, missing[:10]))}",
                              "sentences")
    taken = set(session.scalars(select(Assignment.sentence_id).where(Assignment.sentence_id.in_(ids))))
    fresh = [i for i in ids if i not in taken]
    made: list[Assignment] = []
    per_user: dict[str, list[int]] = {}
    for n, sentence_id in enumerate(fresh):
        for j in range(k):
            user = users[(n * k + j) % len(users)]
            made.append(Assignment(sentence_id=sentence_id, user_id=user.id, blind=k > 1,
                                   assigned_by_id=by.id))
            per_user.setdefault(user.username, []).append(sentence_id)
    session.add_all(made)
    try:
        session.flush()
    except IntegrityError:  # someone assigned some of them at the same moment (the unique constraint)
        raise AssignmentError("some of these sentences were assigned at the same moment: try again",
                              "sentences") from None
    for user in users:
        if user.username in per_user:
            ids_of = per_user[user.username]
            record(session, "assign", user=by, treebank=treebank, subject=user, sentences=len(ids_of),
                   first_ids=ids_of[:20], blind=k > 1)
    return made, len(ids) - len(fresh)


def unassign_open(session: DbSession, treebank: Treebank, user: User, *, by: User) -> int:
    """Take back ``user``'s open (not done) assignments on ``treebank``; their trees stay."""
    rows = list(session.scalars(select(Assignment).join(Sentence).join(Document).where(
        Document.treebank_id == treebank.id, Assignment.user_id == user.id, Assignment.done_at.is_(None))))
    for row in rows:
        session.delete(row)
    if rows:
        record(session, "unassign", user=by, treebank=treebank, subject=user, sentences=len(rows))
    session.flush()
    return len(rows)


@dataclass(frozen=True)
class Workload:
    """One annotator's assignments on a treebank: ``open`` and ``done`` counts (``blind``: of
    them, double-annotation ones)."""

    username: str
    user_id: int
    open: int
    done: int
    blind: int


def workloads(session: DbSession, treebank: Treebank) -> list[Workload]:
    """Who has what on ``treebank``, by user name."""
    rows = session.execute(
        select(User.username, User.id, func.count(Assignment.id), func.count(Assignment.done_at),
               func.sum(case((Assignment.blind, 1), else_=0)))
        .join(Assignment, Assignment.user_id == User.id).join(Sentence).join(Document)
        .where(Document.treebank_id == treebank.id).group_by(User.username, User.id).order_by(User.username))
    return [Workload(name, uid, total - done, done, int(blind or 0))
            for name, uid, total, done, blind in rows]


@dataclass(frozen=True)
class AssignedSentence:
    """One sentence in an annotator's list on the assignments page: its ``id`` (for the editor
    link), ``name`` (its ``sent_id``, else document and position) and ``status``: ``done`` (the
    assignment is), else the sentence's review status (``todo``, ``in_progress``, ``reviewed``)."""

    id: int
    name: str
    status: str
    blind: bool


def assigned_sentences(session: DbSession, treebank: Treebank) -> dict[int, list[AssignedSentence]]:
    """User id → the sentences assigned to them on ``treebank``, in document order."""
    rows = session.execute(
        select(Assignment.user_id, Sentence.id, Sentence.sent_id, Sentence.position, Document.name,
               Assignment.done_at, Assignment.blind, SentenceState.status)
        .join(Sentence, Sentence.id == Assignment.sentence_id).join(Document)
        .outerjoin(SentenceState, SentenceState.sentence_id == Sentence.id)
        .where(Document.treebank_id == treebank.id).order_by(Document.position, Sentence.position))
    found: dict[int, list[AssignedSentence]] = {}
    for user_id, sid, sent_id, position, document, done_at, blind, status in rows:
        name = sent_id or f"{document} #{position}"
        found.setdefault(user_id, []).append(
            AssignedSentence(sid, name, "done" if done_at is not None else status or "todo", bool(blind)))
    return found


def assigned_ids(session: DbSession, treebank_id: int, user_id: int, *, open_only: bool = True) -> list[int]:
    """Ids of the sentences assigned to ``user_id`` on the treebank (only open ones by default)."""
    query = (select(Assignment.sentence_id).join(Sentence).join(Document)
             .where(Document.treebank_id == treebank_id, Assignment.user_id == user_id))
    if open_only:
        query = query.where(Assignment.done_at.is_(None))
    return list(session.scalars(query))


def assignees(session: DbSession, sentence_ids: Sequence[int]) -> dict[int, list[str]]:
    """Sentence id → the user names it is assigned to (for the queue)."""
    found: dict[int, list[str]] = {}
    for start in range(0, len(sentence_ids), 5000):
        rows = session.execute(select(Assignment.sentence_id, User.username)
                               .join(User, User.id == Assignment.user_id)
                               .where(Assignment.sentence_id.in_(sentence_ids[start:start + 5000]))
                               .order_by(Assignment.id))
        for sentence_id, name in rows:
            found.setdefault(sentence_id, []).append(name)
    return found


def update_settings(session: DbSession, treebank: Treebank, *, assigned_only: bool, per_sentence: int,
                    by: User) -> None:
    """Set ``assigned_only`` and ``annotators_per_sentence`` (1..:data:`MAX_ANNOTATORS_PER_SENTENCE`;
    applies to later assignments). One ``settings`` audit event when something changed."""
    if not 1 <= per_sentence <= MAX_ANNOTATORS_PER_SENTENCE:
        raise AssignmentError(f"annotators per sentence must be 1 to {MAX_ANNOTATORS_PER_SENTENCE}",
                              "annotators_per_sentence")
    before = {"assigned_only": treebank.assigned_only,
              "annotators_per_sentence": treebank.annotators_per_sentence}
    after: dict[str, Any] = {"assigned_only": assigned_only, "annotators_per_sentence": per_sentence}
    if before != after:
        treebank.assigned_only, treebank.annotators_per_sentence = assigned_only, per_sentence
        record(session, "settings", user=by, treebank=treebank, previous=before, settings=after)
    session.flush()
