"""Brown clustering (Brown et al. 1992) with a bounded active set (Liang 2005), in numpy.

The class-based bigram model's likelihood is, up to a constant, the average mutual
information (AMI) between adjacent clusters:

    AMI = Σ_{x,y} q(x, y),   q(x, y) = p(x, y) · log( p(x, y) / (p(x) p(y)) )

(``p(x, y)``: share of bigrams from cluster ``x`` to ``y``; ``p(x)``: share of tokens in ``x``).
Words enter in decreasing frequency. ``C`` clusters are active; each new word enters as a
cluster of its own, then the pair of active clusters whose merge loses the least AMI is
merged, back to ``C``. When every word has entered, the ``C`` clusters are merged the same way
until one is left; those last merges are the binary tree whose paths are the words' bit
strings (the left part of a merge is ``0``, the right part ``1``).

Exactness at ``O(C²)`` numpy work per step: the table ``loss[i, j]`` of every active pair is
kept up to date. The loss of merging ``i`` and ``j`` is

    loss(i, j) = s(i) + s(j) - q(i, j) - q(j, i) - merged(i+j),

``s(x)`` the AMI terms involving ``x``, ``merged(i+j)`` those of the merged cluster. Merging
``a`` and ``b`` into ``m`` (or a new word ``m`` entering) changes ``loss[i, j]`` of a pair
outside them only through the terms of the clusters ``a``, ``b``, ``m`` themselves, so the whole
table is updated by subtracting the terms with ``a`` and ``b`` (before) and adding those
with ``m`` (after), each a few ``(K, K)`` array operations; the row of ``m`` is recomputed
(``_refresh``). Ties go to the lowest slot pair; words of equal frequency enter in
an order fixed by the corpus's seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from parsing.clusters.corpus import Corpus
from parsing.clusters.lexicon import ClusterLexicon

FloatArray = NDArray[np.float64]


def brown_clusters(
    sentences: Iterable[Sequence[str]], *, n_clusters: int = 100, min_count: int = 2, seed: int = 0,
) -> ClusterLexicon:
    """Brown clusters of ``sentences`` (lists of forms) as bit-string paths.

    Args:
        n_clusters: ``C``, the active clusters (the leaves of the path tree).
        min_count: words seen fewer times are clustered as one unknown word.
        seed: orders words of equal frequency (the same seed gives the same clustering).
    """
    corpus = Corpus.build(sentences, min_count=min_count, seed=seed)
    slots, merges = brown_merges(corpus, n_clusters)
    paths = tree_paths(merges, sorted(set(slots.tolist())))
    words = zip(corpus.words, slots.tolist(), strict=True)
    return ClusterLexicon({word: paths[slot] for word, slot in words}, "brown", seed)


def brown_merges(corpus: Corpus, n_clusters: int) -> tuple[NDArray[np.int64], list[tuple[int, int]]]:
    """Run the algorithm.

    Returns:
        The final cluster slot of each word, shape ``(V,)``, and the hierarchy merges of the
        final clusters, ``(kept slot, merged slot)`` in order (``len(set(slots)) - 1`` of them).
    """
    if n_clusters < 1:
        raise ValueError("n_clusters must be at least 1")
    state = _ActiveSet(corpus, n_clusters + 1)
    for word in range(len(corpus.words)):
        state.add(word)
        if state.n_active > n_clusters:
            state.merge(*state.best_pair())
    clusters = state.slot_of_word.copy()
    hierarchy = []
    while state.n_active > 1:
        kept, merged = state.best_pair()
        state.merge(kept, merged)
        hierarchy.append((kept, merged))
    return clusters, hierarchy


_TINY = 1e-300
_FREE = 1.0  # unigram share a free slot pretends to have: keeps every log finite


class _ActiveSet:
    """The active clusters in ``K`` slots: bigram shares ``p2`` and unigram shares ``p1`` between
    slots, the AMI terms ``q = p2 · log(p2 / p1 p1)``, ``log(p1[i] + p1[j])`` and the loss table
    (``inf`` on the diagonal and for free slots)."""

    def __init__(self, corpus: Corpus, size: int) -> None:
        self.bigrams = corpus.bigrams
        self.reverse = corpus.bigrams.T.tocsr()
        self.n_bigrams = max(float(corpus.bigrams.sum()), 1.0)
        self.unigram = corpus.counts / max(float(corpus.counts.sum()), 1.0)
        self.p2 = np.zeros((size, size))
        self.p1 = np.full(size, _FREE)
        self.log_p1 = np.log(self.p1)
        self.log_pair = np.log(self.p1[:, None] + self.p1[None, :])
        self.q = np.zeros((size, size))
        self.active = np.zeros(size, dtype=bool)
        self.loss = np.full((size, size), np.inf)
        self.slot_of_word = np.full(len(corpus.words), -1, dtype=np.int64)

    @property
    def n_active(self) -> int:
        return int(self.active.sum())

    def add(self, word: int) -> None:
        """Word ``word`` enters as a cluster of its own in the first free slot."""
        slot = int(np.flatnonzero(~self.active)[0])
        self.slot_of_word[word] = slot
        self.active[slot] = True
        self.p2[slot, :] = self._slot_counts(self.bigrams, word)
        self.p2[:, slot] = self._slot_counts(self.reverse, word)
        self._set_unigram(slot, float(self.unigram[word]))
        self.loss += self._terms_with(slot)
        self._refresh(slot)

    def _slot_counts(self, matrix: sp.csr_matrix, word: int) -> FloatArray:
        """Bigram shares between ``word`` and each slot, along row ``word`` of ``matrix``."""
        start, end = matrix.indptr[word], matrix.indptr[word + 1]
        slots = self.slot_of_word[matrix.indices[start:end]]
        inside = slots >= 0
        values = matrix.data[start:end][inside]
        return np.bincount(slots[inside], weights=values, minlength=len(self.p1)) / self.n_bigrams

    def best_pair(self) -> tuple[int, int]:
        """The active pair ``(i, j)``, ``i < j``, whose merge loses the least AMI (the table is
        symmetric, so the first minimum in row order has ``i < j``)."""
        i, j = np.unravel_index(int(np.argmin(self.loss)), self.loss.shape)
        return min(int(i), int(j)), max(int(i), int(j))

    def merge(self, kept: int, merged: int) -> None:
        """Merge slot ``merged`` into slot ``kept``; ``merged`` becomes free."""
        self.loss -= self._terms_with(kept) + self._terms_with(merged)
        self.p2[kept, :] += self.p2[merged, :]
        self.p2[:, kept] += self.p2[:, merged]
        self.p2[merged, :] = 0.0
        self.p2[:, merged] = 0.0
        self.active[merged] = False
        total = self.p1[kept] + self.p1[merged]
        self._set_unigram(merged, _FREE)
        self._set_unigram(kept, float(total))
        self.slot_of_word[self.slot_of_word == merged] = kept
        self.loss += self._terms_with(kept)
        self.loss[merged, :] = np.inf
        self.loss[:, merged] = np.inf
        self._refresh(kept)

    def _set_unigram(self, slot: int, share: float) -> None:
        """Set ``p1[slot]`` and bring ``log_p1``, ``log_pair`` and ``q``'s row and column up to date."""
        self.p1[slot] = share
        self.log_p1[slot] = np.log(share)
        pair = np.log(share + self.p1)
        self.log_pair[slot, :] = pair
        self.log_pair[:, slot] = pair
        self.q[slot, :] = _xlogx(self.p2[slot, :], self.log_p1[slot] + self.log_p1)
        self.q[:, slot] = _xlogx(self.p2[:, slot], self.log_p1 + self.log_p1[slot])

    def _terms_with(self, c: int) -> FloatArray:
        """For every pair ``(i, j)`` (neither is ``c``): the part of ``loss(i, j)`` made of the
        AMI terms between cluster ``c`` and ``i``, ``j`` or ``i+j``, shape ``(K, K)``."""
        alone = self.q[:, c] + self.q[c, :]  # q(i,c) + q(c,i)
        into_c = self.p2[:, c][:, None] + self.p2[:, c][None, :]
        from_c = self.p2[c, :][:, None] + self.p2[c, :][None, :]
        log_denominator = self.log_pair + self.log_p1[c]
        merged = _xlogx(into_c, 0.0) + _xlogx(from_c, 0.0) - (into_c + from_c) * log_denominator
        result: FloatArray = alone[:, None] + alone[None, :] - merged
        return result

    def _refresh(self, x: int) -> None:
        """Recompute ``loss(x, c)`` for every ``c``."""
        p2, q = self.p2, self.q
        involving = q.sum(axis=1) + q.sum(axis=0) - np.diag(q)  # s(c): the terms with c
        log_merged = np.log(self.p1[x] + self.p1)  # (c,)
        out = p2[x][None, :] + p2  # (c, d): x+c → d
        into = p2[:, x][None, :] + p2.T  # (c, d): d → x+c
        log_denominator = log_merged[:, None] + self.log_p1[None, :]
        outside = _xlogx(out, 0.0) + _xlogx(into, 0.0) - (out + into) * log_denominator
        outside[:, x] = 0.0
        np.fill_diagonal(outside, 0.0)
        inner = p2[x, x] + p2[x, :] + p2[:, x] + np.diag(p2)
        merged = outside.sum(axis=1) + _xlogx(inner, 2 * log_merged)
        row = involving[x] + involving - q[x, :] - q[:, x] - merged
        row[~self.active] = np.inf
        row[x] = np.inf
        self.loss[x, :] = row
        self.loss[:, x] = row


def _xlogx(p: FloatArray, log_denominator: FloatArray | float) -> FloatArray:
    """``p · (log p - log_denominator)``, 0 where ``p`` is 0."""
    result: FloatArray = p * (np.log(np.maximum(p, _TINY)) - log_denominator)
    return result


def ami_terms(p2: FloatArray, p1: FloatArray) -> FloatArray:
    """``q(x, y) = p2 · log(p2 / (p1[x] p1[y]))`` of every slot pair, shape ``(K, K)``; the AMI
    is its sum (a reference for tests)."""
    return _xlogx(p2, np.log(np.maximum(np.outer(p1, p1), _TINY)))


def tree_paths(merges: list[tuple[int, int]], leaves: list[int]) -> dict[int, str]:
    """Bit string of each leaf of a merge tree: ``merges`` are ``(kept, merged)`` slot pairs in
    order, each joining the current trees of the two slots (``kept``'s side ``0``); ``leaves`` are
    the slots before any merge. A single leaf gets ``"0"``.

    Examples:
        >>> sorted(tree_paths([(0, 2), (0, 1)], [0, 1, 2]).items())
        [(0, '00'), (1, '1'), (2, '01')]
    """
    node_of_slot = {slot: slot for slot in leaves}  # leaves are named by their slot
    children: dict[int, tuple[int, int]] = {}
    next_node = max(leaves, default=0) + 1
    for kept, merged in merges:
        children[next_node] = (node_of_slot[kept], node_of_slot[merged])
        node_of_slot[kept] = next_node
        next_node += 1
    paths: dict[int, str] = {}
    stack = [(next_node - 1, "")] if merges else [(leaf, "0") for leaf in leaves]
    while stack:
        node, path = stack.pop()
        if node in children:
            left, right = children[node]
            stack += [(left, path + "0"), (right, path + "1")]
        else:
            paths[node] = path
    return paths
