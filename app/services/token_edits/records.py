"""A sentence's token lines in the database and the record of a token edit
(:mod:`app.services.token_edits`): reading and writing the tokens (with ``# text``), the snapshot an
edit keeps of what it replaces, the row lock that serializes edits, the stored
:class:`~app.models.TokenEdit` with its note and ``token-edit`` audit event (``_finish``), and
:func:`superseded_up_to`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select

from app.models import Sentence, SentenceNote, SentenceState, Token, TokenEdit, TreeVersion, User
from app.services import DbSession
from app.services.audit import record
from app.services.workspace import newest_trees
from parsing import tokens_edit as te
from parsing.conllu_io import FORM, ID

TOKEN_COLUMNS = (
    Token.ident,
    Token.form,
    Token.lemma,
    Token.upos,
    Token.xpos,
    Token.feats,
    Token.head,
    Token.deprel,
    Token.deps,
    Token.misc,
)

Rows = list[list[str]]


class EditConflict(Exception):
    """The edit cannot be made in the sentence's present state (answered 409)."""


def token_rows(session: DbSession, sentence_id: int) -> Rows:
    """The sentence's CoNLL-U token lines (10 strings each), in order."""
    return [
        list(row)
        for row in session.execute(
            select(*TOKEN_COLUMNS).where(Token.sentence_id == sentence_id).order_by(Token.position)
        )
    ]


def _words(rows: Rows) -> Rows:
    return [row for row in rows if row[ID].isdigit()]


def _write_tokens(
    session: DbSession, sentence: Sentence, rows: Rows, comments: Sequence[str] | None = None
) -> None:
    """Replace the sentence's tokens by ``rows``; its word count, ``# text`` (from the tokens)
    and comments follow."""
    session.execute(delete(Token).where(Token.sentence_id == sentence.id))
    session.add_all(
        Token(
            sentence_id=sentence.id,
            position=position,
            word=int(row[ID]) if row[ID].isdigit() else None,
            ident=row[0],
            form=row[1],
            lemma=row[2],
            upos=row[3],
            xpos=row[4],
            feats=row[5],
            head=row[6],
            deprel=row[7],
            deps=row[8],
            misc=row[9],
        )
        for position, row in enumerate(rows, start=1)
    )
    text = te.surface_text(rows)
    sentence.n_words = len(_words(rows))
    sentence.text = text
    sentence.comments = te.with_comment(
        list(sentence.comments if comments is None else comments), "text", text
    )
    session.flush()
    session.expire(sentence, ["tokens"])


def _snapshot(session: DbSession, sentence: Sentence, rows: Rows) -> dict[str, Any]:
    """What an edit replaces in ``sentence`` (enough to put it back)."""
    state = session.get(SentenceState, sentence.id)
    return {
        "id": sentence.id,
        "position": sentence.position,
        "sent_id": sentence.sent_id,
        "comments": list(sentence.comments),
        "tokens": rows,
        "newest": {
            f"{kind}\t{name}": tree.id for (kind, name), tree in newest_trees(session, sentence.id).items()
        },
        "status": state.status if state else None,
        "reviewed": list(state.reviewed_words) if state else [],
    }


def _last_tree_id(session: DbSession, *sentence_ids: int) -> int:
    return int(
        session.scalar(select(func.max(TreeVersion.id)).where(TreeVersion.sentence_id.in_(sentence_ids))) or 0
    )


def superseded_up_to(session: DbSession, sentence_id: int) -> int:
    """Tree versions of the sentence with ids up to this were made for its earlier tokens."""
    return int(
        session.scalar(select(func.max(TokenEdit.last_tree_id)).where(TokenEdit.sentence_id == sentence_id))
        or 0
    )


def _lock(session: DbSession, sentence: Sentence) -> None:
    """Serialize edits of one sentence (PostgreSQL row lock; SQLite writes one at a time)."""
    session.execute(select(Sentence.id).where(Sentence.id == sentence.id).with_for_update())


def _describe(operation: str, params: dict[str, Any]) -> str:
    shown = ", ".join(f"{key} {value}" for key, value in params.items() if not key.endswith("_id"))
    return f"{operation.replace('-', ' ')} ({shown})" if shown else operation.replace("-", " ")


def _note_changes(
    session: DbSession, sentence: Sentence, user: User, what: str, changed: dict[str, list[int]]
) -> None:
    """A note listing the words whose arc the edit could not keep, per source."""
    if not any(changed.values()):
        return
    forms = [row[FORM] for row in _words(token_rows(session, sentence.id))]
    lines = "; ".join(
        f"{source}: " + ", ".join(f"{w} {forms[w - 1]}" for w in words)
        for source, words in changed.items()
        if words
    )
    session.add(
        SentenceNote(
            sentence_id=sentence.id,
            user_id=user.id,
            body=f"Token edit ({what}): arcs to check, attached by the edit: {lines}"[:5000],
        )
    )
    session.flush()


def _finish(
    session: DbSession,
    sentence: Sentence,
    user: User,
    operation: str,
    params: dict[str, Any],
    before: dict[str, Any],
    written: list[int],
    last: int,
    changed: dict[str, list[int]],
) -> TokenEdit:
    token_edit = TokenEdit(
        sentence_id=sentence.id,
        operation=operation,
        params=params,
        before=before,
        written=written,
        last_tree_id=last,
        user_id=user.id,
    )
    session.add(token_edit)
    session.flush()
    what = _describe(operation, params)
    _note_changes(session, sentence, user, what, changed)
    record(
        session,
        "token-edit",
        user=user,
        treebank=sentence.document.treebank,
        sentence_id=sentence.id,
        operation=operation,
        edit=token_edit.id,
        words=sentence.n_words,
        **{k: v for k, v in params.items() if k != "operation"},
        arcs_to_check={source: words for source, words in changed.items() if words},
    )
    return token_edit
