"""Configuration features of the neural transition parser, vectorised over a batch.

A batch of ``B`` configurations (of possibly different sentences) is described by arrays:
``stack`` ``(B, 3)`` and ``buffer`` ``(B, 3)`` hold the sentence positions of s0..s2 and
b0..b2 (``-1`` when absent), ``heads`` ``(B, N)`` the partial trees (``-1`` = no head yet,
also used as padding), ``leftmost`` and ``rightmost`` ``(B, N)`` each word's leftmost left
and rightmost right child, ``labels`` ``(B, N)`` the label ids of attached words, and
``offsets`` ``(B,)`` the row of each sentence's ROOT in the token table (so position ``p``
of that sentence is token row ``offsets + p``; row :data:`NULL_ROW` is "no token").

Slots (Chen & Manning 2014): tokens s0, s1, s2, b0, b1, b2, then for s0 and for s1 the
leftmost, rightmost, second leftmost and second rightmost children, then lc1(lc1(s0)),
rc1(rc1(s0)), lc1(lc1(s1)), rc1(rc1(s1)); the labels of those 12 children.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

NULL_ROW = 0
"""Token-table row of an absent slot."""

NULL_LABEL = 0
"""Label id of an absent slot (real labels are ``1..L``)."""


def _at(table: IntArray, positions: IntArray) -> IntArray:
    """``table[b, positions[b]]`` for each row ``b``, ``-1`` where the position is ``-1``."""
    picked = table[np.arange(len(table)), np.maximum(positions, 0)]
    return np.where(positions >= 0, picked, -1)


def children(
    heads: IntArray, leftmost: IntArray, rightmost: IntArray, targets: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Leftmost, second leftmost, rightmost, second rightmost child of each target.

    Args:
        heads: ``(B, N)`` partial trees, ``-1`` where there is no head.
        leftmost, rightmost: ``(B, N)`` each word's leftmost left child and rightmost right
            child (``-1``: none), as the transition state keeps them.
        targets: ``(B,)`` positions, ``-1`` for none.

    Returns:
        Four ``(B,)`` arrays of positions, ``-1`` where there is no such child.

    Examples:
        >>> heads = np.array([[-1, 2, 0, 2, 2]])
        >>> leftmost, rightmost = np.array([[-1, -1, 1, -1, -1]]), np.array([[-1, -1, 4, -1, -1]])
        >>> [c.tolist() for c in children(heads, leftmost, rightmost, np.array([2]))]
        [[1], [-1], [4], [3]]
    """
    lc1, rc1 = _at(leftmost, targets), _at(rightmost, targets)
    positions = np.arange(heads.shape[1])
    column = targets[:, None]
    is_child = (heads == column) & (column >= 0)
    # The second leftmost is the first child between lc1 and the target, and vice versa.
    left = is_child & (positions > lc1[:, None]) & (positions < column)
    right = (is_child & (positions < rc1[:, None]) & (positions > column))[:, ::-1]
    lc2 = np.where(left.any(axis=1), left.argmax(axis=1), -1)
    rc2 = np.where(right.any(axis=1), heads.shape[1] - 1 - right.argmax(axis=1), -1)
    return lc1, lc2, rc1, rc2


def featurise(
    stack: IntArray,
    buffer: IntArray,
    heads: IntArray,
    leftmost: IntArray,
    rightmost: IntArray,
    labels: IntArray,
    offsets: IntArray,
) -> tuple[IntArray, IntArray]:
    """Token rows ``(B, 18)`` and label ids ``(B, 12)`` of a batch of configurations."""
    slots = [stack[:, 0], stack[:, 1], stack[:, 2], buffer[:, 0], buffer[:, 1], buffer[:, 2]]
    grand: list[IntArray] = []
    for top in (stack[:, 0], stack[:, 1]):
        lc1, lc2, rc1, rc2 = children(heads, leftmost, rightmost, top)
        slots += [lc1, rc1, lc2, rc2]
        grand += [_at(leftmost, lc1), _at(rightmost, rc1)]
    positions = np.stack(slots + grand, axis=1)
    rows = np.where(positions >= 0, positions + offsets[:, None], NULL_ROW)
    child_positions = positions[:, 6:]
    child_labels = labels[np.arange(len(heads))[:, None], np.maximum(child_positions, 0)]
    return rows, np.where(child_positions >= 0, child_labels, NULL_LABEL)
