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
  one confidence per arc, aligned the same way. Rows are never updated: a correction is a new
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
* ``training_rounds``: each training of the members on a treebank (``number`` 1, 2, ...;
  models under ``instance/models/<treebank id>/<number>/``), with member weights and dev UAS.
* ``jobs``: background work (pre-annotation): ``state`` (``queued``/``running``/``done``/
  ``failed``), ``progress`` 0..1, the last ``message``, the ``error`` of a failure.
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
"""Review status of a sentence."""

JOB_STATES = ("queued", "running", "done", "failed")
"""Life of a background job."""


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base with stable constraint names for Alembic."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(UserMixin, Base):
    """An account; ``is_admin`` may manage users."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

    def set_password(self, password: str) -> None:
        """Store a salted hash of ``password``."""
        self.password_hash = generate_password_hash(password)

    def check_password(self, password: str) -> bool:
        """True when ``password`` matches the stored hash."""
        return check_password_hash(self.password_hash, password)


class Treebank(Base):
    """A named collection of documents in one language."""

    __tablename__ = "treebanks"
    __table_args__ = (CheckConstraint("direction IN ('ltr', 'rtl')", name="direction"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    language: Mapped[str] = mapped_column(String(32), default="")
    direction: Mapped[str] = mapped_column(String(3), default="ltr")
    labels: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    created_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))

    created_by: Mapped[User] = relationship()
    documents: Mapped[list[Document]] = relationship(
        back_populates="treebank", order_by="Document.position", cascade="all, delete-orphan"
    )


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
    (predicted tags); ``None`` when they parsed with the sentence's own UPOS column."""
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


class TrainingRound(Base):
    """One training of the members and the ensemble on a treebank; ``weights`` weight the vote
    shares shown to annotators (:func:`app.services.preannotate.vote_weights`).

    The round's record (migration 0005; NULL or 0 on older rounds): when it ran
    (``started_at``/``finished_at``), its training trees by origin (``gold_sentences``,
    ``corrected_sentences`` = annotation versions, ``automatic_sentences`` = self-training,
    with its ``self_training`` settings or NULL), ``annotated_tokens`` (words of the human
    trees), what scored it (``evaluation``: ``dev`` or ``held-out``, with ``held_out_ids``),
    ``scores`` (percentages: ``{"members": {NAME: {"uas", "las"}}, "ensemble": {"uas", "las"}}``)
    and what it changed: of ``compared_sentences`` re-parsed sentences that had an ensemble tree,
    ``changed_sentences`` got a different one (the first ids in ``changed_ids``).
    """

    __tablename__ = "training_rounds"
    __table_args__ = (UniqueConstraint("treebank_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    treebank_id: Mapped[int] = mapped_column(ForeignKey("treebanks.id", ondelete="CASCADE"))
    number: Mapped[int]
    parsers: Mapped[list[Any]] = mapped_column(JSON)
    tags: Mapped[str] = mapped_column(String(16))
    ensemble: Mapped[str | None] = mapped_column(String(32))
    """Combination method (:data:`parsing.ensemble.registry.METHODS`); None: rounds before 0003
    (arc voting with dev-accuracy weights)."""
    weights: Mapped[list[Any]] = mapped_column(JSON, default=list)
    dev_uas: Mapped[list[Any] | None] = mapped_column(JSON)
    train_sentences: Mapped[int] = mapped_column(default=0)
    dev_sentences: Mapped[int] = mapped_column(default=0)
    model_dir: Mapped[str] = mapped_column(Text)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    gold_sentences: Mapped[int] = mapped_column(default=0)
    corrected_sentences: Mapped[int] = mapped_column(default=0)
    automatic_sentences: Mapped[int] = mapped_column(default=0)
    annotated_tokens: Mapped[int] = mapped_column(default=0)
    self_training: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    warm: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """A warm round: ``{"from_round": N, "members": [names continued from round N's weights]}``."""
    evaluation: Mapped[str | None] = mapped_column(String(16))
    held_out_ids: Mapped[list[Any] | None] = mapped_column(JSON)
    scores: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    compared_sentences: Mapped[int | None]
    changed_sentences: Mapped[int | None]
    changed_ids: Mapped[list[Any] | None] = mapped_column(JSON)


class Job(Base):
    """A piece of background work and how far it got (polled by the browser)."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint("state IN ('queued', 'running', 'done', 'failed')", name="state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    treebank_id: Mapped[int | None] = mapped_column(
        ForeignKey("treebanks.id", ondelete="CASCADE"), index=True
    )
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(16), default="queued")
    progress: Mapped[float] = mapped_column(default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state for ``GET /jobs/<id>``."""
        return {
            "id": self.id, "kind": self.kind, "state": self.state, "progress": self.progress,
            "message": self.message, "error": self.error, "result": self.result,
            "treebank_id": self.treebank_id,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }
