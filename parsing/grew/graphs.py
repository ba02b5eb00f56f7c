"""Trees as the matcher sees them, and a corpus of them with a lazy inverted index.

A :class:`Graph` is one sentence: per word (ids ``1..n`` as in CoNLL-U; position 0 is ROOT) its
features (``form``, ``lemma``, ``upos``, ``xpos``, every FEATS pair, and every MISC pair when
given), its head and its deprel. A :class:`Corpus` indexes, per feature name, which words of
which sentences carry each value, built the first time a pattern asks for that feature.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from parsing.types import Sentence

DEPREL = "__deprel__"
"""The index key of the incoming edges' labels."""


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while building many small containers (graphs, an
    index): its passes over a growing heap cost more than the building itself (issue #32: reading
    100,000 words of trees for a search took 2.6 s with it, 1.2-1.9 s without). Reference counting
    still frees everything; the collector is back on afterwards if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_pairs(text: str) -> dict[str, str]:
    """``"Case=Nom|Number=Sing"`` → ``{"Case": "Nom", "Number": "Sing"}``; ``"_"`` → ``{}``.

    A MISC entry without ``=`` (``SpaceAfter`` alone is not one, but some files have such) is
    kept with the value ``""``.
    """
    if text in ("_", ""):
        return {}
    pairs: dict[str, str] = {}
    for entry in text.split("|"):
        name, _, value = entry.partition("=")
        if name:
            pairs[name] = value
    return pairs


@dataclass(slots=True)
class Graph:
    """One tree. ``features[0]`` (ROOT) is empty; ``heads[w]`` is -1 when unknown; ``children[w]``:
    the words whose head is ``w``, in order, found the first time a pattern asks (one with no edge
    never does). Lists or tuples: a corpus built for search holds tuples (a leaf's children are
    the one empty tuple), which the garbage collector stops tracking after one look, so 100,000
    words of them do not make its passes slower."""

    features: Sequence[dict[str, str]]
    heads: Sequence[int]
    deprels: Sequence[str]
    sent_id: str | None = None
    _children: tuple[tuple[int, ...], ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def children(self) -> tuple[tuple[int, ...], ...]:
        if self._children is None:
            heads = self.heads
            n = len(heads)
            children: list[tuple[int, ...]] = [()] * n
            for word in range(1, n):
                head = heads[word]
                if 0 <= head < n:
                    children[head] += (word,)
            self._children = tuple(children)
        return self._children

    def __len__(self) -> int:
        """Number of words (ROOT excluded)."""
        return len(self.heads) - 1


def graph_of(sentence: Sentence, misc: Sequence[str] | None = None) -> Graph:
    """The :class:`Graph` of a :class:`~parsing.types.Sentence`; ``misc``: one MISC string per
    word (``n`` entries, ROOT excluded), when known."""
    features: list[dict[str, str]] = [{}]
    for word in range(1, len(sentence.forms)):
        node = {
            "form": sentence.forms[word],
            "lemma": sentence.lemmas[word],
            "upos": sentence.upos[word],
            "xpos": sentence.xpos[word],
        }
        if misc is not None:
            node.update(parse_pairs(misc[word - 1]))
        node.update(parse_pairs(sentence.feats[word]))
        features.append(node)
    return Graph(features, [int(h) for h in sentence.heads], list(sentence.deprels), sentence.sent_id)


class Corpus:
    """Graphs with an inverted index: ``postings(name)[value][sentence] = (word, ...)``."""

    def __init__(self, graphs: Sequence[Graph]) -> None:
        self.graphs = list(graphs)
        self._postings: dict[str, dict[str, dict[int, tuple[int, ...]]]] = {}

    def __len__(self) -> int:
        return len(self.graphs)

    @property
    def words(self) -> int:
        """Number of words in all graphs."""
        return sum(len(graph) for graph in self.graphs)

    def postings(self, name: str) -> dict[str, dict[int, tuple[int, ...]]]:
        """Value → sentence index → words with that value of feature ``name`` (or of the incoming
        label, for :data:`DEPREL`); built on first use."""
        if name not in self._postings:
            table: dict[str, dict[int, tuple[int, ...]]] = {}
            with paused_gc():
                for index, graph in enumerate(self.graphs):
                    values = graph.deprels if name == DEPREL else [node.get(name) for node in graph.features]
                    here: dict[str, list[int]] = {}
                    for word in range(1, len(values)):
                        value = values[word]
                        if value is not None:
                            if (words := here.get(value)) is None:
                                here[value] = [word]
                            else:
                                words.append(word)
                    for value, words in here.items():  # tuples: the collector soon stops tracking them
                        if (sentences := table.get(value)) is None:
                            table[value] = {index: tuple(words)}
                        else:
                            sentences[index] = tuple(words)
            self._postings[name] = table
        return self._postings[name]

    def words_with(self, name: str, values: Sequence[str], sentence: int) -> list[int]:
        """Words of graph ``sentence`` whose ``name`` is one of ``values``, in order."""
        table = self.postings(name)
        found: list[int] = []
        for value in values:
            found.extend(table.get(value, {}).get(sentence, ()))
        return sorted(found) if len(values) > 1 else found

    def sentences_with(self, name: str, values: Sequence[str]) -> set[int]:
        """Indexes of the graphs where some word has one of ``values`` for ``name``."""
        table = self.postings(name)
        found: set[int] = set()
        for value in values:
            found.update(table.get(value, {}))
        return found
