"""The annotation workspace: what the editor shows, saving corrections, history, notes.

A correction is an ``annotation`` tree version (see :mod:`app.models`); the version number
the editor started from is the optimistic lock (:class:`Conflict` when someone saved first).
The tree the editor starts from is the newest annotation, else the ensemble's, else gold.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from app.models import (
    REVIEW_STATUSES,
    Sentence,
    SentenceNote,
    SentenceState,
    Token,
    TrainingRound,
    TreeVersion,
    User,
)
from app.services import DbSession, as_utc
from app.services.trees import StaleVersionError, add_version
from app.services.validation import TreeError, allowed_labels, differing_words, non_projective, validate_tree

MAX_NOTE = 5000


class InvalidTree(ValueError):
    """The tree fails :func:`~app.services.validation.validate_tree`; ``errors`` says why."""

    def __init__(self, errors: list[TreeError]) -> None:
        super().__init__("; ".join(error.message for error in errors))
        self.errors = errors


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
        "version": tree.version, "heads": tree.heads, "deprels": tree.deprels, "scores": tree.scores,
        "user": tree.user.username, "created_at": tree.created_at.isoformat(),
        "based_on_id": tree.based_on_id,
    }


def newest_trees(session: DbSession, sentence_id: int) -> dict[tuple[str, str], TreeVersion]:
    """The newest tree of every (kind, name) of the sentence."""
    newest: dict[tuple[str, str], TreeVersion] = {}
    for tree in session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id)
                                .order_by(TreeVersion.version)):
        newest[(tree.kind, tree.name)] = tree
    return newest


def editor_data(session: DbSession, sentence: Sentence) -> dict[str, Any]:
    """Everything the editor draws: words, member/ensemble/current trees, labels, state, notes."""
    treebank = sentence.document.treebank
    words = session.execute(
        select(Token.word, Token.form, Token.lemma, Token.upos, Token.feats)
        .where(Token.sentence_id == sentence.id, Token.word.is_not(None)).order_by(Token.position)
    ).all()
    trees = newest_trees(session, sentence.id)
    annotation = trees.get(("annotation", ""))
    start = annotation or trees.get(("ensemble", "")) or trees.get(("gold", ""))
    members = sorted((tree for (kind, _), tree in trees.items() if kind == "parser"),
                     key=lambda tree: tree.name)
    n = len(words)
    current = tree_dict(start) or {"id": None, "source": "empty", "heads": [None] * n,
                                   "deprels": [None] * n, "version": 0}
    return {
        "sentence": {"id": sentence.id, "sent_id": sentence.sent_id, "text": sentence.text,
                     "n_words": n, "split": sentence.document.split, "treebank_id": treebank.id,
                     "treebank": treebank.name, "direction": treebank.direction},
        "words": [{"id": w.word, "form": w.form, "lemma": w.lemma, "upos": tag, "feats": w.feats,
                   "upos_predicted": tag != w.upos}
                  for w, tag in zip(words, _shown_tags(words, trees.get(("ensemble", ""))), strict=True)],
        "members": [tree_dict(tree) for tree in members],
        "ensemble": tree_dict(trees.get(("ensemble", ""))),
        "gold": tree_dict(trees.get(("gold", ""))),
        "current": current,
        "version": annotation.version if annotation else 0,
        "labels": allowed_labels(treebank.labels),
        "state": state_dict(session.get(SentenceState, sentence.id)),
        "notes": notes(session, sentence.id),
    }


def _shown_tags(words: Sequence[Any], ensemble: TreeVersion | None) -> list[str]:
    """Each word's UPOS, or where it has none (``_``) the tag the parsers predicted for it."""
    predicted = (ensemble.upos if ensemble is not None else None) or [None] * len(words)
    if len(predicted) != len(words):
        predicted = [None] * len(words)
    return [str(tag) if w.upos == "_" and tag else w.upos for w, tag in zip(words, predicted, strict=True)]


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
    errors = validate_tree(list(heads), list(deprels), sentence.document.treebank.labels)
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
) -> TreeVersion:
    """Store the corrected tree as the next annotation version and update the review state.

    :raise InvalidTree: the tree is not well formed or uses an unknown label.
    :raise Conflict: the newest annotation is not ``expected_version`` (nothing is stored).
    """
    if len(heads) != sentence.n_words:
        raise InvalidTree([TreeError(0, "length", f"expected {sentence.n_words} words, got {len(heads)}")])
    errors = validate_tree(list(heads), list(deprels), sentence.document.treebank.labels)
    if errors:
        raise InvalidTree(errors)
    based_on = session.get(TreeVersion, based_on_id) if based_on_id else None
    if based_on is not None and based_on.sentence_id != sentence.id:
        based_on = None
    if expected_version > 0 and (based_on is None or based_on.kind != "annotation"):
        # The caller edited on top of annotation ``expected_version`` (e.g. "Keep mine" after a
        # conflict): the new version is based on the one it overwrites, not on the parsers' tree.
        based_on = session.scalar(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence.id, TreeVersion.kind == "annotation",
            TreeVersion.version == expected_version)) or based_on
    try:
        tree = add_version(session, sentence_id=sentence.id, source="annotation", heads=list(heads),
                           deprels=list(deprels), user=user, expected_version=expected_version,
                           based_on=based_on)
    except StaleVersionError:
        theirs = newest_trees(session, sentence.id)[("annotation", "")]
        raise Conflict(tree_dict(theirs) or {}) from None
    set_state(session, sentence, user=user, reviewed_words=reviewed_words,
              status=status or "in_progress")
    return tree


def set_state(
    session: DbSession, sentence: Sentence, *, user: User, reviewed_words: Sequence[int] | None = None,
    status: str | None = None,
) -> SentenceState:
    """Update the sentence's review status and reviewed words (flushes).

    Status ``reviewed`` marks every word reviewed: whoever says so vouches for the whole tree.
    """
    if status is not None and status not in REVIEW_STATUSES:
        raise ValueError(f"status must be one of {', '.join(REVIEW_STATUSES)}")
    state = session.get(SentenceState, sentence.id) or SentenceState(sentence_id=sentence.id)
    if status == "reviewed":
        reviewed_words = range(1, sentence.n_words + 1)  # the reviewer vouches for every word
    if reviewed_words is not None:
        words = sorted({int(w) for w in reviewed_words if 1 <= int(w) <= sentence.n_words})
        state.reviewed_words = words
    if status is not None:
        state.status = status
    state.status = state.status or "todo"
    state.updated_by_id, state.updated_at = user.id, datetime.now(UTC)
    session.add(state)
    session.flush()
    return state


def conflict_diff(theirs: dict[str, Any], heads: Sequence[Any], deprels: Sequence[Any]) -> list[int]:
    """Words where the caller's tree differs from the version saved first."""
    return differing_words((theirs["heads"], theirs["deprels"]), (list(heads), list(deprels)))


def history(session: DbSession, sentence: Sentence) -> list[dict[str, Any]]:
    """Every tree version of the sentence, newest first; annotations list the arcs they changed."""
    forms = {int(word or 0): form for word, form in session.execute(select(Token.word, Token.form).where(
        Token.sentence_id == sentence.id, Token.word.is_not(None)))}
    trees = list(session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence.id)
                                 .order_by(TreeVersion.created_at, TreeVersion.id)))
    by_id = {tree.id: tree for tree in trees}
    rounds = list(session.execute(select(TrainingRound.number, TrainingRound.created_at).where(
        TrainingRound.treebank_id == sentence.document.treebank_id).order_by(TrainingRound.created_at)))
    previous: TreeVersion | None = None
    entries = []
    for tree in trees:
        entry = tree_dict(tree) or {}
        entry["author"] = author(tree, rounds)
        if tree.kind == "annotation":
            before = previous or (by_id.get(tree.based_on_id) if tree.based_on_id else None)
            origin = by_id.get(tree.based_on_id) if tree.based_on_id else None
            entry["based_on"] = f"{origin.source} v{origin.version}" if origin else None
            entry["changes"] = _changes(before, tree, forms)
            previous = tree
        entries.append(entry)
    return entries[::-1]


def author(tree: TreeVersion, rounds: Sequence[Any] = ()) -> str:
    """Who made a tree, as the history says it: the annotator, the parser or the ensemble (with
    the training round that made it: the newest of ``rounds`` ((number, created_at), oldest
    first) started before the tree), or the import."""
    if tree.kind == "annotation":
        return tree.user.username
    if tree.kind == "gold":
        return f"the import ({tree.user.username})"
    created = as_utc(tree.created_at)
    number = next((n for n, started in reversed(rounds) if as_utc(started) <= created), None)
    who = tree.name if tree.kind == "parser" else "the ensemble"
    return f"{who} (round {number})" if number is not None else who


def _changes(before: TreeVersion | None, after: TreeVersion, forms: dict[int, str]) -> list[dict[str, Any]]:
    if before is None:
        return []
    return [
        {"word": w, "form": forms.get(w, ""), "from": [before.heads[w - 1], before.deprels[w - 1]],
         "to": [after.heads[w - 1], after.deprels[w - 1]]}
        for w in differing_words((before.heads, before.deprels), (after.heads, after.deprels))
    ]


def revert(
    session: DbSession, sentence: Sentence, *, version_id: int, expected_version: int, user: User
) -> TreeVersion:
    """A new annotation version equal to an older tree of this sentence (nothing is deleted).

    :raise LookupError: no such tree of this sentence. :raise Conflict: as for saving.
    """
    target = session.get(TreeVersion, version_id)
    if target is None or target.sentence_id != sentence.id:
        raise LookupError(f"sentence {sentence.id} has no tree version {version_id}")
    try:
        return add_version(session, sentence_id=sentence.id, source="annotation", heads=target.heads,
                           deprels=target.deprels, user=user, expected_version=expected_version,
                           based_on=target)
    except StaleVersionError:
        raise Conflict(tree_dict(newest_trees(session, sentence.id)[("annotation", "")]) or {}) from None


def notes(session: DbSession, sentence_id: int) -> list[dict[str, Any]]:
    """The sentence's notes, oldest first."""
    rows = session.scalars(select(SentenceNote).where(SentenceNote.sentence_id == sentence_id)
                           .order_by(SentenceNote.created_at, SentenceNote.id))
    return [{"id": note.id, "body": note.body, "user": note.user.username,
             "created_at": note.created_at.isoformat()} for note in rows]


def add_note(session: DbSession, sentence: Sentence, *, body: str, user: User) -> SentenceNote:
    """Add a note; :raise ValueError: empty or longer than :data:`MAX_NOTE` characters."""
    text = body.strip()
    if not text:
        raise ValueError("a note cannot be empty")
    if len(text) > MAX_NOTE:
        raise ValueError(f"a note has at most {MAX_NOTE} characters")
    note = SentenceNote(sentence_id=sentence.id, body=text, user_id=user.id)
    session.add(note)
    session.flush()
    return note
