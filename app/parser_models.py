"""Tables of a treebank's parsers beside :mod:`app.models`.

* ``training_rounds``: each training of the members on a treebank (``number`` 1, 2, ...;
  models under ``instance/models/<treebank id>/<number>/``), with member weights and dev UAS.
* ``external_parsers`` (migration 0012): parsers run outside arcvote whose trees a treebank
  holds as ``parser`` versions named by their ``label``: an uploaded CoNLL-U output
  (``filename``, ``sentences`` matched) or a plugin ``command`` (CoNLL-U on stdin and stdout,
  killed after ``timeout_s``) run during pre-annotation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models import Base, _now


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
    checksums: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """sha256 of every model file, by path relative to ``model_dir`` (rounds from migration 0011 on)."""
    external_voters: Mapped[list[Any] | None] = mapped_column(JSON)
    """External parsers that voted in the ensemble (migration 0014): ``[{"label", "weight" (None: an
    average member's), "dev_uas" (a fraction, or None), "sentences" (how many it voted on)}]``."""
    raw_text: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """The treebank's raw text its cluster and meta-feature members learned from (migration 0015;
    NULL: the round did not use it): ``{"sentences", "words", "members": [names]}``."""
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """What the round trained (migration 0018; NULL on earlier rounds): its
    :class:`parsing.plan.TrainingPlan` as JSON (members and their settings, tags, ensemble and its
    settings, seed, warm start), read back with ``TrainingPlan.from_json``."""


class ExternalParser(Base):
    """A parser outside arcvote whose trees are stored as ``parser`` versions named ``label``."""

    __tablename__ = "external_parsers"
    __table_args__ = (UniqueConstraint("treebank_id", "label"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    treebank_id: Mapped[int] = mapped_column(ForeignKey("treebanks.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(40))
    command: Mapped[str | None] = mapped_column(Text)
    """A plugin's command line (split like a shell would, run without one); None: uploads only."""
    url: Mapped[str | None] = mapped_column(String(2000))
    """An HTTP plugin's endpoint (migration 0014): CoNLL-U POSTed, CoNLL-U back."""
    timeout_s: Mapped[float] = mapped_column(default=60.0)
    filename: Mapped[str | None] = mapped_column(String(255))
    """The last uploaded file's name."""
    sentences: Mapped[int] = mapped_column(default=0)
    """Sentences the last upload (or plugin run) gave a tree."""
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
