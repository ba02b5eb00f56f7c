"""Score-level ensemble with exact inference (Haffari, Razavi & Sarkar 2011; Razavi 2012 ch. 4).

Instead of voting with 1-best trees, sum the graph members' arc score matrices,
``S = sum_k alpha_k norm(s_k)``, and decode once with the same ``mst()`` (digest 000 §2.6:
exact inference over the shared hypothesis space; uniform ``alpha`` is the recommended
default). Members must expose ``score_arcs(sentence) -> scores[dep, head]`` (the graph
parsers do). Raw linear scores of separately trained models differ in scale, so each
matrix is first normalised (``normalise``):

* ``"none"`` — raw scores (Razavi's eq. 4.4; only the relative scale ``alpha`` matters);
* ``"softmax"`` — per-dependent softmax over heads, i.e. summed head posteriors;
* ``"log_softmax"`` — per-dependent log-softmax: a product of experts (Petrov 2010);
* ``"zscore"`` — the finite entries standardised per sentence.

Labels: weighted vote among the members whose 1-best tree chose the winning head.

Conventions (see :mod:`parsing`): ``scores[dep, head]``, shape ``(n+1, n+1)``, row 0 and the
diagonal ``-inf``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from parsing.base import BaseParser
from parsing.ensemble.base import Ensemble, FloatArray, MemberParses, vote_labels
from parsing.types import Parse, Scores, Sentence

NORMALISATIONS: tuple[str, ...] = ("none", "softmax", "log_softmax", "zscore")


@runtime_checkable
class ArcScorer(Protocol):
    """A member that gives the score matrix of a sentence."""

    def score_arcs(self, sentence: Sentence) -> Scores: ...


def normalise_scores(scores: ArrayLike, method: str = "softmax") -> Scores:
    """One member's score matrix made comparable across members (see the module docstring).

    Examples:
        >>> s = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
        >>> normalise_scores(s, "softmax")[1, 0].item(), normalise_scores(s, "log_softmax")[1, 0].item()
        (1.0, 0.0)
    """
    matrix = np.array(scores, dtype=np.float64, copy=True)
    matrix[0, :] = -np.inf
    np.fill_diagonal(matrix, -np.inf)
    finite = np.isfinite(matrix)
    if method == "none":
        return matrix
    if method == "zscore":
        values = matrix[finite]
        spread = float(values.std()) if values.size else 0.0
        matrix[finite] = (values - values.mean()) / (spread if spread > 0 else 1.0)
        return matrix
    if method not in ("softmax", "log_softmax"):
        raise ValueError(f"unknown normalisation {method!r}; known: {', '.join(NORMALISATIONS)}")
    rows = matrix[1:]
    top = np.max(np.where(np.isfinite(rows), rows, -np.inf), axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    log_norm = np.log(np.exp(rows - top).sum(axis=1, keepdims=True)) + top
    log_prob = rows - log_norm
    matrix[1:] = log_prob if method == "log_softmax" else np.exp(log_prob)
    matrix[~finite] = -np.inf
    return matrix


def sum_scores(matrices: Sequence[ArrayLike], weights: ArrayLike, *, normalise: str = "softmax") -> Scores:
    """``sum_k weights[k] * normalise(matrices[k])``, shape ``(n+1, n+1)``.

    An arc forbidden (``-inf``) by one member with positive weight is forbidden in the sum.
    """
    alpha = np.asarray(weights, dtype=np.float64)
    if alpha.shape != (len(matrices),):
        raise ValueError(f"{alpha.shape} weights for {len(matrices)} score matrices")
    total: FloatArray | None = None
    for matrix, weight in zip(matrices, alpha.tolist(), strict=True):
        if weight == 0:
            continue
        part = weight * normalise_scores(matrix, normalise)
        total = part if total is None else total + part
    if total is None:
        raise ValueError("at least one member needs a positive weight")
    return total


class ScoreSum(Ensemble):
    """Sum of the graph members' normalised arc scores, decoded once by MST.

    Args:
        members: graph parsers (instances or names such as ``"graph1"``, ``"graph2"``) with
            ``score_arcs``.
        normalise: one of :data:`NORMALISATIONS`.
        weights: alpha per member (``None``: uniform, Razavi's recommended default).
        projective, single_root, tuning_folds, random_state: see
            :class:`~parsing.ensemble.base.Ensemble`.
    """

    name = "score-sum"
    description = "sum of graph members' normalised arc scores, exact MST decoding (Razavi 2012)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = ("graph1", "graph2"),
        *,
        normalise: str = "softmax",
        weights: Sequence[float] | None = None,
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        self.members = members
        self.normalise = normalise
        self.weights = weights
        self.projective = projective
        self.single_root = single_root
        self.tuning_folds = tuning_folds
        self.random_state = random_state

    @property
    def needs_tuning(self) -> bool:
        return False

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Check the members can score arcs; fix the weights."""
        missing = [type(m).__name__ for m in self.members_ if not isinstance(m, ArcScorer)]
        if missing:
            raise TypeError(f"score-level ensembles need members with score_arcs(); not {missing}")
        if self.normalise not in NORMALISATIONS:
            raise ValueError(f"unknown normalisation {self.normalise!r}")
        n = len(self.members_)
        self.weights_ = np.ones(n) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        return self

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """Decode the summed scores of ``sentence``; label by the members' 1-best ``parses``."""
        matrices = [member.score_arcs(sentence) for member in self.members_]
        total = sum_scores(matrices, self.weights_, normalise=self.normalise)
        heads = self.decode(total)
        chosen = np.where(np.isfinite(total[np.arange(len(heads)), np.maximum(heads, 0)]),
                          total[np.arange(len(heads)), np.maximum(heads, 0)], np.nan)
        chosen[0] = np.nan
        return Parse(heads=heads, deprels=vote_labels(heads, parses, self.weights_),
                     arc_scores=chosen, extras={"scores": total})
