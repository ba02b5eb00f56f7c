"""Splitting a sentence in two and merging it with the next one (:mod:`app.services.token_edits`):
the new or removed sentence's place in its document, ``sent_id``, trees, review state and
assignments.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update

from app.models import Document, Sentence, SentenceNote, SentenceState, TokenEdit, TreeVersion, User
from app.services import DbSession
from app.services.token_edits.carry import (
    TREE_ATTRIBUTES,
    _carried_marks,
    _carry,
    _carry_state,
    _copy,
    _join,
    _label,
    _store,
    _touched,
    _tree_data,
    _tree_for,
)
from app.services.token_edits.records import (
    Rows,
    _finish,
    _last_tree_id,
    _lock,
    _note_changes,
    _snapshot,
    _words,
    _write_tokens,
    token_rows,
)
from app.services.workspace import newest_trees
from app.team_models import Assignment
from parsing import tokens_edit as te


def _room_after(session: DbSession, sentence: Sentence) -> int:
    """A free position right after ``sentence`` in its document (later sentences move up one
    when it is taken; in two steps, so the unique (document, position) holds after each)."""
    wanted = sentence.position + 1
    taken = session.scalar(
        select(Sentence.id).where(Sentence.document_id == sentence.document_id, Sentence.position == wanted)
    )
    if taken is not None:
        later = (Sentence.document_id == sentence.document_id) & (Sentence.position >= wanted)
        session.execute(
            update(Sentence)
            .where(later)
            .values(position=-Sentence.position - 1)
            .execution_options(synchronize_session=False)
        )
        session.execute(
            update(Sentence)
            .where((Sentence.document_id == sentence.document_id) & (Sentence.position < 0))
            .values(position=-Sentence.position)
            .execution_options(synchronize_session=False)
        )
        session.expire_all()
    return wanted


def _fresh_sent_id(session: DbSession, sentence: Sentence) -> str | None:
    """``<sent_id>-2`` (or -3, ...): a sent_id no sentence of the treebank has."""
    if not sentence.sent_id:
        return None
    used = set(
        session.scalars(
            select(Sentence.sent_id)
            .join(Document)
            .where(
                Document.treebank_id == sentence.document.treebank_id,
                Sentence.sent_id.like(f"{sentence.sent_id}-%"),
            )
        )
    )
    number = 2
    while f"{sentence.sent_id}-{number}" in used:
        number += 1
    return f"{sentence.sent_id}-{number}"


def split_sentence(session: DbSession, sentence: Sentence, *, after: int, user: User) -> TokenEdit:
    """Cut the sentence after word ``after``: the rest becomes a new sentence just after it
    (its trees, review marks and assignments follow)."""
    _lock(session, sentence)
    rows = token_rows(session, sentence.id)
    first, second = te.split_sentence(rows, after)
    snapshot = _snapshot(session, sentence, rows)
    newest = newest_trees(session, sentence.id)
    last = _last_tree_id(session, sentence.id)
    old_words = _words(rows)
    position = _room_after(session, sentence)
    sent_id = _fresh_sent_id(session, sentence)
    new = Sentence(
        document_id=sentence.document_id,
        position=position,
        sent_id=sent_id,
        comments=[f"# sent_id = {sent_id}"] if sent_id else [],
        n_words=second.n_words,
        text="",
    )
    session.add(new)
    session.flush()
    _write_tokens(session, sentence, first.rows)
    _write_tokens(session, new, second.rows)
    written: list[int] = []
    changed: list[dict[str, list[int]]] = [{}, {}]
    for index, (part, result) in enumerate(((sentence, first), (new, second))):
        touched = _touched(result.words, old_words, _words(result.rows))
        part_changed: list[int] = []
        for tree in newest.values():
            if len(tree.heads) != len(old_words):
                continue
            data, moved = _carry(_tree_data(tree), result.words, touched, _words(result.rows))
            stored = _store(session, part, data, user, tree)
            written.append(stored.id)
            changed[index][_label(stored)] = moved
            if (tree.kind, tree.name) == ("annotation", ""):
                part_changed = moved
        _carry_state(
            session, part, user, _carried_marks(snapshot, result.words, part_changed), snapshot["status"]
        )
    for assignment in session.scalars(select(Assignment).where(Assignment.sentence_id == sentence.id)).all():
        session.add(
            Assignment(
                sentence_id=new.id,
                user_id=assignment.user_id,
                blind=assignment.blind,
                assigned_by_id=assignment.assigned_by_id,
                done_at=assignment.done_at,
            )
        )
    session.flush()
    params = {"after": after, "new_sentence_id": new.id, "new_sent_id": sent_id}
    _note_changes(
        session, new, user, f"split off {sentence.sent_id or sentence.id} after word {after}", changed[1]
    )
    return _finish(
        session,
        sentence,
        user,
        "split-sentence",
        params,
        {"sentences": [snapshot]},
        written,
        last,
        changed[0],
    )


def _remove(session: DbSession, sentence: Sentence) -> None:
    """Delete ``sentence`` (its tokens, trees, state, notes, assignments and edits go with it, by
    the database's cascade) and forget the rows of it the session holds."""
    session.flush()
    gone = sentence.id
    session.execute(delete(Sentence).where(Sentence.id == gone))
    for row in list(session.identity_map.values()):
        if row is sentence or getattr(row, "sentence_id", None) == gone:
            session.expunge(row)


def next_sentence(session: DbSession, sentence: Sentence) -> Sentence | None:
    """The sentence after ``sentence`` in its document (None for the last)."""
    return session.scalar(
        select(Sentence)
        .where(Sentence.document_id == sentence.document_id, Sentence.position > sentence.position)
        .order_by(Sentence.position)
        .limit(1)
    )


def merge_sentence(session: DbSession, sentence: Sentence, *, user: User) -> TokenEdit:
    """Merge ``sentence`` with the next sentence of its document, which is removed (everything of
    it is kept in the edit, for :func:`undo_edit`).

    :raise TokenEditError: ``sentence`` is the last of its document.
    """
    following = next_sentence(session, sentence)
    if following is None:
        raise te.TokenEditError(
            "sentence",
            f"sentence {sentence.sent_id or sentence.id} is the last of its "
            "document: there is no next sentence to merge it with",
        )
    _lock(session, sentence)
    _lock(session, following)
    rows, rows_next = token_rows(session, sentence.id), token_rows(session, following.id)
    merged = te.merge_sentences(rows, rows_next)
    snapshot, removed = _snapshot(session, sentence, rows), _whole(session, following, rows_next)
    last = _last_tree_id(session, sentence.id, following.id)
    newest, newest_next = newest_trees(session, sentence.id), newest_trees(session, following.id)
    words, words_next = _words(rows), _words(rows_next)
    _write_tokens(session, sentence, merged.rows)
    touched = _touched(merged.words, words + words_next, _words(merged.rows))
    written: list[int] = []
    changed: dict[str, list[int]] = {}
    main_changed: list[int] = []
    for line in sorted(set(newest) | set(newest_next)):
        data = _join(
            _tree_for(newest, line, len(words)),
            _tree_for(newest_next, line, len(words_next)),
            (words, words_next),
        )
        carried, moved = _carry(data, merged.words, touched, _words(merged.rows))
        stored = _store(session, sentence, carried, user, newest.get(line))
        written.append(stored.id)
        changed[_label(stored)] = moved
        if line == ("annotation", ""):
            main_changed = moved
    marks = {*snapshot["reviewed"], *(w + len(words) for w in removed["reviewed"])}
    both = (
        snapshot["status"]
        if snapshot["status"] == removed["status"]
        else (
            "in_progress"
            if "in_progress" in (snapshot["status"], removed["status"]) or marks
            else snapshot["status"]
        )
    )
    _carry_state(session, sentence, user, {w for w in marks if w not in main_changed}, both)
    _remove(session, following)  # after the new versions: SQLite would give them the removed trees' ids
    params = {"merged_sent_id": removed["sent_id"], "merged_sentence_id": removed["id"]}
    return _finish(
        session,
        sentence,
        user,
        "merge-sentence",
        params,
        {"sentences": [snapshot], "removed": removed},
        written,
        last,
        changed,
    )


def _whole(session: DbSession, sentence: Sentence, rows: Rows) -> dict[str, Any]:
    """All of a sentence a merge removes: its tokens, every tree version, state, notes, assignments."""
    whole = _snapshot(session, sentence, rows)
    whole["text"] = sentence.text
    whole["trees"] = [
        {
            "id": t.id,
            "kind": t.kind,
            "name": t.name,
            "version": t.version,
            "user_id": t.user_id,
            "created_at": t.created_at.isoformat(),
            "based_on_id": t.based_on_id,
            **{a: _copy(getattr(t, a)) for a in TREE_ATTRIBUTES},
        }
        for t in session.scalars(
            select(TreeVersion).where(TreeVersion.sentence_id == sentence.id).order_by(TreeVersion.id)
        )
    ]
    whole["notes"] = [
        {"body": n.body, "user_id": n.user_id, "created_at": n.created_at.isoformat()}
        for n in session.scalars(
            select(SentenceNote).where(SentenceNote.sentence_id == sentence.id).order_by(SentenceNote.id)
        )
    ]
    whole["assignments"] = [
        {
            "user_id": a.user_id,
            "blind": a.blind,
            "assigned_by_id": a.assigned_by_id,
            "done_at": a.done_at.isoformat() if a.done_at else None,
        }
        for a in session.scalars(select(Assignment).where(Assignment.sentence_id == sentence.id))
    ]
    state = session.get(SentenceState, sentence.id)
    whole["disagreement"] = state.disagreement if state else None
    whole["entropy"] = state.entropy if state else None
    return whole
