"""Back up a whole treebank as one JSON-lines file (:func:`backup_lines`); restore it with
:mod:`app.services.restore`.

The format (``format`` 1): UTF-8, one JSON object per line, each with a ``type``:

=============  ================================================================================
type           fields
=============  ================================================================================
``backup``     first line: ``format``, ``treebank`` (name, language, direction, labels,
               visibility, assigned_only, annotators_per_sentence, created_at, created_by,
               archived_at)
``membership`` user, role, created_at
``document``   ref, position, name, split, imported_at, imported_by
``sentence``   ref, document (ref), position, sent_id, text, comments, n_words, ``tokens``: one
               list per CoNLL-U line: ident, form, lemma, upos, xpos, feats, head, deprel, deps,
               misc, word
``tree``       ref, sentence, kind, name, version, heads, deprels, scores, upos, provenance,
               xpos, lemmas, feats, based_on (ref or null), user, created_at
``state``      sentence, status, reviewed_words, disagreement, entropy, updated_at, updated_by
``note``       sentence, body, user, created_at
``assignment`` sentence, user, blind, assigned_by, created_at, done_at
``round``      every column of a training round but its ids (held_out_ids and changed_ids as
               sentence refs; ``model_dir`` as it was: model files are not in the backup)
``parser``     the treebank's external parsers (uploads and plugins; their trees are ``tree``
               records): label, command, url, timeout_s, filename, sentences, user, updated_at
``token_edit`` the sentences' token edits (:mod:`app.services.token_edits`): ref, sentence,
               operation, params (without ids of this instance), user, created_at, last_tree (the
               ref of the newest tree it superseded, or null), written (tree refs), undone_by
               (a token_edit ref or null). What an edit replaced is not kept: a restored edit
               still marks the trees it superseded, but cannot be undone
``query``      the treebank's named search queries (:mod:`app.services.saved_queries`): name,
               pattern, created_by, created_at
``event``      the treebank's audit events: action, user, subject, sentence (ref or null),
               details, created_at
=============  ================================================================================

Users are named, never numbered (``user``, ``created_by``, ...; null for none). Rows are
numbered by ``ref``: 1, 2, ... in document/sentence order (documents, sentences) or in the order
they were made (trees), and point at each other by ref, so a backup of a restored treebank is
the same file, line for line, as the backup it was restored from (but the backup and restore
events themselves). Times are ISO 8601 in UTC. Jobs and model files are not backed up.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.models import (
    Document,
    Membership,
    Sentence,
    SentenceNote,
    SentenceState,
    Token,
    TokenEdit,
    Treebank,
    TreeVersion,
    User,
)
from app.parser_models import ExternalParser, TrainingRound
from app.search_models import SavedQuery
from app.services import DbSession, as_utc
from app.team_models import Assignment, AuditEvent

FORMAT = 1
TOKEN_FIELDS = ("ident", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc", "word")
HEADER_FIELDS = ("name", "language", "direction", "labels", "visibility", "assigned_only",
                 "annotators_per_sentence")
"""Treebank columns the header copies as they are (beside ``created_at``, ``archived_at``, ``created_by``)."""
SETTINGS_FIELDS: dict[str, Any] = {"extra_labels": [], "extra_feats": [], "guidelines_url": ""}
"""The settings page's columns (migration 0016) and their value in a backup made before them."""
SENTENCE_LISTS = ("held_out_ids", "changed_ids")
"""Columns of a round that list sentence ids (written as refs)."""


@dataclass(frozen=True)
class Spec:
    """How one record type maps to its table: ``fields`` copied as they are, ``times`` (ISO
    8601), ``users`` (record field → user id column, written as the user's name) and
    ``optional_users`` (those of them that may be null)."""

    model: Any
    fields: tuple[str, ...]
    times: tuple[str, ...] = ("created_at",)
    users: Mapping[str, str] = field(default_factory=dict)
    optional_users: tuple[str, ...] = ()


SPECS: dict[str, Spec] = {
    "membership": Spec(Membership, ("role",), users={"user": "user_id"}),
    "document": Spec(Document, ("position", "name", "split"), ("imported_at",),
                     {"imported_by": "imported_by_id"}),
    "sentence": Spec(Sentence, ("position", "sent_id", "text", "comments", "n_words"), ()),
    "tree": Spec(TreeVersion, ("kind", "name", "version", "heads", "deprels", "scores", "upos", "provenance",
                               "xpos", "lemmas", "feats"), users={"user": "user_id"}),
    "state": Spec(SentenceState, ("status", "reviewed_words", "disagreement", "entropy"), ("updated_at",),
                  {"updated_by": "updated_by_id"}, ("updated_by",)),
    "note": Spec(SentenceNote, ("body",), users={"user": "user_id"}),
    "assignment": Spec(Assignment, ("blind",), ("created_at", "done_at"),
                       {"user": "user_id", "assigned_by": "assigned_by_id"}),
    "round": Spec(TrainingRound, ("number", "parsers", "tags", "ensemble", "weights", "dev_uas",
                                  "train_sentences", "dev_sentences", "model_dir", "gold_sentences",
                                  "corrected_sentences", "automatic_sentences", "annotated_tokens",
                                  "self_training", "warm", "evaluation", "scores", "compared_sentences",
                                  "changed_sentences", "checksums"),
                  ("created_at", "started_at", "finished_at"), {"user": "user_id"}),
    "parser": Spec(ExternalParser, ("label", "command", "url", "timeout_s", "filename", "sentences"),
                   ("updated_at",), {"user": "user_id"}),
    "token_edit": Spec(TokenEdit, ("operation",), users={"user": "user_id"}),
    "query": Spec(SavedQuery, ("name", "pattern"), users={"created_by": "created_by_id"},
                  optional_users=("created_by",)),
    "event": Spec(AuditEvent, ("action", "details"), users={"user": "user_id", "subject": "subject_user_id"},
                  optional_users=("user", "subject")),
}
"""Every record type but the header, in the order a backup writes them."""


def when(moment: datetime | None) -> str | None:
    """A time as the backup writes it (ISO 8601, UTC)."""
    return as_utc(moment).isoformat() if moment is not None else None


def _line(record_type: str, row: Any, names: Mapping[int, str], **refs: Any) -> str:
    """One record: the ``SPECS`` columns of ``row`` (users by name) and the ``refs``."""
    spec = SPECS[record_type]
    fields = {name: getattr(row, name) for name in spec.fields}
    fields |= {name: when(getattr(row, name)) for name in spec.times}
    fields |= {name: names.get(getattr(row, column)) for name, column in spec.users.items()}
    return json.dumps({"type": record_type, **fields, **refs}, ensure_ascii=False, sort_keys=True) + "\n"


def backup_lines(session: DbSession, treebank: Treebank) -> Iterator[str]:
    """The backup of ``treebank``, line by line (see the module docstring)."""
    names: dict[int, str] = {uid: name for uid, name in session.execute(select(User.id, User.username))}
    header = {name: getattr(treebank, name) for name in (*HEADER_FIELDS, *SETTINGS_FIELDS)}
    header |= {"created_at": when(treebank.created_at), "archived_at": when(treebank.archived_at),
               "created_by": names[treebank.created_by_id]}
    yield json.dumps({"type": "backup", "format": FORMAT, "treebank": header}, ensure_ascii=False,
                     sort_keys=True) + "\n"
    memberships = session.scalars(select(Membership).where(Membership.treebank_id == treebank.id))
    for member in sorted(memberships, key=lambda m: names[m.user_id]):
        yield _line("membership", member, names)
    documents = list(session.scalars(select(Document).where(Document.treebank_id == treebank.id)
                                     .order_by(Document.position)))
    document_ref = {document.id: ref for ref, document in enumerate(documents, start=1)}
    for document in documents:
        yield _line("document", document, names, ref=document_ref[document.id])
    sentences = list(session.scalars(select(Sentence).join(Document)
                                     .where(Document.treebank_id == treebank.id)
                                     .order_by(Document.position, Sentence.position)))
    sentence_ref = {sentence.id: ref for ref, sentence in enumerate(sentences, start=1)}
    yield from _sentences(session, sentences, sentence_ref, document_ref, names)
    trees = list(_of_sentences(session, TreeVersion, list(sentence_ref)))
    tree_ref = {tree.id: ref for ref, tree in enumerate(trees, start=1)}
    for tree in trees:
        yield _line("tree", tree, names, ref=tree_ref[tree.id], sentence=sentence_ref[tree.sentence_id],
                    based_on=tree_ref.get(tree.based_on_id) if tree.based_on_id is not None else None)
    for record_type in ("state", "note", "assignment"):
        for row in _of_sentences(session, SPECS[record_type].model, list(sentence_ref)):
            yield _line(record_type, row, names, sentence=sentence_ref[row.sentence_id])
    for training in session.scalars(select(TrainingRound).where(TrainingRound.treebank_id == treebank.id)
                                    .order_by(TrainingRound.number)):
        lists = {name: getattr(training, name) for name in SENTENCE_LISTS}
        yield _line("round", training, names, **{name: None if ids is None else
                                                 [sentence_ref[i] for i in ids if i in sentence_ref]
                                                 for name, ids in lists.items()})
    for parser in session.scalars(select(ExternalParser).where(ExternalParser.treebank_id == treebank.id)
                                  .order_by(ExternalParser.label)):
        yield _line("parser", parser, names)
    yield from _token_edits(session, list(sentence_ref), sentence_ref, tree_ref, names)
    for query in session.scalars(select(SavedQuery).where(SavedQuery.treebank_id == treebank.id)
                                 .order_by(SavedQuery.name)):
        yield _line("query", query, names)
    for event in session.scalars(select(AuditEvent).where(AuditEvent.treebank_id == treebank.id)
                                 .order_by(AuditEvent.id)):
        yield _line("event", event, names, sentence=sentence_ref.get(event.sentence_id or 0))


LOCAL_PARAMS = ("new_sentence_id", "merged_sentence_id", "edit_id")
"""Token edit parameters that are ids of this instance (left out of a backup)."""


def _token_edits(session: DbSession, ids: list[int], sentence_ref: dict[int, int], tree_ref: dict[int, int],
                 names: Mapping[int, str]) -> Iterator[str]:
    edits = list(_of_sentences(session, TokenEdit, ids))
    edit_ref = {edit.id: ref for ref, edit in enumerate(edits, start=1)}
    tree_ids = sorted(tree_ref)
    for edit in edits:
        older = tree_ids[:bisect_right(tree_ids, edit.last_tree_id)] if edit.last_tree_id else []
        yield _line("token_edit", edit, names, ref=edit_ref[edit.id], sentence=sentence_ref[edit.sentence_id],
                    params={k: v for k, v in edit.params.items() if k not in LOCAL_PARAMS},
                    last_tree=tree_ref[older[-1]] if older else None,
                    written=[tree_ref[t] for t in edit.written if t in tree_ref],
                    undone_by=edit_ref.get(edit.undone_by_id or 0))


def _of_sentences(session: DbSession, model: Any, ids: list[int]) -> Iterator[Any]:
    """Rows of ``model`` whose ``sentence_id`` is in ``ids`` (5000 per query), by primary key."""
    rows: list[Any] = []
    for start in range(0, len(ids), 5000):
        rows.extend(session.scalars(select(model).where(model.sentence_id.in_(ids[start:start + 5000]))))
    key = model.__mapper__.primary_key[0].key
    yield from sorted(rows, key=lambda row: getattr(row, key))


def _sentences(session: DbSession, sentences: list[Sentence], sentence_ref: dict[int, int],
               document_ref: dict[int, int], names: Mapping[int, str]) -> Iterator[str]:
    for start in range(0, len(sentences), 2000):
        chunk = sentences[start:start + 2000]
        tokens: dict[int, list[list[Any]]] = {}
        for token in session.scalars(select(Token).where(Token.sentence_id.in_([s.id for s in chunk]))
                                     .order_by(Token.sentence_id, Token.position)):
            tokens.setdefault(token.sentence_id, []).append([getattr(token, name) for name in TOKEN_FIELDS])
        for sentence in chunk:
            yield _line("sentence", sentence, names, ref=sentence_ref[sentence.id],
                        document=document_ref[sentence.document_id], tokens=tokens.get(sentence.id, []))
