"""Checks that sentences carry the tags a round's parsers read.

Gold-tag parsers read the UPOS column; raw text (``_``) must be tagged first, by a round
trained with predicted tags.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from app.models import Document, Sentence, Token, Treebank, TreeVersion
from app.services import DbSession


def require_tags(session: DbSession, sentence_ids: Sequence[int], tags: str) -> None:
    """Refuse gold-tag parsing of sentences that have words without UPOS (``_``).

    Parsers trained on gold tags read the UPOS column; on ``_`` they would parse garbage.

    :raise ValueError: naming how many such sentences there are and one of them.
    """
    if tags != "gold" or not sentence_ids:
        return
    untagged: list[int] = []
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        untagged.extend(session.scalars(select(Token.sentence_id).distinct().where(
            Token.sentence_id.in_(chunk), Token.word.is_not(None), Token.upos == "_")))
    if untagged:
        example = session.get(Sentence, untagged[0])
        name = (example.sent_id if example is not None else None) or f"#{untagged[0]}"
        raise ValueError(f"{len(untagged)} of the {len(sentence_ids)} sentences to parse have words without "
                         f"UPOS (e.g. {name}): pre-annotate with predicted tags, which tag them first")


def pool_has_untagged(session: DbSession, treebank: Treebank) -> bool:
    """Whether a pool sentence still to annotate has a word without UPOS (raw text): then
    pre-annotation needs predicted tags (:func:`require_tags`)."""
    annotated = select(TreeVersion.sentence_id).where(TreeVersion.kind == "annotation")
    return session.scalar(
        select(Token.id).join(Sentence).join(Document)
        .where(Document.treebank_id == treebank.id, Document.split == "pool", Token.word.is_not(None),
               Token.upos == "_", Sentence.id.not_in(annotated)).limit(1)
    ) is not None
