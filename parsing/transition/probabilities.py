"""Action probabilities of the transition parsers: the arc scores they report.

A parser's confidence in an arc is the softmax probability, among the valid actions of the
state, of the action that built it. :func:`action_probabilities` computes it for a whole
batch of states with exactly the float operations of :func:`action_probability`, so batched
and one-by-one parsing report identical scores (and break single-root ties identically).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def action_probability(scores: NDArray[np.float32], valid: NDArray[np.bool_], cls: int) -> float:
    """Softmax probability of class ``cls`` among the ``valid`` classes of one state's ``scores``."""
    chosen = scores[valid]
    top = float(chosen.max())
    return float(np.exp(float(scores[cls]) - top) / np.exp(chosen.astype(np.float64) - top).sum())


def action_probabilities(
    scores: NDArray[np.float32], masks: Sequence[NDArray[np.bool_]], best: NDArray[np.intp]
) -> NDArray[np.float64]:
    """:func:`action_probability` of every row's class ``best`` among its valid classes, ``(m,)``
    (NaN for rows whose class builds no arc), with the same float operations.

    Args:
        scores: ``(m, n_classes)``; masks: ``m`` valid-class masks ``(n_classes,)``, the
            same array object for equal masks; best: ``(m,)`` each row's chosen class.
    """
    probability = np.full(len(best), np.nan)
    groups: dict[int, list[int]] = {}
    for row in np.flatnonzero(best >= 3).tolist():
        groups.setdefault(id(masks[row]), []).append(row)
    for rows in groups.values():
        chosen = scores[rows][:, masks[rows[0]]]  # (k, n_valid)
        top = chosen.max(axis=1).astype(np.float64)
        numerator = np.exp(scores[rows, best[rows]].astype(np.float64) - top)
        exponentials = np.exp(chosen.astype(np.float64) - top[:, None])
        # one 1-D sum per row: numpy sums a row of a 2-D array in another order
        probability[rows] = numerator / [exponentials[k].sum() for k in range(len(rows))]
    return probability
