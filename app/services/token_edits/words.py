"""The token edits within one sentence (:mod:`app.services.token_edits`): split or merge words, add or
remove a multiword token; each carries every source's newest tree and the review marks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.models import Sentence, TokenEdit, User
from app.services import DbSession
from app.services.token_edits.carry import (
    _carried_marks,
    _carry,
    _carry_state,
    _label,
    _store,
    _touched,
    _tree_data,
)
from app.services.token_edits.records import (
    Rows,
    _finish,
    _last_tree_id,
    _lock,
    _snapshot,
    _words,
    _write_tokens,
    token_rows,
)
from app.services.workspace import newest_trees
from parsing import tokens_edit as te


def split_word(session: DbSession, sentence: Sentence, *, word: int, at: int, user: User) -> TokenEdit:
    """Split word ``word`` after character ``at`` of its form."""
    return _word_edit(
        session,
        sentence,
        user,
        "split-word",
        {"word": word, "at": at},
        lambda rows: te.split_word(rows, word, at),
    )


def merge_words(session: DbSession, sentence: Sentence, *, word: int, user: User) -> TokenEdit:
    """Merge word ``word`` with the next."""
    return _word_edit(
        session, sentence, user, "merge-words", {"word": word}, lambda rows: te.merge_words(rows, word)
    )


def add_multiword(
    session: DbSession, sentence: Sentence, *, first: int, last: int, form: str, user: User
) -> TokenEdit:
    """Make words ``first..last`` one multiword token written ``form``."""
    return _word_edit(
        session,
        sentence,
        user,
        "add-multiword",
        {"first": first, "last": last, "form": form},
        lambda rows: te.add_multiword(rows, first, last, form),
    )


def remove_multiword(session: DbSession, sentence: Sentence, *, first: int, user: User) -> TokenEdit:
    """Remove the multiword token that starts at word ``first``."""
    return _word_edit(
        session,
        sentence,
        user,
        "remove-multiword",
        {"first": first},
        lambda rows: te.remove_multiword(rows, first),
    )


def _word_edit(
    session: DbSession,
    sentence: Sentence,
    user: User,
    operation: str,
    params: dict[str, Any],
    edit: Callable[[Rows], te.Retokenized],
) -> TokenEdit:
    """An edit within one sentence: tokens, every source's newest tree, review marks, history."""
    _lock(session, sentence)
    rows = token_rows(session, sentence.id)
    result = edit(rows)
    snapshot = _snapshot(session, sentence, rows)
    newest = newest_trees(session, sentence.id)
    renumbers = any(sources != (number,) for number, sources in enumerate(result.words.sources, start=1)) or (
        len(result.words) != len(_words(rows))
    )
    last = _last_tree_id(session, sentence.id) if renumbers else 0
    old_words = _words(rows)
    _write_tokens(session, sentence, result.rows)
    touched = _touched(result.words, old_words, _words(result.rows))
    written: list[int] = []
    changed: dict[str, list[int]] = {}
    main_changed: list[int] = []
    for tree in newest.values() if renumbers else ():
        if len(tree.heads) != len(old_words):
            continue  # a stray tree of other words: nothing to carry
        data, moved = _carry(_tree_data(tree), result.words, touched, _words(result.rows))
        stored = _store(session, sentence, data, user, tree)
        written.append(stored.id)
        changed[_label(stored)] = moved
        if (tree.kind, tree.name) == ("annotation", ""):
            main_changed = moved
    _carry_state(
        session, sentence, user, _carried_marks(snapshot, result.words, main_changed), snapshot["status"]
    )
    return _finish(
        session, sentence, user, operation, params, {"sentences": [snapshot]}, written, last, changed
    )
