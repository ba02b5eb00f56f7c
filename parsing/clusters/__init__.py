"""Word clusters learned from unlabelled text, as features for the parsers.

Razavi (2012) and Koo, Carreras & Collins (2008): hierarchical word clusters give a parser
word classes learned from raw text; several *different* clusterings give members that differ
only by their clusters, for an ensemble. :mod:`~parsing.clusters.brown` is Brown clustering
(exact merges over a bounded active set), :mod:`~parsing.clusters.context` a seeded divisive
clustering of reduced context vectors; both give a :class:`ClusterLexicon` (word → bit-string
path), which :mod:`~parsing.clusters.recipes` builds from a short spec (``"brown"``,
``"context:seed=2"``).
"""

from parsing.clusters.lexicon import UNKNOWN_WORD, ClusterLexicon, is_prefix_code, normalize_word

__all__ = ["UNKNOWN_WORD", "ClusterLexicon", "is_prefix_code", "normalize_word"]
