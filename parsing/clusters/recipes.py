"""Clusterings named by a short spec, and the lexicon a parser's ``clusters`` setting means.

A spec is a method and optional ``key=value`` settings joined by ``:``, e.g. ``"brown"``,
``"brown:clusters=200"``, ``"context:seed=2"``. A parser's ``clusters`` hyperparameter is a
:class:`~parsing.clusters.lexicon.ClusterLexicon`, the path of a saved one (``.npz``), or a
spec, learned when the parser is fitted from its training sentences' words (trees unused)
plus the sentences of an optional raw text file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from parsing.clusters.brown import brown_clusters
from parsing.clusters.context import context_clusters
from parsing.clusters.corpus import read_text, sentence_words
from parsing.clusters.lexicon import ClusterLexicon
from parsing.specs import parse_spec
from parsing.types import Sentence

METHODS: dict[str, Callable[..., ClusterLexicon]] = {"brown": brown_clusters, "context": context_clusters}
"""Clustering methods by spec name; each takes sentences and ``n_clusters``, ``min_count``, ``seed``."""


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A clustering method and its settings.

    Examples:
        >>> ClusterSpec.parse("context:seed=2:clusters=50")
        ClusterSpec(method='context', n_clusters=50, min_count=2, seed=2)
    """

    method: str = "brown"
    n_clusters: int = 100
    min_count: int = 2
    seed: int = 0

    @classmethod
    def parse(cls, spec: str) -> ClusterSpec:
        """Read ``method[:key=value]...`` (keys ``clusters``, ``min_count``, ``seed``).

        Raises:
            ValueError: an unknown method or key, or a value that is not an integer.
        """
        keys = {"clusters": "n_clusters", "min_count": "min_count", "seed": "seed"}
        method, values = parse_spec(spec, METHODS, keys, "clustering")
        return cls(method, **values)

    def learn(self, sentences: Iterable[Sequence[str]]) -> ClusterLexicon:
        """The lexicon of this clustering of ``sentences`` (lists of forms)."""
        return METHODS[self.method](sentences, n_clusters=self.n_clusters, min_count=self.min_count,
                                    seed=self.seed)


def resolve_lexicon(clusters: ClusterLexicon | str, training: Sequence[Sentence],
                    text: str | None = None) -> ClusterLexicon:
    """The lexicon a parser's ``clusters`` setting names (module docstring).

    Args:
        clusters: a lexicon, the path of a saved lexicon, or a spec.
        training: the parser's training sentences (their words feed a spec's clustering).
        text: a raw text file (one sentence per line) whose sentences are added to a spec's.
    """
    if isinstance(clusters, ClusterLexicon):
        return clusters
    if clusters.endswith(".npz") or Path(clusters).is_file():
        return ClusterLexicon.load(clusters)
    words = sentence_words(training) + (read_text(text) if text else [])
    return ClusterSpec.parse(clusters).learn(words)
