"""Per-UPOS member weights by fuzzy clustering (Green 2013 §3.1.2; digest 003 §2.2).

On tuning data every UPOS tag ``t`` gets a profile ``x_t`` (shape ``(M,)``): each member's
head accuracy on words tagged ``t``. Fuzzy C-means with the cosine distance (Green: 3
clusters, 20 iterations; fuzzifier ``m = 2``, seeded random init, as the digest recommends)
gives memberships ``u[t, k]`` (rows sum to 1) and centroids ``v[k]``; cluster ``k``'s model
weights are the normalised centroid ``w[k, j] = v[k, j] / sum_j v[k, j]`` (Table 3.7). The
weight of an arc ``h -> d`` proposed by the members ``S`` is Green's equation (Fig. 3.4)

    Weight(h -> d) = sum_k u[pos(d), k] * sum_{j in S} w[k, j] = sum_{j in S} omega_j(pos(d))

with ``omega_j(t) = sum_k u[t, k] w[k, j]``. ``exponent`` X raises each ``omega_j`` to the X-th
power (the digest's reading (i) of Green's POS^10). Tags unseen in tuning get ``u = 1/K``.
The tree is then the maximum spanning tree of these votes, as in :mod:`~parsing.ensemble.voting`.

Conventions (see :mod:`parsing`): profiles ``X`` have shape ``(T, M)`` (tags x members),
memberships ``(T, K)``, centroids and cluster weights ``(K, M)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from parsing.base import BaseParser
from parsing.ensemble.base import Ensemble, FloatArray, MemberParses
from parsing.ensemble.voting import DEFAULT_MEMBERS, combine_votes
from parsing.types import Parse, Sentence


def _distances(points: FloatArray, centroids: FloatArray, metric: str) -> FloatArray:
    """Distances of every point to every centroid, shape ``(T, K)``."""
    if metric == "euclidean":
        diff = points[:, None, :] - centroids[None, :, :]
        euclid: FloatArray = np.sqrt((diff**2).sum(axis=2))
        return euclid
    if metric != "cosine":
        raise ValueError(f"metric must be 'cosine' or 'euclidean', not {metric!r}")
    p_norm = np.linalg.norm(points, axis=1, keepdims=True)
    c_norm = np.linalg.norm(centroids, axis=1, keepdims=True)
    cos = (points @ centroids.T) / np.maximum(p_norm * c_norm.T, 1e-300)
    cos[(p_norm[:, 0] == 0)[:, None] | (c_norm[:, 0] == 0)[None, :]] = 0.0
    cosine: FloatArray = np.clip(1.0 - cos, 0.0, 2.0)
    return cosine


def _memberships(distances: FloatArray, fuzzifier: float) -> FloatArray:
    """``u_tk = 1 / sum_l (d_tk / d_tl)^(2/(m-1))``; a point at distance 0 is assigned hard."""
    zero = distances <= 1e-12
    power = 2.0 / (fuzzifier - 1.0)
    logits = -power * np.log(np.maximum(distances, 1e-12))  # u_tk ∝ d_tk^(-power), in log space
    inverse = np.exp(logits - logits.max(axis=1, keepdims=True))
    soft = inverse / inverse.sum(axis=1, keepdims=True)
    hard = zero / np.maximum(zero.sum(axis=1, keepdims=True), 1)
    memberships: FloatArray = np.where(zero.any(axis=1, keepdims=True), hard, soft)
    return memberships


def fuzzy_cmeans(
    points: ArrayLike,
    n_clusters: int,
    *,
    fuzzifier: float = 2.0,
    n_iter: int = 20,
    metric: str = "cosine",
    random_state: int | None = 0,
) -> tuple[FloatArray, FloatArray]:
    """Fuzzy C-means (Bezdek 1981) for ``n_iter`` iterations from a seeded random start.

    Each iteration: ``v_k = sum_t u_tk^m x_t / sum_t u_tk^m``, then the memberships from the
    distances to the new centroids.

    Args:
        points: shape ``(T, M)``.
        n_clusters: K, ``1 <= K <= T``.
        fuzzifier: m > 1.
        n_iter: iterations (Green: 20).
        metric: ``"cosine"`` (1 - cosine similarity, Green's choice) or ``"euclidean"``.
        random_state: seed of the initial memberships.

    Returns:
        ``(memberships, centroids)`` of shapes ``(T, K)`` (rows sum to 1) and ``(K, M)``.

    Examples:
        >>> u, v = fuzzy_cmeans([[1, 0], [0.9, 0.1], [0, 1]], 2, metric="euclidean")
        >>> bool(u[0].argmax() == u[1].argmax() != u[2].argmax()), np.allclose(u.sum(axis=1), 1)
        (True, True)
    """
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or not 1 <= n_clusters <= x.shape[0]:
        raise ValueError(f"need 1 <= n_clusters <= T for points of shape {x.shape}, got {n_clusters}")
    if fuzzifier <= 1.0:
        raise ValueError(f"fuzzifier must be > 1, not {fuzzifier}")
    rng = np.random.default_rng(random_state)
    memberships = rng.dirichlet(np.ones(n_clusters), size=x.shape[0])
    centroids = np.zeros((n_clusters, x.shape[1]))
    for _ in range(n_iter):
        weight = memberships**fuzzifier  # (T, K)
        centroids = (weight.T @ x) / weight.sum(axis=0)[:, None].clip(min=1e-300)
        memberships = _memberships(_distances(x, centroids, metric), fuzzifier)
    return memberships, centroids


def upos_profiles(gold: Sequence[Sentence], parses: MemberParses) -> tuple[list[str], FloatArray]:
    """Each member's head accuracy per UPOS of the dependent on ``gold``.

    Returns:
        ``(tags, profiles)``: sorted tags and an array of shape ``(T, M)``.
    """
    tags = np.array([t for s in gold for t in s.upos[1:]], dtype=np.str_)
    gold_heads = np.concatenate([s.heads[1:] for s in gold]) if gold else np.zeros(0, np.intp)
    correct = np.stack([np.concatenate([p.heads[1:] for p in member]) == gold_heads
                        for member in parses])  # (M, W)
    names, inverse = np.unique(tags, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(names))
    profiles = np.stack([np.bincount(inverse, weights=row, minlength=len(names)) for row in correct], axis=1)
    return [str(t) for t in names], profiles / counts[:, None]


def pos_model_weights(memberships: ArrayLike, cluster_weights: ArrayLike, *, exponent: float = 1.0
                      ) -> FloatArray:
    """``omega_j = (sum_k u_k w[k, j]) ** exponent`` for one tag's memberships ``u``.

    Summing ``omega_j`` over the members proposing an arc gives Green's edge weight.

    Args:
        memberships: shape ``(K,)`` (or ``(T, K)`` for several tags).
        cluster_weights: shape ``(K, M)``.

    Returns:
        shape ``(M,)`` (or ``(T, M)``).

    Examples:
        >>> # Green's VBZ example: ZPar and Charniak propose the arc (39.59 with his rounding)
        >>> omega = pos_model_weights([0.971, 0.025, 0.0036], [[21.48, 18.38], [26.46, 3.91], [31.68, 8.70]])
        >>> round(float(omega.sum()), 1)
        39.6
    """
    mixed = np.asarray(memberships, dtype=np.float64) @ np.asarray(cluster_weights, dtype=np.float64)
    weights: FloatArray = mixed**exponent
    return weights


class FuzzyPosVoting(Ensemble):
    """Arc voting with per-UPOS member weights from fuzzy C-means (Green 2013 §3.1.2).

    Args:
        members: parser instances (cloned) or member names.
        n_clusters: K (Green: 3); lowered to the number of tags seen when fewer.
        fuzzifier: m of fuzzy C-means.
        n_iter: iterations of fuzzy C-means (Green: 20).
        metric: ``"cosine"`` (Green) or ``"euclidean"``.
        exponent: X of the POS^X scheme (1 = plain POS weights).
        projective, single_root, tuning_folds, random_state: see
            :class:`~parsing.ensemble.base.Ensemble`.

    Attributes:
        tags_: UPOS tags seen in tuning; ``profiles_`` ``(T, M)``; ``memberships_`` ``(T, K)``;
        centroids_ and cluster_weights_ ``(K, M)``; ``tag_weights_`` ``(T, M)`` (omega per
        tag); ``default_weights_`` ``(M,)`` for unseen tags.
    """

    name = "fuzzy"
    description = "arc voting with per-UPOS weights from fuzzy C-means (Green 2013)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = DEFAULT_MEMBERS,
        *,
        n_clusters: int = 3,
        fuzzifier: float = 2.0,
        n_iter: int = 20,
        metric: str = "cosine",
        exponent: float = 1.0,
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        self.members = members
        self.n_clusters = n_clusters
        self.fuzzifier = fuzzifier
        self.n_iter = n_iter
        self.metric = metric
        self.exponent = exponent
        self.projective = projective
        self.single_root = single_root
        self.tuning_folds = tuning_folds
        self.random_state = random_state

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Cluster the members' per-UPOS accuracy profiles on ``tuning``."""
        if not tuning:
            raise ValueError("fuzzy POS weighting needs tuning sentences")
        self.tags_, self.profiles_ = upos_profiles(tuning, parses)
        k = min(self.n_clusters, len(self.tags_))
        self.memberships_, self.centroids_ = fuzzy_cmeans(
            self.profiles_, k, fuzzifier=self.fuzzifier, n_iter=self.n_iter, metric=self.metric,
            random_state=self.random_state)
        totals = self.centroids_.sum(axis=1, keepdims=True)
        uniform = np.full_like(self.centroids_, 1.0 / self.centroids_.shape[1])
        normalised = self.centroids_ / np.where(totals > 0, totals, 1.0)
        self.cluster_weights_ = np.where(totals > 0, normalised, uniform)
        mix = self.cluster_weights_
        self.tag_weights_ = pos_model_weights(self.memberships_, mix, exponent=self.exponent)
        self.default_weights_ = pos_model_weights(np.full(k, 1.0 / k), mix, exponent=self.exponent)
        return self

    def token_weights(self, upos: Sequence[str]) -> FloatArray:
        """Member weights for every position of a sentence with tags ``upos``, shape ``(M, n+1)``."""
        index = {tag: i for i, tag in enumerate(self.tags_)}
        columns = [self.tag_weights_[index[t]] if t in index else self.default_weights_ for t in upos]
        weights: FloatArray = np.stack(columns, axis=1)
        return weights

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """Arc voting with the weights of each dependent's UPOS."""
        return combine_votes(parses, self.token_weights(sentence.upos), projective=self.projective,
                             single_root=self.single_root)
