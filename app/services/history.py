"""The history of a sentence's trees: every version with who made it and what it changed, and
reverting to one of them (a new version equal to it: nothing is deleted)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import select

from app.models import ARC_SOURCES, Sentence, TreeVersion, User
from app.parser_models import TrainingRound
from app.services import DbSession, as_utc
from app.services.audit import record
from app.services.token_columns import column_changes, stored_attributes, version_columns
from app.services.token_edits import edit_dict, edits_of, superseded_up_to
from app.services.trees import StaleVersionError, add_version
from app.services.validation import differing_words
from app.services.workspace import conflict_for, set_branch_status, set_state, tree_dict, word_columns


class Superseded(ValueError):
    """A revert to a tree made for the sentence's earlier words (before a token edit)."""


def history(
    session: DbSession, sentence: Sentence, *, branches: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """Every tree version of the sentence, newest first; annotations list the arcs they changed
    (against the previous version of the same line: the main line or one annotator's branch).

    ``branches``: the annotation branches to list (None: all; the main line always). A blind
    annotator of a doubly annotated sentence sees only their own.
    """
    stored = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence.id)
                             .order_by(TreeVersion.created_at, TreeVersion.id))
    shown_lines = None if branches is None else {"", *branches}
    trees = [tree for tree in stored
             if shown_lines is None or tree.kind != "annotation" or tree.name in shown_lines]
    ensemble = max((t for t in trees if t.kind == "ensemble"), key=lambda t: t.version, default=None)
    words, _, shown = word_columns(session, sentence.id, ensemble)
    forms = dict(enumerate(words, start=1))
    by_id = {tree.id: tree for tree in trees}
    rounds = list(session.execute(select(TrainingRound.number, TrainingRound.created_at).where(
        TrainingRound.treebank_id == sentence.document.treebank_id).order_by(TrainingRound.created_at)))
    previous: dict[str, TreeVersion] = {}
    entries = []
    superseded = superseded_up_to(session, sentence.id)
    edited = {tree_id: edit for edit in edits_of(session, sentence.id) for tree_id in edit.written}
    for tree in trees:
        entry = tree_dict(tree) or {}
        entry["author"] = author(tree, rounds)
        entry["superseded"] = tree.id <= superseded or len(tree.heads) != sentence.n_words
        entry["token_edit"] = edit_dict(edited[tree.id]) if tree.id in edited else None
        if tree.kind == "annotation":
            before = previous.get(tree.name) or (by_id.get(tree.based_on_id) if tree.based_on_id else None)
            origin = by_id.get(tree.based_on_id) if tree.based_on_id else None
            entry["based_on"] = f"{origin.source} v{origin.version}" if origin else None
            entry["changes"] = _changes(before, tree, forms)
            entry["human_words"] = None if tree.provenance is None else [
                w for w, source in enumerate(tree.provenance, start=1) if source == ARC_SOURCES[0]]
            entry["column_changes"] = column_changes(  # without a tree before: from the imported
                version_columns(before, shown), version_columns(tree, shown), words)
            previous[tree.name] = tree
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
    if before is None or len(before.heads) != len(after.heads):
        return []
    return [
        {"word": w, "form": forms.get(w, ""), "from": [before.heads[w - 1], before.deprels[w - 1]],
         "to": [after.heads[w - 1], after.deprels[w - 1]]}
        for w in differing_words((before.heads, before.deprels), (after.heads, after.deprels))
    ]


def revert(
    session: DbSession, sentence: Sentence, *, version_id: int, expected_version: int, user: User,
    branch: str = "",
) -> TreeVersion:
    """A new annotation version (of the main line or ``branch``) equal to an older tree of this
    sentence (nothing is deleted). A branch reverts only to its own or a non-annotation tree.

    The review ticks follow the tree reverted to (:func:`reviewed_after_revert`): a parser's
    tree has none, so the sentence is back in progress (a branch's assignment reopens); a tree
    whose every arc is human (saved as reviewed) makes it reviewed again.

    :raise LookupError: no such tree of this sentence. :raise Conflict: as for saving.
    :raise Superseded: the tree was made for the sentence's words before a token edit.
    """
    target = session.get(TreeVersion, version_id)
    if target is None or target.sentence_id != sentence.id or (
            branch and target.kind == "annotation" and target.name != branch):
        raise LookupError(f"sentence {sentence.id} has no tree version {version_id}")
    if target.id <= superseded_up_to(session, sentence.id) or len(target.heads) != sentence.n_words:
        raise Superseded(f"{target.source} v{target.version} was made for the sentence's words before a "
                         "token edit: undo the token edit (Tokens menu) to go back to them")
    try:
        tree = add_version(session, sentence_id=sentence.id, source="annotation", heads=target.heads,
                           deprels=target.deprels, user=user, expected_version=expected_version,
                           based_on=target, provenance=target.provenance, columns=stored_attributes(target),
                           branch=branch)
    except StaleVersionError:
        raise conflict_for(session, sentence.id, branch) from None
    record(session, "revert", user=user, treebank=sentence.document.treebank, sentence_id=sentence.id,
           version=tree.version, branch=branch or None, reverted_to=f"{target.source} v{target.version}")
    reviewed = reviewed_after_revert(target, sentence.n_words)
    if branch:
        if len(reviewed) < sentence.n_words:
            set_branch_status(session, sentence, user=user, status="in_progress")
    else:
        set_state(session, sentence, user=user, reviewed_words=reviewed,
                  status="reviewed" if len(reviewed) == sentence.n_words else "in_progress")
    return tree


def reviewed_after_revert(target: TreeVersion, n: int) -> list[int]:
    """The words (1..n) still reviewed once ``target`` is the newest annotation: the arcs a
    person set or confirmed in it (its ``human`` provenance); none for a parser's or the gold
    tree, nor for an annotation version that records no provenance."""
    if target.kind != "annotation" or target.provenance is None:
        return []
    return [w for w in range(1, n + 1) if target.provenance[w - 1] == ARC_SOURCES[0]]
