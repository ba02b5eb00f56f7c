"""The one place where database rows become :mod:`parsing` objects and parses become rows.

Database trees store ``heads``/``deprels`` over words 1..n (``heads[i-1]`` is the head of
word ``i``); :mod:`parsing` uses arrays over positions 0..n with ``heads[0] == -1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import select

from app.models import Token, TreeVersion
from app.services import DbSession
from app.services.token_columns import stored_attributes
from app.services.trees import latest_versions
from parsing.types import NO_HEAD, ROOT, Parse
from parsing.types import Sentence as ParsingSentence

if TYPE_CHECKING:
    from app.services.sources import StoredTree

WORD_COLUMNS = ("form", "lemma", "upos", "xpos", "feats")
"""The token columns a parsing sentence is made of."""


def load_sentences(
    session: DbSession, sentence_ids: Sequence[int],
    trees: Mapping[int, TreeVersion] | Mapping[int, StoredTree] | None = None,
) -> list[ParsingSentence]:
    """The words of ``sentence_ids`` (in that order) as parsing sentences.

    Heads and labels come from ``trees[sentence_id]`` when given, else they are unknown; a
    tree that records provenance (a partial tree) marks its human arcs as ``annotated``.
    """
    if not sentence_ids:
        return []
    rows = session.execute(  # the columns only: ORM objects for every token cost more than the query
        select(Token.sentence_id, Token.form, Token.lemma, Token.upos, Token.xpos, Token.feats)
        .where(Token.sentence_id.in_(sentence_ids), Token.word.is_not(None))
        .order_by(Token.sentence_id, Token.position)
    )
    words = {sid: dict(zip(WORD_COLUMNS, zip(*(row[1:] for row in group), strict=True), strict=True))
             for sid, group in groupby(rows, key=itemgetter(0))}
    tree_of = trees or {}
    empty: dict[str, Sequence[str]] = {column: () for column in WORD_COLUMNS}
    return [_sentence(words.get(sid, empty), tree_of.get(sid)) for sid in sentence_ids]


def with_trees(
    session: DbSession, sentence_ids: list[int], trees: dict[int, TreeVersion] | None = None
) -> list[tuple[int, ParsingSentence]]:
    """``(id, sentence)`` for the sentences that have words and a whole tree, in the given order."""
    found = trees if trees is not None else latest_versions(session, sentence_ids, "latest")
    usable = [sid for sid in sentence_ids if sid in found]
    return [(sid, s) for sid, s in zip(usable, load_sentences(session, usable, found), strict=True)
            if len(s) and s.has_tree]


def partial_trees(session: DbSession, sentence_ids: list[int]) -> list[tuple[int, ParsingSentence]]:
    """``(id, sentence)`` of the sentences whose newest annotation is a partial tree with at least
    one human arc (its other arcs came from the constrained ensemble; ``annotated`` marks them)."""
    trees = {sid: tree for sid, tree in latest_versions(session, sentence_ids, "annotation").items()
             if tree.provenance and "human" in tree.provenance}
    return [(sid, sentence) for sid, sentence in with_trees(session, list(trees), trees) if sentence.partial]


def _sentence(columns: Mapping[str, Sequence[str]], tree: TreeVersion | StoredTree | None) -> ParsingSentence:
    """The words (``columns[name]``: each word's value of a :data:`WORD_COLUMNS` column) with the
    tree's arcs and, for an annotation, the word columns its annotator set."""
    n = len(columns["form"])
    heads = [NO_HEAD] * n if tree is None else [NO_HEAD if h is None else int(h) for h in tree.heads]
    deprels = ["_"] * n if tree is None else [str(label or "_") for label in tree.deprels]
    provenance = tree.provenance if tree is not None and tree.provenance and len(tree.provenance) == n \
        else None
    annotated = None if provenance is None else np.array([False, *(p == "human" for p in provenance)])
    edited = stored_attributes(tree) if tree is not None else {}

    def column(stored: str, imported: str) -> list[str]:
        values = edited.get(stored)
        return [ROOT, *(map(str, values) if values is not None else columns[imported])]

    return ParsingSentence(
        forms=[ROOT, *columns["form"]],
        lemmas=column("lemmas", "lemma"),
        upos=column("upos", "upos"),
        xpos=column("xpos", "xpos"),
        feats=column("feats", "feats"),
        heads=np.array([NO_HEAD, *heads], dtype=np.intp),
        deprels=["", *deprels],
        annotated=annotated,
    )


def tree_of_parse(parse: Parse) -> tuple[list[int], list[str], list[float | None] | None]:
    """``(heads, deprels, scores)`` over words 1..n for a tree version (scores JSON-safe)."""
    heads = [int(head) for head in parse.heads[1:]]
    deprels = [str(label) for label in parse.deprels[1:]]
    if parse.arc_scores is None:
        return heads, deprels, None
    scores = [float(s) if math.isfinite(float(s)) else None for s in parse.arc_scores[1:]]
    return heads, deprels, scores


def parse_of_tree(heads: Sequence[int], deprels: Sequence[str]) -> Parse:
    """A parsing :class:`~parsing.types.Parse` from a stored tree (words 1..n)."""
    return Parse(heads=np.array([NO_HEAD, *heads], dtype=np.intp), deprels=["", *deprels])
