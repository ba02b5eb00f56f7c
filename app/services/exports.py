"""Export a treebank (or one split) as CoNLL-U, with the trees of any source."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter

import numpy as np
from sqlalchemy import select

from app.models import Document, Sentence, Token, Treebank, TreeVersion
from app.services import DbSession
from app.services.trees import latest_versions
from parsing.conllu_io import ConlluSentence, format_conllu, with_parse
from parsing.types import NO_HEAD, Parse

_COLUMNS = (Token.ident, Token.form, Token.lemma, Token.upos, Token.xpos, Token.feats,
            Token.head, Token.deprel, Token.deps, Token.misc)


def export_conllu(
    session: DbSession, treebank: Treebank, *, source: str = "gold", split: str | None = None
) -> str:
    """The treebank's sentences as CoNLL-U text, in document and sentence order.

    ``gold`` writes the imported lines unchanged (a lossless round trip). Any other source
    replaces HEAD and DEPREL of the words with that source's newest tree; words of sentences
    without such a tree get ``_``.
    """
    sentences = list(_raw_sentences(session, treebank, split))
    if source != "gold":
        trees = latest_versions(session, [sentence_id for sentence_id, _ in sentences], source)
        sentences = [
            (sentence_id, _with_tree(raw, trees.get(sentence_id))) for sentence_id, raw in sentences
        ]
    return format_conllu(raw for _, raw in sentences)


def _raw_sentences(
    session: DbSession, treebank: Treebank, split: str | None
) -> Iterator[tuple[int, ConlluSentence]]:
    """Rebuild every sentence's lines from its rows: one query for comments, one for tokens."""
    where = [Document.treebank_id == treebank.id]
    if split is not None:
        where.append(Document.split == split)
    order = (Document.position, Sentence.position)
    sentences = session.execute(
        select(Sentence.id, Sentence.comments)
        .join(Document, Document.id == Sentence.document_id).where(*where).order_by(*order)
    )
    tokens = session.execute(
        select(Token.sentence_id, *_COLUMNS)
        .join(Sentence, Sentence.id == Token.sentence_id)
        .join(Document, Document.id == Sentence.document_id)
        .where(*where).order_by(*order, Token.position)
    )
    rows_by_sentence = groupby(tokens, key=itemgetter(0))
    for (sentence_id, comments), (token_sentence, rows) in zip(
        sentences, rows_by_sentence, strict=True
    ):
        assert sentence_id == token_sentence, "sentence and token queries out of step"
        yield sentence_id, ConlluSentence(list(comments), [list(row[1:]) for row in rows])


def _with_tree(raw: ConlluSentence, tree: TreeVersion | None) -> ConlluSentence:
    if tree is None:
        rows = [list(row) for row in raw.rows]
        for row in rows:
            if row[0].isdigit():
                row[6] = row[7] = "_"
        return ConlluSentence(list(raw.comments), rows)
    heads = np.array([NO_HEAD, *tree.heads], dtype=np.intp)
    return with_parse(raw, Parse(heads=heads, deprels=["", *tree.deprels]))
