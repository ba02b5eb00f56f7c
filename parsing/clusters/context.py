"""A second, different hierarchical word clustering: divisive k-means on reduced context vectors.

Each word is described by the words next to it: counts of its left and right neighbours among
the ``n_context`` most frequent words (plus sentence boundaries), each side normalised to a
distribution and square-rooted (Hellinger), reduced by a seeded truncated SVD to
``n_components`` dimensions and L2-normalised. The words are then split top-down: the leaf with
the largest (frequency-weighted) spread is cut in two by a seeded 2-means, until there are
``n_clusters`` leaves; the splits are the binary tree, so a word's path is the sequence of sides
it went to (``0`` / ``1``). Different seeds give different SVD bases and k-means starts, hence
different but comparable clusterings: the diverse annotations an ensemble wants (Razavi 2012
got them from split-merge HMMs with different seeds).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.decomposition import TruncatedSVD
from sklearn.preprocessing import normalize

from parsing.clusters.corpus import Corpus
from parsing.clusters.lexicon import ClusterLexicon


def context_clusters(
    sentences: Iterable[Sequence[str]], *, n_clusters: int = 100, min_count: int = 2, seed: int = 0,
    n_context: int = 500, n_components: int = 50,
) -> ClusterLexicon:
    """Hierarchical clusters of the words of ``sentences`` (lists of forms) as bit-string paths.

    Args:
        n_clusters: leaves of the tree (at most the number of distinct words).
        min_count: words seen fewer times are clustered as one unknown word.
        seed: seeds the SVD and every 2-means split.
        n_context: the most frequent words used as context features.
        n_components: dimensions kept by the SVD.
    """
    corpus = Corpus.build(sentences, min_count=min_count, seed=seed)
    if not corpus.words:
        return ClusterLexicon({}, "context", seed)
    vectors = context_vectors(corpus, n_context=n_context, n_components=n_components, seed=seed)
    weights = np.sqrt(corpus.counts.astype(np.float64))
    paths = divisive_paths(vectors, weights, n_clusters=n_clusters, seed=seed)
    return ClusterLexicon(dict(zip(corpus.words, paths, strict=True)), "context", seed)


def context_vectors(corpus: Corpus, *, n_context: int, n_components: int, seed: int) -> NDArray[np.float64]:
    """Reduced, L2-normalised neighbour distributions of every word: shape ``(V, d)``,
    ``d = min(n_components, features - 1, V - 1)`` (at least 1)."""
    size = len(corpus.words)
    width = min(n_context, size) + 1  # the last column is the sentence boundary
    boundary = width - 1
    rows: list[NDArray[np.int64]] = []
    columns: list[NDArray[np.int64]] = []
    for sentence in corpus.sentences:
        if len(sentence) == 0:
            continue
        left = np.concatenate([[boundary], np.where(sentence[:-1] < boundary, sentence[:-1], -1)])
        right = np.concatenate([np.where(sentence[1:] < boundary, sentence[1:], -1), [boundary]])
        rows += [sentence, sentence]
        columns += [left, np.where(right >= 0, right + width, -1)]
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    column = np.concatenate(columns) if columns else np.zeros(0, np.int64)
    keep = column >= 0
    ones = np.ones(int(keep.sum()))
    counts = sp.coo_matrix((ones, (row[keep], column[keep])), shape=(size, 2 * width)).tocsr()
    sides = [normalize(counts[:, :width], norm="l1"), normalize(counts[:, width:], norm="l1")]
    features = sp.hstack(sides).tocsr().sqrt()
    dimensions = max(1, min(n_components, features.shape[1] - 1, size - 1))
    if dimensions >= min(features.shape):
        dense: NDArray[np.float64] = normalize(features.toarray())
        return dense
    reduced = TruncatedSVD(dimensions, random_state=seed).fit_transform(features)
    result: NDArray[np.float64] = normalize(reduced)
    return result


def divisive_paths(vectors: NDArray[np.float64], weights: NDArray[np.float64], *, n_clusters: int,
                   seed: int) -> list[str]:
    """Bit-string path of every row of ``vectors`` from a top-down binary split.

    The leaf with the largest weighted sum of squared distances to its mean is split by
    :func:`two_means`, until ``n_clusters`` leaves or no leaf can be split.
    """
    rng = np.random.default_rng(seed)
    paths = [""] * len(vectors)
    heap: list[tuple[float, str, NDArray[np.intp]]] = []
    _push(heap, "", np.arange(len(vectors)), vectors, weights)
    leaves: list[tuple[str, NDArray[np.intp]]] = []
    while heap and len(heap) + len(leaves) < n_clusters:
        spread, path, members = heapq.heappop(heap)
        if -spread <= 0 or len(members) < 2:
            leaves.append((path, members))
            continue
        labels = two_means(vectors[members], weights[members], rng)
        if labels.min() == labels.max():  # identical points: cut the list in two
            labels = (np.arange(len(members)) >= len(members) // 2).astype(int)
        for side in (0, 1):
            _push(heap, path + str(side), members[labels == side], vectors, weights)
    for _, path, members in heap:
        leaves.append((path, members))
    for path, members in leaves:
        for member in members.tolist():
            paths[member] = path or "0"
    return paths


def two_means(points: NDArray[np.float64], weights: NDArray[np.float64], rng: np.random.Generator,
              *, n_iter: int = 30) -> NDArray[np.intp]:
    """Weighted 2-means (Lloyd's algorithm from a k-means++ start drawn from ``rng``): a 0/1
    label per point, shape ``(len(points),)``."""
    probability = weights / weights.sum()
    first = points[rng.choice(len(points), p=probability)]
    distance = ((points - first) ** 2).sum(axis=1) * weights
    second = points[rng.choice(len(points), p=distance / distance.sum())] if distance.sum() > 0 else first
    centres = np.stack([first, second])
    labels = np.zeros(len(points), dtype=np.intp)
    for _ in range(n_iter):
        squared = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        new = np.argmin(squared, axis=1).astype(np.intp)
        if _ and np.array_equal(new, labels):
            break
        labels = new
        for side in (0, 1):
            mass = weights[labels == side]
            if mass.sum() > 0:
                centres[side] = (mass[:, None] * points[labels == side]).sum(axis=0) / mass.sum()
    return labels


def _push(heap: list[tuple[float, str, NDArray[np.intp]]], path: str, members: NDArray[np.intp],
          vectors: NDArray[np.float64], weights: NDArray[np.float64]) -> None:
    """Queue a leaf by its spread (negated: ``heapq`` pops the smallest; ties by path)."""
    points, mass = vectors[members], weights[members]
    centre = (mass[:, None] * points).sum(axis=0) / max(float(mass.sum()), 1e-12)
    spread = float((mass * ((points - centre) ** 2).sum(axis=1)).sum())
    heapq.heappush(heap, (-spread, path, members))
