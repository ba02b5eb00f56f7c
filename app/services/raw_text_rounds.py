"""Rounds that learn from the treebank's raw text (issue #17: Razavi's clusters, Chen's meta features).

A round started with ``raw_text`` writes the words of every pool sentence (the text imported
without trees, annotated or not: :func:`write_pool_text`) to a file, one sentence per line, and
its members that learn from raw text (:func:`parsing.members.raw_text_settings`: the cluster
members learn their clusters from it, ``graph1-meta`` parses it for its meta features) get that
file in their ``cluster_text``/``meta_text`` setting (:func:`raw_text_params`). The round records
how much text and which members (``TrainingRound.raw_text``); :func:`raw_text_effects` tells the
rounds page whether it helped: each such member's score beside its base member's, trained on the
same trees in the same round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from app.models import Document, Sentence, Treebank
from app.services import DbSession
from app.services.parsing_adapter import load_sentences
from app.services.sources import split_sentence_ids
from parsing.members import base_member, raw_text_settings

CHUNK = 1000
"""Sentences read from the database at a time while writing the text."""


class RawTextError(ValueError):
    """A round cannot learn from raw text as asked (the message says why)."""


def raw_text_members(parsers: Sequence[str]) -> list[str]:
    """The members among ``parsers`` that learn from raw text, in order."""
    return [name for name in parsers if raw_text_settings(name)]


def pool_size(session: DbSession, treebank: Treebank) -> int:
    """How many pool sentences (with words) the treebank has: its raw text, in sentences."""
    return int(session.scalar(select(func.count()).select_from(Sentence).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == "pool", Sentence.n_words > 0)) or 0)


def check_raw_text(session: DbSession, treebank: Treebank, parsers: Sequence[str]) -> None:
    """Refuse a raw-text round that could not use any.

    Raises:
        RawTextError: no chosen member learns from raw text, or the treebank's pool is empty.
    """
    if not raw_text_members(parsers):
        raise RawTextError("none of the chosen parsers learns from raw text: add a cluster member "
                           "(graph1-brown, graph1-context1, eager-brown, ...) or graph1-meta")
    if not pool_size(session, treebank):
        raise RawTextError("this treebank has no raw text: import sentences without trees into its "
                           "pool first")


def write_pool_text(session: DbSession, treebank: Treebank, path: Path) -> dict[str, int]:
    """Write the words of every pool sentence to ``path``, one sentence per line (a space inside
    a word becomes ``_``): ``{"sentences", "words"}`` written."""
    ids = split_sentence_ids(session, treebank, "pool")
    words = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, len(ids), CHUNK):
            for sentence in load_sentences(session, ids[start:start + CHUNK]):
                forms = [form.replace(" ", "_") for form in sentence.forms[1:]]
                words += len(forms)
                out.write(" ".join(forms) + "\n")
    return {"sentences": len(ids), "words": words}


def raw_text_params(parsers: Sequence[str], path: Path,
                    params: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``params`` (member settings by name) with ``path`` in each raw-text setting of ``parsers``."""
    merged = {name: dict(settings) for name, settings in params.items()}
    for name in raw_text_members(parsers):
        merged.setdefault(name, {}).update({setting: str(path) for setting in raw_text_settings(name)})
    return merged


@dataclass(frozen=True)
class RawTextEffect:
    """One raw-text member of a round beside its base member (LAS and UAS in %, None: not scored)."""

    member: str
    base: str | None
    las: float | None
    base_las: float | None

    @property
    def gain(self) -> float | None:
        """LAS points over the base member (None when either is unscored or absent)."""
        if self.las is None or self.base_las is None:
            return None
        return self.las - self.base_las


def raw_text_effects(raw_text: Mapping[str, Any] | None,
                     scores: Mapping[str, Any] | None) -> list[RawTextEffect]:
    """Each member that learned from the round's raw text beside its base member, from the
    round's ``scores`` (``{"members": {NAME: {"uas", "las"}}}``); empty without raw text."""
    if not raw_text:
        return []
    members = (scores or {}).get("members") or {}

    def las(name: str | None) -> float | None:
        value = (members.get(name) or {}).get("las") if name else None
        return None if value is None else float(value)

    return [RawTextEffect(name, base, las(name), las(base))
            for name in raw_text.get("members") or [] for base in [base_member(name)]]
