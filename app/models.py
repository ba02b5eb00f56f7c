"""The database schema (SQLAlchemy 2 typed models).

How a treebank is stored::

    users ─┐ (who made every row below)
    treebanks ▸ documents ▸ sentences ▸ tokens
                                      ▸ tree_versions

* ``treebanks``: a named collection with a language, a writing ``direction`` (``ltr``/``rtl``,
  detected from the script of the forms on the first import) and its ``labels`` (every
  DEPREL seen, a sorted JSON list).
* ``documents``: one imported file (or a pool of raw sentences) with its ``split``: ``train``,
  ``dev``, ``test`` or ``pool`` (unannotated sentences waiting for parsers and annotators).
* ``sentences``: ``position`` within the document, ``sent_id`` and ``text`` (copied from the
  comments for search and display) and ``comments``: every comment line exactly as written.
* ``tokens``: every CoNLL-U line of a sentence, every column as the raw string, in file
  order (``position``). Multiword ranges (``1-2``) and empty nodes (``3.1``) are rows too;
  ``word`` is the 1-based word index for integer IDs and NULL otherwise. These rows are the
  imported text itself, so exporting them gives back the file byte for byte.
* ``tree_versions``: the trees. One row per (sentence, source, version), where the source is
  ``kind`` (``gold`` = the imported tree, ``parser``, ``ensemble``, ``annotation``) plus a
  ``name`` (the parser's name; empty otherwise). ``heads``/``deprels`` are JSON lists over the
  words 1..n (``heads[i-1]`` is the head of word ``i``, 0 = ROOT); ``scores`` optionally holds
  one confidence per arc, aligned the same way; an ``annotation`` row also keeps the UPOS,
  XPOS, LEMMA and FEATS columns its annotator changed (``upos``, ``xpos``, ``lemmas``,
  ``feats``; NULL = the imported tokens' column). Rows are never updated: a correction is a new
  ``annotation`` row with ``version`` = previous + 1, so the unique constraint on
  (sentence, kind, name, version) is the optimistic lock (two annotators saving on top of the
  same version collide) and the rows are the history; ``based_on_id`` records which tree a
  version was made from (a revert is a new version based on an old one).

The annotation workspace adds:

* ``sentence_states``: one row per sentence someone worked on or a parser pre-annotated: its
  review ``status`` (``todo``/``in_progress``/``reviewed``), the words marked reviewed
  (``reviewed_words``, a JSON list of word indices), the ensemble's ``disagreement`` (mean
  ``1 - vote share`` from the last pre-annotation; times the words, the expected number of
  wrong heads) and ``entropy`` (summed head-vote entropy): the queue's orders.
* ``sentence_notes``: comments on a sentence, by whom and when.
* ``training_rounds`` and ``external_parsers``: the treebank's parsers, in :mod:`app.parser_models`.
* ``jobs`` and ``job_workers``: background work and the processes running it, in
  :mod:`app.job_models`.

The team model (migration 0009) adds ``memberships`` (a user's role on a treebank), the
treebank's ``visibility`` and ``archived_at``, ``users.active``, and in :mod:`app.team_models`
one-time account links, the append-only audit log and (migration 0013) the ``assignments`` of
sentences to annotators, with the treebank's ``assigned_only`` and ``annotators_per_sentence``.
Migration 0016 adds the settings page's ``extra_labels``, ``extra_feats`` and ``guidelines_url``
(:mod:`app.services.settings`).

Double annotation keeps each assigned annotator's trees on their own **branch**: ``annotation``
versions whose ``name`` is the annotator's user name (numbered 1, 2, ... per branch, so the unique
constraint is each branch's optimistic lock). The main line (``name`` empty) is the sentence's
tree for training and export; on a doubly annotated sentence only adjudication writes it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask_login import UserMixin
from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from werkzeug.security import check_password_hash, generate_password_hash

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

SPLITS = ("train", "dev", "test", "pool")
"""Document splits; ``pool`` holds unannotated sentences."""

TREE_KINDS = ("gold", "parser", "ensemble", "annotation")
"""Where a tree version comes from."""

REVIEW_STATUSES = ("todo", "in_progress", "reviewed")
ARC_SOURCES = ("human", "parser")
"""Provenance of an annotation's arc (:attr:`TreeVersion.provenance`)."""
"""Review status of a sentence."""


ROLES = ("viewer", "annotator", "curator", "owner")
"""Roles on a treebank, weakest first (:mod:`app.services.permissions` says what each may do)."""

VISIBILITIES = ("private", "public")
"""Who may read a treebank: its members only, or every signed-in user."""


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base with stable constraint names for Alembic."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(UserMixin, Base):
    """An account; ``is_admin`` may manage users and do anything; a deactivated account
    (``active`` false) cannot sign in and its open sessions end.

    ``session_epoch`` is part of the id Flask-Login keeps in the session and the remember-me
    cookie (``"<id>:<epoch>"``, see :meth:`get_id`): :meth:`revoke_sessions` (on signing out and
    on every new password) increments it, so every cookie issued before stops working.
    """

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(default=False)
    active: Mapped[bool] = mapped_column(default=True, server_default=true())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    session_epoch: Mapped[int] = mapped_column(default=0, server_default="0")

    def get_id(self) -> str:
        """The id Flask-Login stores in cookies: ``"<id>:<session epoch>"``."""
        return f"{self.id}:{self.session_epoch or 0}"

    def revoke_sessions(self) -> None:
        """Invalidate every session and remember-me cookie issued so far (the caller commits)."""
        self.session_epoch = (self.session_epoch or 0) + 1

    @property
    def is_active(self) -> bool:
        """Flask-Login refuses to sign in inactive users."""
        return bool(self.active)

    def set_password(self, password: str) -> None:
        """Store a salted hash of ``password`` and revoke the sessions signed in with the old one."""
        self.password_hash = generate_password_hash(password)
        self.revoke_sessions()

    def check_password(self, password: str) -> bool:
        """True when ``password`` matches the stored hash."""
        return check_password_hash(self.password_hash, password)


class Treebank(Base):
    """A named collection of documents in one language.

    ``visibility`` (:data:`VISIBILITIES`) and the ``memberships`` say who may do what; an
    archived treebank (``archived_at`` set) is hidden and frozen until its owner restores it.
    """

    __tablename__ = "treebanks"
    __table_args__ = (CheckConstraint("direction IN ('ltr', 'rtl')", name="direction"),
                      CheckConstraint("visibility IN ('private', 'public')", name="visibility"))

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    language: Mapped[str] = mapped_column(String(32), default="")
    direction: Mapped[str] = mapped_column(String(3), default="ltr")
    labels: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    created_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    visibility: Mapped[str] = mapped_column(String(8), default="private", server_default="private")
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    assigned_only: Mapped[bool] = mapped_column(default=False, server_default=false())
    """Annotators correct only the sentences assigned to them (curators and owners any)."""
    annotators_per_sentence: Mapped[int] = mapped_column(default=1, server_default="1")
    """k ≥ 2: double annotation (each sentence handed to k annotators, blind to each other)."""
    extra_labels: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")
    """Relations a curator added on the settings page (migration 0016), beside UD's universal
    ones, the validator's subtypes for the language and the imported ``labels``."""
    extra_feats: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")
    """``Feature=Value`` pairs a curator added (offered by the editor beside the language's)."""
    guidelines_url: Mapped[str] = mapped_column(String(2000), default="", server_default="")
    """The annotation guidelines, linked from the editor ("" = none)."""

    created_by: Mapped[User] = relationship()
    documents: Mapped[list[Document]] = relationship(
        back_populates="treebank", order_by="Document.position", cascade="all, delete-orphan"
    )
    memberships: Mapped[list[Membership]] = relationship(
        back_populates="treebank", cascade="all, delete-orphan", passive_deletes=True
    )


class Membership(Base):
    """A user's role (:data:`ROLES`) on a treebank; at most one per (treebank, user)."""

    __tablename__ = "memberships"
    __table_args__ = (
        CheckConstraint("role IN ('viewer', 'annotator', 'curator', 'owner')", name="role"),
    )

    treebank_id: Mapped[int] = mapped_column(
        ForeignKey("treebanks.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

    treebank: Mapped[Treebank] = relationship(back_populates="memberships")
    user: Mapped[User] = relationship()


class Document(Base):
    """One imported file (or pool of raw sentences) of a treebank, in one split."""

    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("treebank_id", "position"),
        CheckConstraint("split IN ('train', 'dev', 'test', 'pool')", name="split"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    treebank_id: Mapped[int] = mapped_column(ForeignKey("treebanks.id", ondelete="CASCADE"))
    position: Mapped[int]
    name: Mapped[str] = mapped_column(String(255))
    split: Mapped[str] = mapped_column(String(8))
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    imported_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))

    treebank: Mapped[Treebank] = relationship(back_populates="documents")
    imported_by: Mapped[User] = relationship()


class Sentence(Base):
    """A sentence: its comment lines and its place in the document."""

    __tablename__ = "sentences"
    __table_args__ = (UniqueConstraint("document_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    position: Mapped[int]
    sent_id: Mapped[str | None] = mapped_column(String(255))
    text: Mapped[str | None] = mapped_column(Text)
    comments: Mapped[list[Any]] = mapped_column(JSON, default=list)
    n_words: Mapped[int]

    document: Mapped[Document] = relationship()
    tokens: Mapped[list[Token]] = relationship(order_by="Token.position", viewonly=True)


class Token(Base):
    """One CoNLL-U line of a sentence, every column as the raw string."""

    __tablename__ = "tokens"
    __table_args__ = (
        UniqueConstraint("sentence_id", "position"),
        Index("ix_tokens_form", "form"),
        Index("ix_tokens_lemma", "lemma"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    position: Mapped[int]
    word: Mapped[int | None]
    ident: Mapped[str] = mapped_column(String(32))
    form: Mapped[str] = mapped_column(Text)
    lemma: Mapped[str] = mapped_column(Text)
    upos: Mapped[str] = mapped_column(Text)
    xpos: Mapped[str] = mapped_column(Text)
    feats: Mapped[str] = mapped_column(Text)
    head: Mapped[str] = mapped_column(Text)
    deprel: Mapped[str] = mapped_column(Text)
    deps: Mapped[str] = mapped_column(Text)
    misc: Mapped[str] = mapped_column(Text)


class TreeVersion(Base):
    """One immutable tree of a sentence from one source (see the module docstring)."""

    __tablename__ = "tree_versions"
    __table_args__ = (
        UniqueConstraint("sentence_id", "kind", "name", "version"),
        CheckConstraint("kind IN ('gold', 'parser', 'ensemble', 'annotation')", name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(120), default="")
    version: Mapped[int] = mapped_column(default=1)
    heads: Mapped[list[Any]] = mapped_column(JSON)
    deprels: Mapped[list[Any]] = mapped_column(JSON)
    scores: Mapped[list[Any] | None] = mapped_column(JSON)
    upos: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    """The UPOS tags (words 1..n) the parsers used when they tagged the sentence themselves
    (predicted tags); ``None`` when they parsed with the sentence's own UPOS column. On an
    ``annotation`` version: the UPOS the annotator set (see ``xpos``)."""
    provenance: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    """Annotations only (migration 0007): each word's arc source, ``"human"`` (set or confirmed by
    the annotator) or ``"parser"`` (filled in by the ensemble around the human arcs: a partial
    tree); ``None`` when the whole tree was saved as the annotator's (older versions too)."""
    xpos: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    """Annotation versions (migration 0008): the XPOS (``lemmas``, ``feats``: LEMMA, FEATS)
    of words 1..n when some word's value differs from the imported token's; ``None`` = the
    imported column (:mod:`app.services.token_columns`)."""
    lemmas: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    feats: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    based_on_id: Mapped[int | None] = mapped_column(
        ForeignKey("tree_versions.id", ondelete="SET NULL"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

    user: Mapped[User] = relationship()

    @property
    def source(self) -> str:
        """The source as written in URLs and on the command line (see ``services.trees``)."""
        return self.name if self.kind == "parser" else self.kind


class SentenceState(Base):
    """Review status, reviewed words and parser disagreement of one sentence."""

    __tablename__ = "sentence_states"
    __table_args__ = (
        CheckConstraint("status IN ('todo', 'in_progress', 'reviewed')", name="status"),
    )

    sentence_id: Mapped[int] = mapped_column(
        ForeignKey("sentences.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[str] = mapped_column(String(16), default="todo", index=True)
    reviewed_words: Mapped[list[Any]] = mapped_column(JSON, default=list)
    disagreement: Mapped[float | None] = mapped_column(index=True)
    entropy: Mapped[float | None]
    """Sum over the words of the entropy (bits) of the members' weighted head votes."""
    suspicion: Mapped[float | None] = mapped_column(index=True)
    """The arc error detector's expected number of wrong arcs in the ensemble's tree (the sum of
    its words' ``p_wrong``), when the round that parsed it has a detector (:mod:`parsing.detect`)."""
    p_wrong: Mapped[list[Any] | None] = mapped_column(JSON)
    """The detector's probability that each word's arc in the ensemble's tree is wrong (words 1..n)."""
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class SentenceNote(Base):
    """A comment on a sentence."""

    __tablename__ = "sentence_notes"

    id: Mapped[int] = mapped_column(primary_key=True)
    sentence_id: Mapped[int] = mapped_column(
        ForeignKey("sentences.id", ondelete="CASCADE"), index=True
    )
    body: Mapped[str] = mapped_column(Text)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

    user: Mapped[User] = relationship()


TOKEN_OPERATIONS = ("split-word", "merge-words", "add-multiword", "remove-multiword", "split-sentence",
                    "merge-sentence", "undo")
"""What a :class:`TokenEdit` did (:mod:`app.services.token_edits`)."""


class TokenEdit(Base):
    """One re-tokenization of a sentence (migration 0018, issue #32): a word split or merged, a
    multiword token added or removed, the sentence split in two or merged with the next one, or
    the undoing of such an edit (``operation``, :data:`TOKEN_OPERATIONS`; ``params`` its
    arguments and what it made, e.g. the new sentence's id).

    Tokens are rewritten in place by an edit (they are the sentence's words), so the edit keeps
    what it replaced in ``before``: the sentence's token lines, comments and review marks, the
    newest tree of each source, and all of a sentence a merge removed (its tokens, every tree
    version, its review state and notes); :func:`app.services.token_edits.undo_edit` puts them
    back. The trees are versions as always: the edit wrote, for every source of the sentence, a
    new version carried over to the new words (``written``: their ids). Every tree version of
    the sentence with an id up to ``last_tree_id`` (the newest before the edit) was made for the
    earlier words: it stays in the history, superseded, and cannot be reverted to.
    ``undone_by_id``: the edit that undid this one.
    """

    __tablename__ = "token_edits"
    __table_args__ = (
        CheckConstraint("operation IN ('split-word', 'merge-words', 'add-multiword', 'remove-multiword', "
                        "'split-sentence', 'merge-sentence', 'undo')", name="operation"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"), index=True)
    operation: Mapped[str] = mapped_column(String(24))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    before: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    written: Mapped[list[Any]] = mapped_column(JSON, default=list)
    last_tree_id: Mapped[int] = mapped_column(default=0)
    undone_by_id: Mapped[int | None] = mapped_column(ForeignKey("token_edits.id", ondelete="SET NULL"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

    user: Mapped[User] = relationship()
