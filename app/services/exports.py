"""Export a treebank (or one split) as CoNLL-U, with the trees of any source.

A file that claims trees never holds ``_`` heads: a sentence without a tree from the chosen
source is left out, and :class:`Export` says how many were (the CLI prints it on stderr, the
web download sends it as the ``X-Arcvote-Omitted`` header; the file itself stays plain CoNLL-U,
so a gold export of trees is byte-identical to the imported file).

``reviewed_only`` keeps the sentences a person vouches for: those an annotator marked
``reviewed`` (any split), and the train, dev and test sentences that were imported with a tree
(a treebank's gold trees came in finished). Pool sentences count only once reviewed, even if
their file had trees.

``provenance`` adds each arc's source to MISC as ``ArcSource=human`` (set or confirmed by the
annotator) or ``ArcSource=parser`` (filled in by the ensemble around the human arcs: a partial
tree), on the words of exported annotation versions that record it; other trees get nothing.
Off by default, so an export stays what other tools expect.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import and_, exists, func, or_, select

from app.models import Document, Sentence, SentenceState, Token, Treebank, TreeVersion
from app.services import DbSession
from app.services.trees import check_export_source, latest_versions, source_filter
from parsing.conllu_io import FEATS, HEAD, LEMMA, XPOS, ConlluSentence, format_conllu, with_misc, with_parse
from parsing.types import NO_HEAD, ROOT, Parse

if TYPE_CHECKING:
    from app.services.sources import StoredTree

_COLUMNS = (Token.ident, Token.form, Token.lemma, Token.upos, Token.xpos, Token.feats,
            Token.head, Token.deprel, Token.deps, Token.misc)
ARC_SOURCE = "ArcSource"
"""The MISC attribute of an arc's provenance (``provenance=True``)."""
OMITTED_HEADER = "X-Arcvote-Omitted"
"""Response header of a web export: how many sentences had no tree from the source."""


@dataclass(frozen=True, slots=True)
class Export:
    """The CoNLL-U text, how many sentences it holds and how many had no tree and were left out."""

    text: str
    sentences: int
    omitted: int


def export_treebank(
    session: DbSession, treebank: Treebank, *, source: str = "gold", split: str | None = None,
    reviewed_only: bool = False, provenance: bool = False,
) -> Export:
    """The treebank's sentences that have a ``source`` tree, as CoNLL-U in document and sentence order.

    ``gold`` writes the imported lines unchanged (a lossless round trip). Any other source
    replaces HEAD and DEPREL of the words with that source's newest tree, UPOS with the
    tags its parsers predicted when they tagged the sentence themselves, and (for ``latest``)
    UPOS, XPOS, LEMMA and FEATS with the values an annotator set.

    :raise ValueError: ``source`` is not one of :data:`app.services.trees.EXPORT_SOURCES`.
    """
    check_export_source(source)
    sentences = list(_raw_sentences(session, treebank, split))
    if reviewed_only:
        reviewed = _reviewed_ids(session, [sentence_id for sentence_id, _, _ in sentences])
        sentences = [entry for entry in sentences
                     if entry[0] in reviewed or (entry[1] != "pool" and _has_imported_tree(entry[2]))]
    if source == "gold":
        kept = [raw for _, _, raw in sentences if _has_imported_tree(raw)]
    else:
        trees = latest_versions(session, [sentence_id for sentence_id, _, _ in sentences], source)
        kept = [_with_tree(raw, trees[sentence_id], provenance) for sentence_id, _, raw in sentences
                if sentence_id in trees]
    return Export(format_conllu(kept), len(kept), len(sentences) - len(kept))


def missing_trees(session: DbSession, treebank: Treebank, sources: Sequence[str]) -> dict[str, int]:
    """Per export source, how many of the treebank's sentences have no tree from it: what an
    export of that source (all splits, not only reviewed) leaves out, shown before a download.
    ``latest`` falls back to the gold tree, as :func:`export_treebank` does."""
    found = {}
    for source in dict.fromkeys(sources):
        check_export_source(source)
        kinds = [source_filter(source), *([("gold", "")] if source == "latest" else [])]
        has_tree = exists().where(TreeVersion.sentence_id == Sentence.id, or_(*(
            and_(TreeVersion.kind == kind, TreeVersion.name == name) for kind, name in kinds)))
        found[source] = session.scalar(
            select(func.count(Sentence.id)).join(Document, Document.id == Sentence.document_id)
            .where(Document.treebank_id == treebank.id, ~has_tree)) or 0
    return found


def export_conllu(
    session: DbSession, treebank: Treebank, *, source: str = "gold", split: str | None = None,
    reviewed_only: bool = False,
) -> str:
    """The text of :func:`export_treebank`."""
    return export_treebank(session, treebank, source=source, split=split, reviewed_only=reviewed_only).text


def _has_imported_tree(raw: ConlluSentence) -> bool:
    return raw.words[0][HEAD] != "_" if raw.words else False


def _reviewed_ids(session: DbSession, sentence_ids: list[int]) -> set[int]:
    found: set[int] = set()
    for start in range(0, len(sentence_ids), 5000):
        chunk = sentence_ids[start:start + 5000]
        found.update(session.scalars(select(SentenceState.sentence_id).where(
            SentenceState.sentence_id.in_(chunk), SentenceState.status == "reviewed")))
    return found


def _raw_sentences(
    session: DbSession, treebank: Treebank, split: str | None
) -> Iterator[tuple[int, str, ConlluSentence]]:
    """``(id, split, lines)`` of every sentence: one query for comments, one for tokens."""
    where = [Document.treebank_id == treebank.id]
    if split is not None:
        where.append(Document.split == split)
    order = (Document.position, Sentence.position)
    sentences = session.execute(
        select(Sentence.id, Document.split, Sentence.comments)
        .join(Document, Document.id == Sentence.document_id).where(*where).order_by(*order)
    )
    tokens = session.execute(
        select(Token.sentence_id, *_COLUMNS)
        .join(Sentence, Sentence.id == Token.sentence_id)
        .join(Document, Document.id == Sentence.document_id)
        .where(*where).order_by(*order, Token.position)
    )
    rows_by_sentence = groupby(tokens, key=itemgetter(0))
    for (sentence_id, split_name, comments), (token_sentence, rows) in zip(
        sentences, rows_by_sentence, strict=True
    ):
        assert sentence_id == token_sentence, "sentence and token queries out of step"
        yield sentence_id, split_name, ConlluSentence(list(comments), [list(row[1:]) for row in rows])


def sentence_conllu(session: DbSession, sentence: Sentence, tree: TreeVersion | StoredTree) -> ConlluSentence:
    """One sentence's lines with ``tree`` as :func:`export_treebank` writes them."""
    rows = session.execute(select(*_COLUMNS).where(Token.sentence_id == sentence.id).order_by(Token.position))
    return _with_tree(ConlluSentence(list(sentence.comments), [list(row) for row in rows]), tree)


def _with_tree(raw: ConlluSentence, tree: TreeVersion | StoredTree,
               provenance: bool = False) -> ConlluSentence:
    """``raw`` with the tree's HEAD and DEPREL, and every word column the version stores (the
    parsers' predicted UPOS, an annotator's UPOS, XPOS, LEMMA and FEATS); with ``provenance``,
    each arc's source in MISC (:data:`ARC_SOURCE`) where the version records it."""
    heads = np.array([NO_HEAD, *tree.heads], dtype=np.intp)
    upos = None if tree.upos is None else [ROOT, *(str(tag) for tag in tree.upos)]
    parse = Parse(heads=heads, deprels=["", *tree.deprels], upos=upos)
    parsed = with_parse(raw, parse, tags=upos is not None)
    for index, values in ((XPOS, tree.xpos), (LEMMA, tree.lemmas), (FEATS, tree.feats)):
        if values is not None:
            for row, value in zip(parsed.words, values, strict=True):
                row[index] = str(value)
    if provenance and tree.provenance is not None:
        return with_misc(parsed, ARC_SOURCE, [str(source) for source in tree.provenance])
    return parsed
