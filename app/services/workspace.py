"""The annotation workspace: what the editor shows and saving corrections (notes are in
:mod:`app.services.notes`, history and revert in :mod:`app.services.history`).

A correction is an ``annotation`` tree version (see :mod:`app.models`); the version number
the editor started from is the optimistic lock (:class:`Conflict` when someone saved first).
The tree the editor starts from is the newest annotation, else the ensemble's, else gold.

A blind annotator of a doubly annotated sentence works on their own **branch** (``branch``, their
user name; see :mod:`app.services.assignments`): the editor loads their newest branch version
(else the parsers' tree), saves go to the branch with its own version numbers (a stale save is a
409 within the branch only), and "reviewed" marks their assignment done; the sentence itself is
in progress until a curator adjudicates it (:mod:`app.services.adjudication`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.models import ARC_SOURCES, REVIEW_STATUSES, Sentence, SentenceState, TreeVersion, User
from app.services import DbSession
from app.services.assignments import blind_branches, mark_done
from app.services.audit import record
from app.services.notes import hidden_authors, notes
from app.services.settings import label_inventory
from app.services.token_columns import (
    COLUMNS,
    STORED,
    Columns,
    completed_columns,
    imported_columns,
    resolve_columns,
    to_store,
    version_columns,
)
from app.services.trees import StaleVersionError, add_version
from app.services.ud_checks import tree_warnings
from app.services.validation import TreeError, differing_words, non_projective, validate_tree
from app.team_models import Assignment
from parsing.semi.partial import FLAG_P_WRONG


class InvalidTree(ValueError):
    """The tree fails :func:`~app.services.validation.validate_tree`; ``errors`` says why."""

    def __init__(self, errors: list[TreeError]) -> None:
        super().__init__("; ".join(error.message for error in errors))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class Saved:
    """What :func:`save_annotation` did: ``created`` a new version ``tree``, or found that the
    newest version ``tree`` (saved by someone else since) already is the caller's tree."""

    tree: TreeVersion
    created: bool


class Conflict(Exception):
    """Someone saved a newer annotation; ``theirs`` is it (as :func:`tree_dict`)."""

    def __init__(self, theirs: dict[str, Any]) -> None:
        super().__init__(f"version {theirs['version']} was saved by {theirs['user']} first")
        self.theirs = theirs


def tree_dict(tree: TreeVersion | None) -> dict[str, Any] | None:
    """A tree version as JSON (``None`` stays ``None``)."""
    if tree is None:
        return None
    return {
        "id": tree.id, "source": tree.source, "kind": tree.kind, "name": tree.name,
        "version": tree.version, "branch": tree.name if tree.kind == "annotation" else None,
        "heads": tree.heads, "deprels": tree.deprels, "scores": tree.scores,
        "user": tree.user.username, "created_at": tree.created_at.isoformat(),
        "based_on_id": tree.based_on_id, "provenance": tree.provenance,
    }


def newest_trees(session: DbSession, sentence_id: int) -> dict[tuple[str, str], TreeVersion]:
    """The newest tree of every (kind, name) of the sentence."""
    newest: dict[tuple[str, str], TreeVersion] = {}
    for tree in session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id)
                                .order_by(TreeVersion.version)):
        newest[(tree.kind, tree.name)] = tree
    return newest


def editor_data(session: DbSession, sentence: Sentence, *, branch: str = "") -> dict[str, Any]:
    """Everything the editor draws: words, member/ensemble/current trees (the current one with
    its word ``columns``), labels, state, notes and the UD validator's ``warnings``; on a
    ``branch``, its own newest version, the assignment's state and no other annotator's notes."""
    treebank = sentence.document.treebank
    trees = newest_trees(session, sentence.id)
    annotation = trees.get(("annotation", branch))
    start = annotation or trees.get(("ensemble", "")) or trees.get(("gold", ""))
    members = sorted((tree for (kind, _), tree in trees.items() if kind == "parser"),
                     key=lambda tree: tree.name)
    forms, imported, base = word_columns(session, sentence.id, trees.get(("ensemble", "")))
    n = len(forms)
    current = tree_dict(start) or {"id": None, "source": "empty", "heads": [None] * n,
                                   "deprels": [None] * n, "version": 0}
    current["columns"] = version_columns(start, base)
    return {
        "sentence": {"id": sentence.id, "sent_id": sentence.sent_id, "text": sentence.text,
                     "n_words": n, "split": sentence.document.split, "treebank_id": treebank.id,
                     "treebank": treebank.name, "direction": treebank.direction},
        "words": [{"id": i, "form": form, **{column: base[column][i - 1] for column in COLUMNS},
                   "upos_predicted": base["upos"][i - 1] != imported["upos"][i - 1],
                   "predicted": [c for c in COLUMNS if base[c][i - 1] != imported[c][i - 1]]}
                  for i, form in enumerate(forms, start=1)],
        "members": [tree_dict(tree) for tree in members],
        "ensemble": tree_dict(trees.get(("ensemble", ""))),
        "gold": tree_dict(trees.get(("gold", ""))),
        "current": current,
        "version": annotation.version if annotation else 0,
        "labels": label_inventory(treebank),
        "guidelines_url": treebank.guidelines_url or None,
        "branch": branch or None,
        "state": branch_state(session, sentence, branch) if branch else state_dict(
            session.get(SentenceState, sentence.id)),
        "notes": notes(session, sentence.id, hide=hidden_authors(session, sentence.id, branch)),
        "warnings": tree_warnings(session, sentence, start) if start is not None else [],
        **detector_flags(session.get(SentenceState, sentence.id), n),
    }


def detector_flags(state: SentenceState | None, n: int) -> dict[str, Any]:
    """What the editor needs to count the words the round's arc error detector flags as doubtful
    (issue #32): ``p_wrong``, the detector's score of each word's arc in the ensemble's tree
    (words 1..n; None when the round that parsed the sentence had no detector, or the scores do
    not fit the sentence, e.g. after a token edit), and ``flag_p_wrong``, the score from which a
    word is flagged (:data:`parsing.semi.partial.FLAG_P_WRONG`)."""
    scores = state.p_wrong if state is not None else None
    if not isinstance(scores, list) or len(scores) != n or not all(
            isinstance(p, int | float) and not isinstance(p, bool) for p in scores):
        scores = None
    return {"p_wrong": scores, "flag_p_wrong": FLAG_P_WRONG}


def word_columns(
    session: DbSession, sentence_id: int, ensemble: TreeVersion | None
) -> tuple[list[str], Columns, Columns]:
    """``(forms, imported, shown)``: the words' columns as imported, and as the editor shows
    them when no annotator changed them: a word imported without tags takes what the parsers
    predicted (:func:`~app.services.token_columns.completed_columns`): the ensemble version's
    UPOS, and the XPOS, lemma and FEATS of its self-tagging member
    (:func:`app.services.preannotate.parse_batch`)."""
    forms, imported = imported_columns(session, sentence_id)
    predicted = {column: getattr(ensemble, STORED[column]) for column in COLUMNS} if ensemble else {}
    return forms, imported, completed_columns(imported, predicted)


def with_columns(session: DbSession, tree: TreeVersion) -> dict[str, Any]:
    """:func:`tree_dict` plus the version's word ``columns`` as the editor shows them."""
    ensemble = newest_trees(session, tree.sentence_id).get(("ensemble", ""))
    shown = word_columns(session, tree.sentence_id, ensemble)[2]
    return {**(tree_dict(tree) or {}), "columns": version_columns(tree, shown)}


def conflict_for(session: DbSession, sentence_id: int, branch: str = "") -> Conflict:
    """The conflict with the newest annotation of the sentence's line (someone saved it first)."""
    return Conflict(with_columns(session, newest_trees(session, sentence_id)[("annotation", branch)]))


def branch_state(session: DbSession, sentence: Sentence, branch: str) -> dict[str, Any]:
    """:func:`state_dict` of one annotator's branch: ``reviewed`` (every word) once their
    assignment is done, ``in_progress`` once they saved a version, else ``todo``."""
    done = session.scalar(select(Assignment.done_at).join(User, User.id == Assignment.user_id).where(
        Assignment.sentence_id == sentence.id, User.username == branch)) is not None
    saved = done or session.scalar(select(TreeVersion.id).where(
        TreeVersion.sentence_id == sentence.id, TreeVersion.kind == "annotation",
        TreeVersion.name == branch).limit(1)) is not None
    shared = state_dict(session.get(SentenceState, sentence.id))
    return {"status": "reviewed" if done else "in_progress" if saved else "todo",
            "reviewed_words": list(range(1, sentence.n_words + 1)) if done else [],
            "disagreement": shared["disagreement"]}


def set_branch_status(
    session: DbSession, sentence: Sentence, *, user: User, status: str | None
) -> dict[str, Any]:
    """A blind annotator's status change: ``reviewed`` marks their assignment done, another
    status reopens it; the sentence goes from ``todo`` to ``in_progress`` (never to reviewed)."""
    if status is not None and status not in REVIEW_STATUSES:
        raise ValueError(f"status must be one of {', '.join(REVIEW_STATUSES)}")
    if status is not None:
        mark_done(session, sentence.id, user, status == "reviewed")
    shared = session.get(SentenceState, sentence.id)
    if shared is None or shared.status == "todo":
        set_state(session, sentence, user=user, status="in_progress")
    return branch_state(session, sentence, user.username)


def state_dict(state: SentenceState | None) -> dict[str, Any]:
    """Review status of a sentence as JSON (``todo`` with nothing reviewed when no row)."""
    if state is None:
        return {"status": "todo", "reviewed_words": [], "disagreement": None}
    return {"status": state.status, "reviewed_words": state.reviewed_words,
            "disagreement": state.disagreement}


def check_tree(
    sentence: Sentence, heads: Sequence[Any], deprels: Sequence[Any]
) -> dict[str, Any]:
    """Validation result for the editor: ``errors`` and ``non_projective`` words."""
    errors = validate_tree(list(heads), list(deprels), label_inventory(sentence.document.treebank))
    shape_ok = not any(error.code in ("no-head", "bad-head", "length") for error in errors)
    return {"errors": [error.to_dict() for error in errors],
            "non_projective": non_projective([int(h) for h in heads]) if shape_ok else []}


def save_annotation(
    session: DbSession,
    sentence: Sentence,
    *,
    heads: Sequence[Any],
    deprels: Sequence[Any],
    expected_version: int,
    user: User,
    based_on_id: int | None = None,
    reviewed_words: Sequence[int] | None = None,
    status: str | None = None,
    human_words: Sequence[Any] | None = None,
    columns: Any = None,
    branch: str = "",
) -> Saved:
    """Store the corrected tree as the next annotation version and update the review state
    (on a ``branch``: the next version of that annotator's branch, and their assignment).

    ``human_words`` (words 1..n whose arc the annotator set or confirmed) makes a partial tree:
    the version records each arc's provenance (:func:`arc_provenance`); ``None`` records none.
    ``columns`` (``{column: values}``, any of UPOS, XPOS, LEMMA, FEATS; see
    :mod:`app.services.token_columns`) replaces those word columns; the others stay as in
    annotation ``expected_version`` (or as imported).

    When someone saved a newer version that is exactly this one (the same arcs, word columns
    and provenance: e.g. the same request sent twice), nothing new is stored (that is no
    conflict: ``Saved(theirs, created=False)``) and the review state is still updated.

    :raise InvalidTree: the tree is not well formed, uses an unknown label, or a column value
        is invalid (the error names the word and the ``field``).
    :raise Conflict: the newest annotation is not ``expected_version`` and differs from this
        one (nothing is stored; the transaction may have been rolled back).
    :raise ValueError: ``human_words`` is not a list of the sentence's words.
    """
    if len(heads) != sentence.n_words:
        raise InvalidTree([TreeError(0, "length", f"expected {sentence.n_words} words, got {len(heads)}")])
    provenance = arc_provenance(sentence.n_words, human_words, reviewed=status == "reviewed")
    errors = validate_tree(list(heads), list(deprels), label_inventory(sentence.document.treebank))
    edited = session.scalar(select(TreeVersion).where(
        TreeVersion.sentence_id == sentence.id, TreeVersion.kind == "annotation", TreeVersion.name == branch,
        TreeVersion.version == expected_version)) if expected_version > 0 else None
    forms, imported = imported_columns(session, sentence.id)
    final, column_errors = resolve_columns(columns, forms=forms, imported=imported,
                                           carried=version_columns(edited, imported))
    if errors or column_errors:
        raise InvalidTree(errors + column_errors)
    based_on = session.get(TreeVersion, based_on_id) if based_on_id else None
    if based_on is not None and (based_on.sentence_id != sentence.id or based_on.name not in ("", branch)
                                 and based_on.kind == "annotation"):
        based_on = None
    if expected_version > 0 and (based_on is None or based_on.kind != "annotation"):
        # The caller edited on top of annotation ``expected_version`` (e.g. "Keep mine" after a
        # conflict): the new version is based on the one it overwrites, not on the parsers' tree.
        based_on = edited or based_on
    stored = to_store(final, imported)
    try:
        tree = add_version(session, sentence_id=sentence.id, source="annotation", heads=list(heads),
                           deprels=list(deprels), user=user, expected_version=expected_version,
                           based_on=based_on, provenance=provenance, columns=stored, branch=branch)
    except StaleVersionError:
        theirs = newest_trees(session, sentence.id)[("annotation", branch)]
        if not _same_version(theirs, heads=heads, deprels=deprels, provenance=provenance, columns=stored):
            raise conflict_for(session, sentence.id, branch) from None
        tree, created = theirs, False
    else:
        created = True
        _record_save(session, sentence, tree, user=user, branch=branch, status=status)
    if branch:
        set_branch_status(session, sentence, user=user, status=status or "in_progress")
    else:
        set_state(session, sentence, user=user, reviewed_words=reviewed_words, status=status or "in_progress")
    return Saved(tree, created)


def _record_save(session: DbSession, sentence: Sentence, tree: TreeVersion, *, user: User, branch: str,
                 status: str | None) -> None:
    """A ``save`` audit event: the version, its branch, and the arcs changed from the tree it
    was based on (else the previous version of the line, else the pre-annotation)."""
    base = session.get(TreeVersion, tree.based_on_id) if tree.based_on_id else None
    if base is None:
        trees = newest_trees(session, sentence.id)
        previous = session.scalar(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence.id, TreeVersion.kind == "annotation",
            TreeVersion.name == branch, TreeVersion.version == tree.version - 1))
        base = previous or trees.get(("ensemble", "")) or trees.get(("gold", ""))
    changed = (len(differing_words((base.heads, base.deprels), (tree.heads, tree.deprels)))
               if base is not None and len(base.heads) == len(tree.heads) else None)
    record(session, "save", user=user, treebank=sentence.document.treebank, sentence_id=sentence.id,
           version=tree.version, branch=branch or None, changed=changed, status=status)


def _same_version(
    tree: TreeVersion, *, heads: Sequence[Any], deprels: Sequence[Any], provenance: list[str] | None,
    columns: dict[str, list[str] | None],
) -> bool:
    """True when ``tree`` stores exactly these arcs, arc sources and word columns (``columns``
    as :func:`~app.services.token_columns.to_store` gives them)."""
    return (not differing_words((tree.heads, tree.deprels), (list(heads), list(deprels)))
            and tree.provenance == provenance
            and all(getattr(tree, attribute) == values for attribute, values in columns.items()))


def arc_provenance(n: int, human_words: Sequence[Any] | None, *, reviewed: bool = False) -> list[str] | None:
    """Each word's arc source (``"human"`` for ``human_words``, else ``"parser"``); all human
    when the sentence is saved as ``reviewed`` (the reviewer vouches for every arc); ``None``
    without ``human_words``.

    :raise ValueError: ``human_words`` is not a list of integers in 1..n.
    """
    if human_words is None:
        return None
    if not isinstance(human_words, list | tuple) or not all(
            isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= n for w in human_words):
        raise ValueError(f"human_words must be a list of word numbers 1..{n}")
    human = set(range(1, n + 1)) if reviewed else set(human_words)
    return [ARC_SOURCES[0] if w in human else ARC_SOURCES[1] for w in range(1, n + 1)]


def set_state(
    session: DbSession, sentence: Sentence, *, user: User, reviewed_words: Sequence[int] | None = None,
    status: str | None = None,
) -> SentenceState:
    """Update the sentence's review status and reviewed words (flushes).

    Status ``reviewed`` marks every word reviewed: whoever says so vouches for the whole tree.
    A change of status is an audit event (``status``): the sentence's status history. The
    sentence's (non-blind) assignments are done exactly while it is reviewed.

    :raise ValueError: an unknown status, or ``reviewed`` on a doubly annotated sentence that
        has no adjudicated tree yet.
    """
    if status is not None and status not in REVIEW_STATUSES:
        raise ValueError(f"status must be one of {', '.join(REVIEW_STATUSES)}")
    adjudicated = ("annotation", "") in newest_trees(session, sentence.id)
    if status == "reviewed" and not adjudicated and blind_branches(session, sentence.id):
        raise ValueError("this sentence is doubly annotated: adjudicate it before marking it reviewed")
    state = _state_row(session, sentence.id)
    if status == "reviewed":
        reviewed_words = range(1, sentence.n_words + 1)  # the reviewer vouches for every word
    if reviewed_words is not None:
        words = sorted({int(w) for w in reviewed_words if 1 <= int(w) <= sentence.n_words})
        state.reviewed_words = words
    previous = state.status or "todo"
    if status is not None:
        state.status = status
    state.status = state.status or "todo"
    if state.status != previous:
        record(session, "status", user=user, treebank=sentence.document.treebank,
               sentence_id=sentence.id, previous=previous, to=state.status)
        mark_done(session, sentence.id, None, state.status == "reviewed")
    state.updated_by_id, state.updated_at = user.id, datetime.now(UTC)
    session.add(state)
    session.flush()
    return state


def _state_row(session: DbSession, sentence_id: int) -> SentenceState:
    """The sentence's state row, added first when it has none: by an INSERT that does nothing
    when another request added it meanwhile (``ON CONFLICT DO NOTHING``, on SQLite and
    PostgreSQL), so two first status changes at once both find one row (issue #31)."""
    state = session.get(SentenceState, sentence_id)
    if state is not None:
        return state
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(insert(SentenceState).values(sentence_id=sentence_id, status="todo")
                    .on_conflict_do_nothing(index_elements=["sentence_id"]))
    state = session.get(SentenceState, sentence_id, populate_existing=True)
    assert state is not None
    return state


def conflict_diff(theirs: dict[str, Any], heads: Sequence[Any], deprels: Sequence[Any]) -> list[int]:
    """Words where the caller's tree differs from the version saved first."""
    return differing_words((theirs["heads"], theirs["deprels"]), (list(heads), list(deprels)))
