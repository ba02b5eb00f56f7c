"""Who may re-tokenize a sentence (:func:`refusal`) and what the editor's Tokens menu shows
(:func:`tokens_info`), for :mod:`app.services.token_edits`.
"""

from __future__ import annotations

from typing import Any

from app.models import Sentence
from app.services import DbSession
from app.services.assignments import editing_line
from app.services.token_edits.records import token_rows
from app.services.token_edits.sentences import next_sentence
from app.services.token_edits.undo import edit_dict, undoable
from parsing.conllu_io import FORM, ID


def refusal(session: DbSession, user: Any, sentence: Sentence) -> str | None:
    """Why ``user`` may not re-tokenize ``sentence`` (None when they may)."""
    line = editing_line(session, user, sentence)
    if line.refusal is not None:
        return line.refusal
    if line.branch:
        return (
            "you correct this sentence blind, on your own version: changing its tokens changes every "
            "annotator's tree, ask a curator"
        )
    return None


def tokens_info(session: DbSession, user: Any, sentence: Sentence) -> dict[str, Any]:
    """What the editor's Tokens menu needs: the multiword tokens (``[first, last, form]``), the
    edit an undo would undo, whether a next sentence exists, and why the user may not edit
    (``refusal``, None when they may)."""
    ranges = []
    for row in token_rows(session, sentence.id):
        first, dash, last = row[ID].partition("-")
        if dash:
            ranges.append([int(first), int(last), row[FORM]])
    edit = undoable(session, sentence)
    return {
        "multiwords": ranges,
        "undo": edit_dict(edit) if edit is not None else None,
        "has_next": next_sentence(session, sentence) is not None,
        "refusal": refusal(session, user, sentence),
    }
