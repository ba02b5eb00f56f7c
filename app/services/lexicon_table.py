"""The lexicon table of a treebank (issue #32): :func:`parsing.lexicon.lexicon` over the trees of
one source and split (the sources of :mod:`app.services.search`), with each variant's places as
sentences of the database.

The graphs are built as a search builds them (imported word columns, overridden by those an
annotation stored) but without MISC, so a node's features other than form, lemma, UPOS and
XPOS are its FEATS.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.models import Treebank
from app.services import DbSession
from app.services.search import check_source, graphs_of
from app.services.sources import check_split, load_trees, split_sentence_ids
from parsing.lexicon import Compare, Entry, lexicon


@dataclass(frozen=True)
class Place:
    """One word of a variant: its sentence (database id and ``sent_id``) and word id."""

    sentence_id: int
    sent_id: str | None
    word: int


@dataclass(frozen=True)
class Lexicon:
    """The varying entries (``"rare"`` order) and, per graph index, its sentence."""

    source: str
    split: str | None
    compare: Compare
    entries: list[Entry]
    sentences: list[tuple[int, str | None]]
    searched: int

    def places(self, where: tuple[tuple[int, int], ...]) -> list[Place]:
        """A variant's ``where`` as :class:`Place` s."""
        return [Place(*self.sentences[index], word) for index, word in where]


def treebank_lexicon(
    session: DbSession, treebank: Treebank, *, source: str = "gold", split: str | None = None,
    compare: Compare = "feats",
) -> Lexicon:
    """The lexicon of the ``source`` trees of ``treebank`` (one ``split`` or all).

    :raise SourceError: an unknown source or split. :raise ValueError: an unknown ``compare``.
    """
    check_source(session, treebank, source)
    split = check_split(split)
    ids = split_sentence_ids(session, treebank, split)
    trees = load_trees(session, treebank, ids, source).trees
    graphs = graphs_of(session, [sid for sid in ids if sid in trees], trees, misc=False)
    entries = lexicon([graph for _, graph in graphs], compare=compare)
    return Lexicon(source, split, compare, entries, [(sid, graph.sent_id) for sid, graph in graphs],
                   len(graphs))
