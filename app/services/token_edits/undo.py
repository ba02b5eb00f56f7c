"""The history of token edits and undoing the newest (:mod:`app.services.token_edits`): a sentence's
edits, their JSON, which one can be undone, and :func:`undo_edit` (tokens and trees put back, a
split-off sentence removed again, a merged one recreated).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.models import Sentence, SentenceNote, SentenceState, TokenEdit, TreeVersion, User
from app.services import DbSession
from app.services.audit import record
from app.services.token_edits.carry import TREE_ATTRIBUTES, _carry, _store, _touched, _tree_data
from app.services.token_edits.records import (
    EditConflict,
    Rows,
    _describe,
    _last_tree_id,
    _lock,
    _snapshot,
    _words,
    _write_tokens,
    token_rows,
)
from app.services.token_edits.sentences import _remove, _room_after
from app.services.workspace import newest_trees, set_state
from app.team_models import Assignment
from parsing import tokens_edit as te


def edits_of(session: DbSession, sentence_id: int) -> list[TokenEdit]:
    """The sentence's token edits, newest first."""
    return list(
        session.scalars(
            select(TokenEdit).where(TokenEdit.sentence_id == sentence_id).order_by(TokenEdit.id.desc())
        )
    )


def edit_dict(edit: TokenEdit) -> dict[str, Any]:
    """A token edit as JSON (for the editor's Tokens menu and history)."""
    return {
        "id": edit.id,
        "operation": edit.operation,
        "params": edit.params,
        "user": edit.user.username,
        "created_at": edit.created_at.isoformat(),
        "undone": edit.undone_by_id is not None,
        "what": _describe(edit.operation, edit.params),
    }


def undoable(session: DbSession, sentence: Sentence) -> TokenEdit | None:
    """The edit :func:`undo_edit` would undo: the sentence's newest edit, unless it is an undo."""
    edits = edits_of(session, sentence.id)
    if not edits or edits[0].operation == "undo" or edits[0].undone_by_id is not None:
        return None
    if "sentences" not in edits[0].before:  # restored from a backup: what it replaced is not kept
        return None
    return edits[0]


def undo_edit(session: DbSession, sentence: Sentence, *, edit_id: int, user: User) -> TokenEdit:
    """Undo the sentence's newest token edit ``edit_id``: its tokens back, the trees it had before
    as new versions of each source (later corrections stay in the history, superseded), its
    review marks back; a split's new sentence removed again, a merged sentence put back.

    :raise LookupError: the sentence has no edit ``edit_id``.
    :raise EditConflict: it is not the newest edit, or the sentence changed in a way the undo
        cannot carry back (a source that appeared since, the split-off sentence edited since).
    """
    _lock(session, sentence)
    edit = session.get(TokenEdit, edit_id)
    if edit is None or edit.sentence_id != sentence.id:
        raise LookupError(f"sentence {sentence.id} has no token edit {edit_id}")
    if edit is not undoable(session, sentence):
        raise EditConflict(
            f"token edit {edit_id} is not the sentence's newest edit (or is an undo, or was undone): "
            "only the newest edit can be undone"
        )
    snapshot = edit.before["sentences"][0]
    newest = newest_trees(session, sentence.id)
    before_lines = {tuple(key.split("\t", 1)): tree_id for key, tree_id in snapshot["newest"].items()}
    removed = edit.before.get("removed")
    new_lines = [
        f"{kind} {name}".strip()
        for kind, name in newest
        if (kind, name) not in before_lines
        and (removed is None or f"{kind}\t{name}" not in removed["newest"])
    ]
    if edit.last_tree_id and new_lines:
        raise EditConflict(
            f"the sentence has trees made after the edit from sources it did not have "
            f"({', '.join(new_lines)}): they cannot be carried back; edit the tokens by hand"
        )
    split_off = None
    if edit.operation == "split-sentence":
        split_off = session.get(Sentence, edit.params["new_sentence_id"])
        if split_off is not None and (
            _last_tree_id(session, split_off.id) > max(edit.written, default=0)
            or edits_of(session, split_off.id)
        ):
            raise EditConflict("the sentence split off was edited since: merge the two sentences instead")
    last = _last_tree_id(session, sentence.id)
    rows_now = token_rows(session, sentence.id)
    _write_tokens(session, sentence, snapshot["tokens"], snapshot["comments"])
    written: list[int] = []
    if edit.last_tree_id:
        for _line, tree_id in sorted(before_lines.items()):
            old = session.get(TreeVersion, tree_id)
            if old is not None:
                written.append(_store(session, sentence, _tree_data(old), user, old).id)
    if split_off is not None:
        _remove(session, split_off)
    if removed is not None:
        written += _carry_back(session, sentence, newest, before_lines, rows_now, user)
        _put_back(session, sentence, removed, user)
    state = session.get(SentenceState, sentence.id)
    if state is not None or snapshot["status"] is not None:
        set_state(
            session,
            sentence,
            user=user,
            reviewed_words=snapshot["reviewed"],
            status=snapshot["status"] or "todo",
        )
    undo = TokenEdit(
        sentence_id=sentence.id,
        operation="undo",
        params={"edit_id": edit.id, "undid": edit.operation},
        before={"sentences": [_snapshot(session, sentence, snapshot["tokens"])]},
        written=written,
        last_tree_id=last if edit.last_tree_id else 0,
        user_id=user.id,
    )
    session.add(undo)
    session.flush()
    edit.undone_by_id = undo.id
    record(
        session,
        "token-undo",
        user=user,
        treebank=sentence.document.treebank,
        sentence_id=sentence.id,
        edit=edit.id,
        operation=edit.operation,
        words=sentence.n_words,
    )
    session.flush()
    return undo


def _carry_back(
    session: DbSession,
    sentence: Sentence,
    newest: dict[tuple[str, str], TreeVersion],
    before_lines: dict[Any, int],
    rows_now: Rows,
    user: User,
) -> list[int]:
    """After undoing a merge: the sources the first sentence got from the merged one (it had no
    tree of them before) keep the part of their newest tree over its own words."""
    first_words = len(_words(token_rows(session, sentence.id)))
    part = te.split_sentence(rows_now, first_words)[0]
    touched = _touched(part.words, _words(rows_now), _words(part.rows))
    written = []
    for line, tree in sorted(newest.items()):
        if line in before_lines or len(tree.heads) != len(_words(rows_now)):
            continue
        data, _ = _carry(_tree_data(tree), part.words, touched, _words(part.rows))
        written.append(_store(session, sentence, data, user, tree).id)
    return written


def _put_back(session: DbSession, sentence: Sentence, removed: dict[str, Any], user: User) -> Sentence:
    """Recreate a sentence a merge removed, right after ``sentence``: its tokens, every tree
    version (same numbers, authors and times), review state, notes and assignments."""
    from datetime import datetime

    position = _room_after(session, sentence)
    back = Sentence(
        document_id=sentence.document_id,
        position=position,
        sent_id=removed["sent_id"],
        comments=removed["comments"],
        n_words=0,
        text=removed.get("text"),
    )
    session.add(back)
    session.flush()
    _write_tokens(session, back, removed["tokens"], removed["comments"])
    ids: dict[int, int] = {}
    for tree in removed["trees"]:
        row = TreeVersion(
            sentence_id=back.id,
            kind=tree["kind"],
            name=tree["name"],
            version=tree["version"],
            user_id=tree["user_id"],
            created_at=datetime.fromisoformat(tree["created_at"]),
            based_on_id=ids.get(tree["based_on_id"]),
            **{a: tree[a] for a in TREE_ATTRIBUTES},
        )
        session.add(row)
        session.flush()
        ids[tree["id"]] = row.id
    for note in removed["notes"]:
        session.add(
            SentenceNote(
                sentence_id=back.id,
                body=note["body"],
                user_id=note["user_id"],
                created_at=datetime.fromisoformat(note["created_at"]),
            )
        )
    for assignment in removed["assignments"]:
        done = assignment["done_at"]
        session.add(
            Assignment(
                sentence_id=back.id,
                user_id=assignment["user_id"],
                blind=assignment["blind"],
                assigned_by_id=assignment["assigned_by_id"],
                done_at=datetime.fromisoformat(done) if done else None,
            )
        )
    if removed["status"] is not None or removed.get("disagreement") is not None:
        session.add(
            SentenceState(
                sentence_id=back.id,
                status=removed["status"] or "todo",
                reviewed_words=removed["reviewed"],
                disagreement=removed.get("disagreement"),
                entropy=removed.get("entropy"),
                updated_by_id=user.id,
            )
        )
    session.flush()
    return back
