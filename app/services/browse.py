"""Read-only queries behind the browsing pages: treebank counts, sentence search, one sentence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, tuple_

from app.models import SPLITS, Document, Sentence, Token, Treebank, TreeVersion
from app.services import DbSession
from app.services.trees import latest_versions, sources_of

SEARCH_FIELDS = ("form", "lemma", "upos", "deprel", "sent_id")


@dataclass(slots=True)
class TreebankStats:
    """Counts shown for a treebank."""

    treebank: Treebank
    sentences: int = 0
    words: int = 0
    splits: dict[str, tuple[int, int]] = field(default_factory=dict)
    trees: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Page:
    """One page of a sentence list."""

    items: list[Sentence]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        """Number of pages (at least 1)."""
        return max(1, -(-self.total // self.per_page))


def treebank_stats(
    session: DbSession, treebank_id: int | None = None, *, where: ColumnElement[bool] | None = None
) -> list[TreebankStats]:
    """Treebanks (all, one, or those ``where`` keeps, e.g.
    :func:`app.services.permissions.readable_treebanks`) with sentence/word counts per split and
    trees per source."""
    treebanks = select(Treebank).order_by(Treebank.name)
    if treebank_id is not None:
        treebanks = treebanks.where(Treebank.id == treebank_id)
    if where is not None:
        treebanks = treebanks.where(where)
    stats = {tb.id: TreebankStats(tb) for tb in session.scalars(treebanks)}
    per_split = session.execute(
        select(Document.treebank_id, Document.split, func.count(Sentence.id),
               func.coalesce(func.sum(Sentence.n_words), 0))
        .join(Sentence, Sentence.document_id == Document.id)
        .where(Document.treebank_id.in_(list(stats)))
        .group_by(Document.treebank_id, Document.split)
    )
    for treebank_id, split, sentences, words in per_split:
        entry = stats[treebank_id]
        entry.splits[split] = (sentences, int(words))
        entry.sentences += sentences
        entry.words += int(words)
    per_source = session.execute(
        select(Document.treebank_id, TreeVersion.kind, TreeVersion.name,
               func.count(func.distinct(TreeVersion.sentence_id)))
        .join(Sentence, Sentence.id == TreeVersion.sentence_id)
        .join(Document, Document.id == Sentence.document_id)
        .where(Document.treebank_id.in_(list(stats)))
        .group_by(Document.treebank_id, TreeVersion.kind, TreeVersion.name)
    )
    for treebank_id, kind, name, count in per_source:
        label = "latest" if kind == "annotation" else name or kind
        stats[treebank_id].trees[label] = count
    for entry in stats.values():
        entry.splits = {split: entry.splits[split] for split in SPLITS if split in entry.splits}
    return list(stats.values())


def search_sentences(
    session: DbSession, treebank: Treebank, *, query: str = "", field: str = "form",
    split: str | None = None, page: int = 1, per_page: int = 50,
) -> Page:
    """Sentences of ``treebank`` matching ``query`` in ``field`` (exact match on token
    columns, substring on ``sent_id``), in document order, one page at a time."""
    if field not in SEARCH_FIELDS:
        raise ValueError(f"cannot search by {field!r}")
    statement = _sentence_filter(
        select(Sentence).join(Document, Document.id == Sentence.document_id)
        .where(Document.treebank_id == treebank.id),
        query.strip(), field, split,
    )
    total = session.scalar(select(func.count()).select_from(statement.subquery())) or 0
    page = max(1, page)
    items = session.scalars(
        statement.order_by(Document.position, Sentence.position)
        .limit(per_page).offset((page - 1) * per_page)
    ).all()
    return Page(list(items), page, per_page, total)


def _sentence_filter(
    statement: Select[Any], query: str, field: str, split: str | None
) -> Select[Any]:
    if split:
        statement = statement.where(Document.split == split)
    if not query:
        return statement
    if field == "sent_id":
        return statement.where(Sentence.sent_id.contains(query, autoescape=True))
    column = getattr(Token, field)
    return statement.where(
        Sentence.id.in_(select(Token.sentence_id).where(column == query))
    )


def sentence_view(session: DbSession, sentence: Sentence, source: str) -> dict[str, Any]:
    """What the sentence page and its tree drawing need, as plain JSON-able data."""
    sources = sources_of(session, sentence.id)
    if source not in sources and sources:
        source = sources[0]
    tree = latest_versions(session, [sentence.id], source).get(sentence.id) if sources else None
    words = [token for token in sentence.tokens if token.word is not None]
    return {
        "source": source if tree else None,
        "sources": sources,
        "version": tree.version if tree else None,
        "words": [
            {
                "id": token.word, "form": token.form, "upos": token.upos,
                "head": tree.heads[i] if tree else None,
                "deprel": tree.deprels[i] if tree else None,
                "score": tree.scores[i] if tree and tree.scores else None,
            }
            for i, token in enumerate(words)
        ],
    }


def neighbours(session: DbSession, sentence: Sentence) -> tuple[int | None, int | None]:
    """Ids of the previous and next sentence of the same treebank, in document order."""
    document = sentence.document
    key = (Document.position, Sentence.position)
    base = (
        select(Sentence.id).join(Document, Document.id == Sentence.document_id)
        .where(Document.treebank_id == document.treebank_id)
    )
    here = (document.position, sentence.position)
    previous = session.scalar(
        base.where(tuple_(*key) < here).order_by(Document.position.desc(), Sentence.position.desc())
        .limit(1)
    )
    following = session.scalar(base.where(tuple_(*key) > here).order_by(*key).limit(1))
    return previous, following
