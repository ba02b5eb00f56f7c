"""Word-cluster features of the graph-based parsers (Koo, Carreras & Collins 2008; Razavi 2012).

A parser with a :class:`~parsing.clusters.lexicon.ClusterLexicon` appends three rows to its
token table (:meth:`~parsing.clusters.lexicon.ClusterLexicon.code_rows`): the ids of each
word's 4-bit and 6-bit path prefixes and of its full path (``-1`` at ROOT). The first-order
cluster templates are those the Razavi digest lists (§2.4, Fig. 3.8), over head (``h``) and
dependent (``d``, Koo's modifier) fields:

* cluster only: ``(hc) (mc) (hc4) (mc4) (hc,mc) (hc4,mc4) (hc6,mc6)``;
* hybrid cluster/POS: ``(hpos,mc4) (hpos,mc6) (hposA,mc4) (hposA,mc6) (hc4,mpos) (hc6,mpos)
  (hpos,mc,mpos) (hpos,mc4,mpos) (hc,hpos,mpos) (hc4,hpos,mpos)``.

In UD, ``pos`` is UPOS (``p``) and the second tag granularity ``posA`` is XPOS (``x``): PTB's
coarse tag is its first letter, UD's other tag set is the language-specific one (where a
treebank has no XPOS those templates reduce to their cluster part). Like the other arc
templates, each is hashed alone and conjoined with the bucketed signed distance; role hashes are
salted apart from :mod:`parsing.graph.templates`'s, so the two sets never share a feature.

Conventions: arrays over arcs are indexed ``[dep, head]``; index 0 is ROOT.
"""

from __future__ import annotations

import numpy as np

from parsing.clusters.lexicon import ClusterLexicon
from parsing.features import bucket_distance, hash_columns
from parsing.graph.templates import FIELDS, IntArray, role_hashes
from parsing.types import Sentence

CLUSTER_FIELDS = ("c4", "c6", "c")
"""Rows appended to the token table: 4-bit prefix, 6-bit prefix, full path
(:data:`~parsing.clusters.lexicon.PREFIX_BITS`)."""

CLUSTER_ARC_TEMPLATES = (
    "hc", "dc", "hc4", "dc4", "hc dc", "hc4 dc4", "hc6 dc6",
    "hp dc4", "hp dc6", "hx dc4", "hx dc6", "hc4 dp", "hc6 dp",
    "hp dc dp", "hp dc4 dp", "hc hp dp", "hc4 hp dp",
)  # fmt: skip
"""First-order cluster templates (module docstring)."""

_FULL_BITS = 63
_PAD = len(FIELDS)  # the token table's row of zeros


def _row(name: str) -> int:
    """Row of the extended token table holding field ``name``."""
    if name in CLUSTER_FIELDS:
        return len(FIELDS) + 1 + CLUSTER_FIELDS.index(name)
    return FIELDS.index(name)


def _compile(templates: tuple[str, ...], roles: str) -> np.ndarray:
    width = max(len(t.split()) for t in templates)
    spec = np.full((len(roles), len(templates), width), _PAD, dtype=np.intp)
    for k, template in enumerate(templates):
        used = [0] * len(roles)
        for item in template.split():
            role = roles.index(item[0])
            spec[role, k, used[role]] = _row(item[1:])
            used[role] += 1
    return spec


_SPEC = _compile(CLUSTER_ARC_TEMPLATES, "hd")


def with_clusters(tokens: IntArray, lexicon: ClusterLexicon, sentence: Sentence) -> IntArray:
    """The token table of :meth:`~parsing.graph.templates.TokenEncoder.encode` with the cluster
    rows appended: shape ``(len(FIELDS) + 4, n+1)``."""
    return np.vstack([tokens, lexicon.code_rows(sentence.forms[1:])])


def n_cluster_arc_features() -> int:
    """Cluster features per arc: ``2 * len(CLUSTER_ARC_TEMPLATES)``."""
    return 2 * len(CLUSTER_ARC_TEMPLATES)


def cluster_arc_features(tokens: IntArray, *, n_bits: int) -> IntArray:
    """Cluster feature indices of every arc, from a table with cluster rows (:func:`with_clusters`).

    Returns:
        Shape ``(n+1, n+1, 2 * len(CLUSTER_ARC_TEMPLATES))`` indexed ``[dep, head]``: the
        templates, then the same conjoined with the distance; indices in ``[0, 2**n_bits)``.
    """
    size = tokens.shape[1]
    position = np.arange(size, dtype=np.int64)
    head_hash = role_hashes(tokens, _SPEC[0], 11)  # (K, n+1)
    dep_hash = role_hashes(tokens, _SPEC[1], 12)
    base = head_hash.T[None, :, :] ^ dep_hash.T[:, None, :]
    distance = hash_columns(3, bucket_distance(position[None, :] - position[:, None]), n_bits=_FULL_BITS)
    features = np.concatenate([base, base ^ distance[:, :, None]], axis=-1)
    features &= np.int64((1 << n_bits) - 1)
    return features
