"""The one place where database rows become :mod:`parsing` objects and parses become rows.

Database trees store ``heads``/``deprels`` over words 1..n (``heads[i-1]`` is the head of
word ``i``); :mod:`parsing` uses arrays over positions 0..n with ``heads[0] == -1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import groupby
from operator import attrgetter

import numpy as np
from sqlalchemy import select

from app.models import Token, TreeVersion
from app.services import DbSession
from parsing.types import NO_HEAD, ROOT, Parse
from parsing.types import Sentence as ParsingSentence


def load_sentences(
    session: DbSession, sentence_ids: Sequence[int], trees: dict[int, TreeVersion] | None = None
) -> list[ParsingSentence]:
    """The words of ``sentence_ids`` (in that order) as parsing sentences.

    Heads and labels come from ``trees[sentence_id]`` when given, else they are unknown.
    """
    if not sentence_ids:
        return []
    rows = session.scalars(
        select(Token).where(Token.sentence_id.in_(sentence_ids), Token.word.is_not(None))
        .order_by(Token.sentence_id, Token.position)
    )
    words = {sid: list(group) for sid, group in groupby(rows, key=attrgetter("sentence_id"))}
    tree_of = trees or {}
    return [_sentence(words.get(sid, []), tree_of.get(sid)) for sid in sentence_ids]


def _sentence(tokens: list[Token], tree: TreeVersion | None) -> ParsingSentence:
    n = len(tokens)
    heads = [NO_HEAD] * n if tree is None else [NO_HEAD if h is None else int(h) for h in tree.heads]
    deprels = ["_"] * n if tree is None else [str(label or "_") for label in tree.deprels]
    return ParsingSentence(
        forms=[ROOT, *(t.form for t in tokens)],
        lemmas=[ROOT, *(t.lemma for t in tokens)],
        upos=[ROOT, *(t.upos for t in tokens)],
        xpos=[ROOT, *(t.xpos for t in tokens)],
        feats=[ROOT, *(t.feats for t in tokens)],
        heads=np.array([NO_HEAD, *heads], dtype=np.intp),
        deprels=["", *deprels],
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
