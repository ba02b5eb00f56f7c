"""The loss-scaled perceptron of Titov 2008 Fig. 6.1, averaged.

For each training list, the target ``y*`` is the candidate with the highest LAS against gold
(the list's oracle; the most probable one among equals). Every candidate ``y`` that the
current weights score above ``y*`` triggers ``w += Delta(y, y*) * (phi(y*) - phi(y))`` with
``Delta = LAS(y*) - LAS(y)``, here scaled per coordinate by a learning rate: ``1`` for the first
component (log-probability or TOP's ``v``) and ``rate`` for the derivative block. The weights
start at ``(sign, 0, ..., 0)`` (``+1`` on ``log P``, ``-1`` on ``v``, which falls as ``P(y)``
rises), i.e. at the model's own 1-best: from zero, the strict ``>`` of Fig. 6.1 would never
fire. Since the first component starts with weight one, ``rate`` sets how far the
derivative features may move the choice away from the model's (the perceptron is otherwise
scale-free). The averaged perceptron (mean of the weights after each list) replaces the voted
one, which the thesis found to give "very similar results".

A list is ``(features (K, D), gains (K,))``; ``features`` is a dense array or a SciPy CSR
matrix (the efficient TOP features are sparse).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Matrix = Any
"""A ``(K, D)`` dense array or ``scipy.sparse.csr_matrix``."""
Example = tuple[Matrix, FloatArray]


def initial_weights(dimension: int, sign: float) -> FloatArray:
    """``(D,)``: ``sign`` on the first component, zero elsewhere."""
    weights = np.zeros(dimension)
    weights[0] = sign
    return weights


def scores(weights: FloatArray, features: Matrix) -> FloatArray:
    """``(K,)`` linear scores ``features @ weights``."""
    return np.asarray(features @ weights, dtype=np.float64).reshape(-1)


def _row(features: Matrix, index: int) -> tuple[NDArray[np.int64] | None, FloatArray]:
    """Row ``index`` as ``(column indices or None for dense, values)``."""
    if sp.issparse(features):
        row = features.getrow(index)
        return row.indices.astype(np.int64), row.data.astype(np.float64)
    return None, np.asarray(features[index], dtype=np.float64)


def update(weights: FloatArray, features: Matrix, gains: FloatArray, rate: float) -> int:
    """One list of Fig. 6.1, in place; returns the number of updates made."""
    target = int(np.argmax(gains))
    rows = [_row(features, y) for y in range(len(gains))]

    def score(y: int) -> float:
        columns, values = rows[y]
        return float(values @ (weights if columns is None else weights[columns]))

    made = 0
    for y in range(len(gains)):
        if gains[y] >= gains[target] or score(y) <= score(target):
            continue
        step = float(gains[target] - gains[y])
        for sign, (columns, values) in ((1.0, rows[target]), (-1.0, rows[y])):
            scaled = sign * step * values
            if columns is None:
                scaled[1:] *= rate
                weights += scaled
            else:
                scaled[columns != 0] *= rate
                np.add.at(weights, columns, scaled)
        made += 1
    return made


def train(examples: Sequence[Example], dimension: int, *, sign: float, rate: float, epochs: int,
          rng: np.random.Generator) -> FloatArray:
    """Averaged weights ``(D,)`` after ``epochs`` shuffled passes over ``examples``."""
    weights = initial_weights(dimension, sign)
    total = np.zeros(dimension)
    count = 0
    for _ in range(epochs):
        for index in rng.permutation(len(examples)).tolist():
            features, gains = examples[index]
            update(weights, features, gains, rate)
            total += weights
            count += 1
    return total / max(count, 1) if count else weights


def choose(weights: FloatArray, features: Matrix) -> int:
    """The highest-scoring candidate (the earliest, i.e. most probable, among equals)."""
    return int(np.argmax(scores(weights, features)))


def cross_validated_rate(
    examples: Sequence[Example], sizes: Sequence[int], dimension: int, *, sign: float,
    rates: Iterable[float], epochs: int, folds: int, seed: int,
) -> tuple[float, dict[float, float]]:
    """The ``rate`` whose reranker picks the most correct words over ``folds`` held-out parts
    of ``examples`` (``sizes``: words per sentence, to turn LAS fractions into counts).

    Returns:
        The best rate (the smallest among equals) and the held-out correct words of each.
    """
    part = np.arange(len(examples)) % folds
    np.random.default_rng(seed).shuffle(part)
    results: dict[float, float] = {}
    for rate in rates:
        correct = 0.0
        for fold in range(folds):
            train_set = [examples[i] for i in np.flatnonzero(part != fold).tolist()]
            weights = train(train_set, dimension, sign=sign, rate=rate, epochs=epochs,
                            rng=np.random.default_rng(seed))
            for i in np.flatnonzero(part == fold).tolist():
                features, gains = examples[i]
                correct += gains[choose(weights, features)] * sizes[i]
        results[rate] = correct
    best = max(results.values())
    return min(rate for rate, value in results.items() if value == best), results
