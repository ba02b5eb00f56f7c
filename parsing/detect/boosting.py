"""Gradient-boosted trees as plain arrays: fitted by scikit-learn, saved and applied without it.

scikit-learn's :class:`~sklearn.ensemble.HistGradientBoostingClassifier` holds its trees in
Cython objects that :mod:`parsing.codec` cannot store without pickle. :meth:`BoostedTrees.from_sklearn`
copies a fitted binary classifier (numeric features only) into flat arrays, and
:meth:`BoostedTrees.decision_function` applies them with numpy, with scikit-learn's own rule:
a row goes left when its value is ``<= threshold``, a missing value (``nan``) goes where the
split sent the missing values in training. The result equals the classifier's
``decision_function`` (tested).

Shapes: ``X`` is ``(rows, features)``; nodes of all trees are concatenated, ``roots[t]`` is
tree ``t``'s first node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(slots=True)
class BoostedTrees:
    """The trees of a fitted binary gradient-boosting classifier.

    Attributes:
        baseline: the raw score before any tree.
        roots: first node of each tree, shape ``(T,)``.
        feature, threshold, left, right, leaf, value, missing_left: per node, shape ``(N,)``;
            ``left``/``right`` are global node indices.
        n_features: the number of columns ``X`` must have.
    """

    baseline: float
    roots: IntArray
    feature: IntArray
    threshold: FloatArray
    left: IntArray
    right: IntArray
    leaf: BoolArray
    value: FloatArray
    missing_left: BoolArray
    n_features: int

    @classmethod
    def from_sklearn(cls, model: Any) -> BoostedTrees:
        """Copy a fitted ``HistGradientBoostingClassifier`` with two classes.

        Raises:
            ValueError: more than two classes, or categorical splits.
        """
        predictors = model._predictors
        if any(len(per_iteration) != 1 for per_iteration in predictors):
            raise ValueError("only a binary classifier's trees can be copied")
        nodes = [per_iteration[0].nodes for per_iteration in predictors]
        if any(np.any(n["is_categorical"]) for n in nodes):
            raise ValueError("categorical splits cannot be copied; one-hot encode the features")
        sizes = np.array([len(n) for n in nodes], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        joined = np.concatenate(nodes) if nodes else np.zeros(0, dtype=[("x", "f8")])

        def shifted(name: str) -> IntArray:
            return np.concatenate([n[name].astype(np.int64) + o for n, o in zip(nodes, offsets, strict=True)]
                                  ) if nodes else np.zeros(0, np.int64)

        return cls(
            baseline=float(np.asarray(model._baseline_prediction).ravel()[0]),
            roots=offsets, feature=joined["feature_idx"].astype(np.int64) if nodes else np.zeros(0, np.int64),
            threshold=joined["num_threshold"].astype(np.float64) if nodes else np.zeros(0),
            left=shifted("left"), right=shifted("right"),
            leaf=joined["is_leaf"].astype(bool) if nodes else np.zeros(0, bool),
            value=joined["value"].astype(np.float64) if nodes else np.zeros(0),
            missing_left=joined["missing_go_to_left"].astype(bool) if nodes else np.zeros(0, bool),
            n_features=int(model.n_features_in_),
        )

    def decision_function(self, x: ArrayLike) -> FloatArray:
        """Raw scores (log-odds of class 1), shape ``(rows,)``.

        Raises:
            ValueError: ``x`` does not have :attr:`n_features` columns.
        """
        rows = np.asarray(x, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {rows.shape}")
        node = np.broadcast_to(self.roots, (rows.shape[0], len(self.roots))).copy()  # (rows, T)
        row_index = np.arange(rows.shape[0])[:, None]
        active = ~self.leaf[node]
        while active.any():
            values = rows[np.broadcast_to(row_index, node.shape), self.feature[node]]
            go_left = np.where(np.isnan(values), self.missing_left[node], values <= self.threshold[node])
            step = np.where(go_left, self.left[node], self.right[node])
            node = np.where(active, step, node)
            active = ~self.leaf[node]
        raw: FloatArray = self.baseline + self.value[node].sum(axis=1)
        return raw
