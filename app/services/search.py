"""Search a treebank's trees with a Grew-match request (issue #32): the app side of
:mod:`parsing.grew`.

The trees searched are those of one source (:mod:`app.services.sources`: ``gold``, ``latest``,
``reviewed``, ``ensemble``, a parser's name, ``ensemble@R``), in one split or all, with the word
columns an annotator set (``latest``) and MISC from the imported lines. Sentences with no tree
from the source are not searched (:attr:`SearchResult.searched` says how many were).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from sqlalchemy import select

from app.models import Sentence, Token, Treebank, TreeVersion
from app.services import DbSession
from app.services.exports import sentence_conllu
from app.services.parsing_adapter import load_sentences
from app.services.search_cache import cached
from app.services.sources import (
    SourceError,
    check_split,
    load_trees,
    parser_sources,
    round_starts,
    split_sentence_ids,
)
from app.services.token_columns import stored_attributes
from app.services.trees import EXPORT_SOURCES
from parsing.conllu_io import format_conllu
from parsing.grew import Corpus, Graph, Matcher, parse_pairs
from parsing.grew.graphs import paused_gc
from parsing.types import NO_HEAD

if TYPE_CHECKING:
    from app.services.sources import StoredTree

FIXED_SOURCES = ("gold", "reviewed", "latest", "ensemble")
"""Sources every treebank offers (parsers and ``ensemble@R`` come on top)."""


@dataclass(frozen=True)
class Hit:
    """One match: the sentence (database id and ``sent_id``) and node name → word id."""

    sentence_id: int
    sent_id: str | None
    nodes: dict[str, int]


@dataclass(frozen=True)
class SearchResult:
    """Every match, in document order; ``searched``: sentences that had a tree to search."""

    source: str
    split: str | None
    hits: list[Hit]
    searched: int
    truncated: bool = False

    @property
    def matches(self) -> int:
        return len(self.hits)

    @property
    def sentence_ids(self) -> list[int]:
        """The matching sentences, each once, in document order."""
        return list(dict.fromkeys(hit.sentence_id for hit in self.hits))

    def as_json(self) -> dict[str, object]:
        """The contract shape: ``{"matches", "sentences", "hits": [{"sent_id", "nodes"}]}``."""
        return {"matches": self.matches, "sentences": len(self.sentence_ids),
                "hits": [{"sent_id": hit.sent_id, "nodes": hit.nodes} for hit in self.hits]}


def search_sources(session: DbSession, treebank: Treebank) -> list[str]:
    """The sources a search may name on ``treebank``: fixed ones, its parsers, ``ensemble@R``."""
    ids = split_sentence_ids(session, treebank, None)
    rounds = [f"ensemble@{number}" for _, number in round_starts(session, treebank)]
    parsers = [name for name in parser_sources(session, ids) if name not in FIXED_SOURCES]
    return [*FIXED_SOURCES, *parsers, *rounds]


def check_source(session: DbSession, treebank: Treebank, source: str) -> str:
    """``source`` when a search may use it, else :class:`SourceError` naming the choices."""
    name = source.partition("@")[0]
    if source in FIXED_SOURCES or name in EXPORT_SOURCES or source in search_sources(session, treebank):
        return source
    raise SourceError(f"unknown source {source[:40]!r}: use gold, reviewed, latest, ensemble, a parser's "
                      f"name or ensemble@ROUND")


def search_treebank(
    session: DbSession, treebank: Treebank, request: str, *, source: str = "gold", split: str | None = None,
    limit: int | None = None, seconds: float | None = None,
) -> SearchResult:
    """Every match of ``request`` in the ``source`` trees of ``treebank`` (one split or all); at
    most ``limit`` (then :attr:`SearchResult.truncated`).

    :raise GrewSyntaxError: a malformed request (a ValueError naming line and column).
    :raise SourceError: an unknown source or split.
    :raise SearchTooLong: matching took more than ``seconds``.
    """
    matcher = Matcher(request)
    check_source(session, treebank, source)
    split = check_split(split)

    def build() -> tuple[list[int], Corpus]:
        with paused_gc():  # ~10^6 small containers: the collector's passes would cost more than the build
            ids = split_sentence_ids(session, treebank, split)
            trees = load_trees(session, treebank, ids, source).trees
            graphs = graphs_of(session, [sid for sid in ids if sid in trees], trees)
            return [sid for sid, _ in graphs], Corpus([graph for _, graph in graphs])

    ids, corpus = cached(session, treebank, source, split, build)
    found = matcher.run(corpus, limit=None if limit is None else limit + 1, seconds=seconds)
    hits = [Hit(ids[match.sentence], match.sent_id, match.nodes) for match in found[:limit]]
    return SearchResult(source, split, hits, len(ids), truncated=limit is not None and len(found) > limit)


def graphs_of(
    session: DbSession, sentence_ids: list[int], trees: Mapping[int, TreeVersion] | Mapping[int, StoredTree],
    *, misc: bool = True
) -> list[tuple[int, Graph]]:
    """``(id, graph)`` of the sentences with words: the imported word columns (plain rows, not
    ORM objects: loading is most of a search's time), the tree's arcs and the columns an
    annotation stored, ``sent_id`` and (unless not ``misc``) MISC."""
    sent_ids = _sent_ids(session, sentence_ids)
    return [(sid, _graph(rows, trees[sid], sent_ids.get(sid), misc))
            for sid, rows in _word_rows(session, sentence_ids) if len(rows) == len(trees[sid].heads)]


_pairs = lru_cache(maxsize=65536)(parse_pairs)
"""FEATS and MISC strings repeat across a treebank: each is split once (the dict is only read)."""

WordRow = tuple[str, ...]
"""``(form, lemma, upos, xpos, feats, misc)`` of one word as imported."""
_EDITABLE = (("lemma", "lemmas", 1), ("upos", "upos", 2), ("xpos", "xpos", 3))
"""(feature, the annotation version's attribute, index in a :data:`WordRow`)."""


def _graph(rows: list[WordRow], tree: TreeVersion | StoredTree, sent_id: str | None,
           misc: bool = True) -> Graph:
    """One sentence's graph: imported columns, overridden by those an annotation stored."""
    edited = stored_attributes(tree)
    lemmas, tags, xtags = ([str(v) for v in values] if (values := edited.get(attribute)) is not None
                           else [str(row[index]) for row in rows] for _, attribute, index in _EDITABLE)
    feats = edited.get("feats")
    features: list[dict[str, str]] = [{}]
    for i, row in enumerate(rows):
        node = {"form": row[0], "lemma": lemmas[i], "upos": tags[i], "xpos": xtags[i]}
        if misc and (pairs := row[5]) and pairs != "_":
            node.update(_pairs(str(pairs)))
        pairs = str(feats[i]) if feats is not None else row[4]
        if pairs and pairs != "_":
            node.update(_pairs(str(pairs)))
        features.append(node)
    heads = [NO_HEAD, *(NO_HEAD if h is None else int(h) for h in tree.heads)]
    return Graph(features, heads, ["", *(str(d or "_") for d in tree.deprels)], sent_id)


def _word_rows(session: DbSession, sentence_ids: Sequence[int]) -> Iterator[tuple[int, list[WordRow]]]:
    """``(id, [(form, lemma, upos, xpos, feats, misc) per word])`` in ``sentence_ids`` order."""
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        rows = session.execute(
            select(Token.sentence_id, Token.form, Token.lemma, Token.upos, Token.xpos, Token.feats,
                   Token.misc).where(Token.sentence_id.in_(chunk), Token.word.is_not(None))
            .order_by(Token.sentence_id, Token.position))
        grouped = {sid: [tuple(row[1:]) for row in group] for sid, group in groupby(rows, key=itemgetter(0))}
        for sid in chunk:
            if sid in grouped:
                yield sid, grouped[sid]


def _sent_ids(session: DbSession, sentence_ids: Sequence[int]) -> dict[int, str | None]:
    found: dict[int, str | None] = {}
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        rows = session.execute(select(Sentence.id, Sentence.sent_id).where(Sentence.id.in_(chunk)))
        found.update((sid, sent_id) for sid, sent_id in rows)
    return found


def matching_conllu(session: DbSession, treebank: Treebank, result: SearchResult) -> str:
    """The matching sentences as CoNLL-U with the searched source's trees, in document order."""
    trees = load_trees(session, treebank, result.sentence_ids, result.source).trees
    raws = []
    for sid in result.sentence_ids:
        sentence = session.get(Sentence, sid)
        if sentence is not None and sid in trees:
            raws.append(sentence_conllu(session, sentence, trees[sid]))
    return format_conllu(raws)


def sentence_views(
    session: DbSession, treebank: Treebank, result: SearchResult, sentence_ids: Sequence[int]
) -> list[dict[str, object]]:
    """What the search page draws for each of ``sentence_ids`` (matching sentences): ``{id,
    sent_id, text, words: [{id, form, upos, head, deprel}], hits: [{node: word id}]}`` with the
    searched source's tree."""
    ids = list(sentence_ids)
    trees = load_trees(session, treebank, ids, result.source).trees
    usable = [sid for sid in ids if sid in trees]
    info = {row.id: row for row in session.scalars(select(Sentence).where(Sentence.id.in_(usable)))}
    views: list[dict[str, object]] = []
    for sid, sentence in zip(usable, load_sentences(session, usable, trees), strict=True):
        words = [{"id": i, "form": sentence.forms[i], "upos": sentence.upos[i],
                  "head": int(sentence.heads[i]) if sentence.heads[i] >= 0 else None,
                  "deprel": sentence.deprels[i]} for i in range(1, len(sentence.forms))]
        views.append({"id": sid, "sent_id": info[sid].sent_id, "text": info[sid].text, "words": words,
                      "hits": [hit.nodes for hit in result.hits if hit.sentence_id == sid]})
    return views
