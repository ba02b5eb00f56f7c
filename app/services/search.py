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
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, select
from sqlalchemy.engine.cursor import CursorFetchStrategy

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
from app.services.token_columns import COLUMNS, STORED, completed_columns, stored_attributes
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
        ids = split_sentence_ids(session, treebank, split)
        trees = load_trees(session, treebank, ids, source).trees
        graphs = graphs_of(session, [sid for sid in ids if sid in trees], trees)
        return [sid for sid, _ in graphs], Corpus([graph for _, graph in graphs])

    # ~10^5 graphs, index entries and hits: the collector's passes while they pile up would cost
    # more than making them (and they hold no cycles)
    with paused_gc():
        ids, corpus = cached(session, treebank, source, split, build)
        hits, truncated = _hits(matcher, corpus, ids, limit, seconds)
    return SearchResult(source, split, hits, len(ids), truncated=truncated)


def _hits(matcher: Matcher, corpus: Corpus, ids: list[int], limit: int | None,
          seconds: float | None) -> tuple[list[Hit], bool]:
    """The matches as hits (at most ``limit``), and whether there were more."""
    found = matcher.run(corpus, limit=None if limit is None else limit + 1, seconds=seconds)
    return ([Hit(ids[match.sentence], match.sent_id, match.nodes) for match in found[:limit]],
            limit is not None and len(found) > limit)


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

WordRow = tuple[Any, ...]
"""``(sentence id, form, lemma, upos, xpos, feats, misc)`` of one word as imported."""
_EDITABLE = (("lemma", "lemmas", 2), ("upos", "upos", 3), ("xpos", "xpos", 4))
"""(feature, the annotation version's attribute, index in a :data:`WordRow`)."""
_COLUMN_INDEX = {"upos": 3, "xpos": 4, "lemma": 2, "feats": 5}
"""Word column → its index in a :data:`WordRow`."""


def _graph(rows: list[WordRow], tree: TreeVersion | StoredTree, sent_id: str | None,
           misc: bool = True) -> Graph:
    """One sentence's graph: imported columns, overridden by those an annotation stored; a
    parser's or the ensemble's words imported without tags read its predictions, as the editor
    shows them (:func:`_predicted`)."""
    edited = stored_attributes(tree) or _predicted(rows, tree)
    extra = _misc_and_feats if misc else _feats_only
    if any(values is not None for values in edited.values()):
        features = _edited_features(rows, edited, misc)
    else:  # most trees: the imported columns as they are, in one pass
        features = [{"form": form, "lemma": lemma, "upos": upos, "xpos": xpos, **extra(misc_pairs, feats)}
                    for _, form, lemma, upos, xpos, feats, misc_pairs in rows]
        features.insert(0, {})
    heads = (NO_HEAD, *(map(int, tree.heads) if None not in tree.heads
                        else (NO_HEAD if h is None else int(h) for h in tree.heads)))
    deprels = ("", *(map(str, tree.deprels) if None not in tree.deprels and "" not in tree.deprels
                     else (str(d or "_") for d in tree.deprels)))
    return Graph(tuple(features), heads, deprels, sent_id)


def _predicted(rows: list[WordRow], tree: TreeVersion | StoredTree) -> dict[str, list[Any] | None]:
    """A parser's or the ensemble's predicted columns (:func:`~app.services.token_columns.completed_columns`)
    by ``TreeVersion`` attribute, for a sentence with words imported without UPOS; else nothing
    (gold and annotation trees, and trees parsed with gold tags, need no look at the rows)."""
    if tree.kind in ("annotation", "gold") or tree.upos is None or all(row[3] != "_" for row in rows):
        return {}
    imported = {column: [str(row[index]) for row in rows] for column, index in _COLUMN_INDEX.items()}
    shown = completed_columns(imported, {column: getattr(tree, STORED[column]) for column in COLUMNS})
    return {STORED[column]: values for column, values in shown.items()}


def _edited_features(rows: list[WordRow], edited: Mapping[str, list[object] | None],
                     misc: bool) -> list[dict[str, str]]:
    """Node features of a tree whose annotation stored some columns (they override the imported ones)."""
    lemmas, tags, xtags = ([str(v) for v in values] if (values := edited.get(attribute)) is not None
                           else [str(row[index]) for row in rows] for _, attribute, index in _EDITABLE)
    feats = edited.get("feats")
    features: list[dict[str, str]] = [{}]
    for i, row in enumerate(rows):
        node = {"form": row[1], "lemma": lemmas[i], "upos": tags[i], "xpos": xtags[i]}
        if misc and (pairs := row[6]) and pairs != "_":
            node.update(_pairs(str(pairs)))
        pairs = str(feats[i]) if feats is not None else row[5]
        if pairs and pairs != "_":
            node.update(_pairs(str(pairs)))
        features.append(node)
    return features


@lru_cache(maxsize=65536)
def _misc_and_feats(misc: str, feats: str) -> dict[str, str]:
    """The MISC pairs then the FEATS pairs (FEATS win a name both have), as one dict (only read)."""
    return {**_pairs(misc), **_pairs(feats)} if misc != "_" else _pairs(feats)


def _feats_only(misc: str, feats: str) -> dict[str, str]:
    return _pairs(feats)


def _word_rows(session: DbSession, sentence_ids: Sequence[int]) -> Iterator[tuple[int, list[WordRow]]]:
    """``(id, [(id, form, lemma, upos, xpos, feats, misc) per word])`` in ``sentence_ids`` order (the
    driver's own row tuples: SQLAlchemy's rows would double the time of reading them)."""
    tokens = Token.__table__.c
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        rows = _plain_rows(session, select(tokens.sentence_id, tokens.form, tokens.lemma, tokens.upos,
                                           tokens.xpos, tokens.feats, tokens.misc)
                           .where(tokens.sentence_id.in_(chunk), tokens.word.is_not(None))
                           .order_by(tokens.sentence_id, tokens.position))
        grouped = {sid: list(group) for sid, group in groupby(rows, key=itemgetter(0))}
        for sid in chunk:
            if sid in grouped:
                yield sid, grouped[sid]


def _sent_ids(session: DbSession, sentence_ids: Sequence[int]) -> dict[int, str | None]:
    found: dict[int, str | None] = {}
    sentences = Sentence.__table__.c
    for start in range(0, len(sentence_ids), 5000):
        chunk = list(sentence_ids[start:start + 5000])
        found.update(_plain_rows(session, select(sentences.id, sentences.sent_id)
                                 .where(sentences.id.in_(chunk))))
    return found


def _plain_rows(session: DbSession, statement: Select[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``statement`` as the database driver returns them: for integer and text columns
    only (no SQLAlchemy result processing happens). Should a result ever be buffered (rows
    already taken from the cursor), its rows are read the usual way."""
    result = session.connection().execute(statement)
    try:
        if type(result.cursor_strategy) is CursorFetchStrategy:
            return list(result.cursor.fetchall())
        return [tuple(row) for row in result]
    finally:
        result.close()


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
