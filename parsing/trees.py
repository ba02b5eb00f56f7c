"""Predicates on dependency trees given as head arrays.

Conventions (see :mod:`parsing`): positions ``0..n``, ``0`` is ROOT; ``heads`` has shape
``(n+1,)`` with ``heads[0] == -1``; ``scores[dep, head]``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["as_heads", "depths", "find_cycle", "is_projective", "is_tree", "reverse_heads", "tree_score"]


def as_heads(heads: ArrayLike) -> NDArray[np.intp]:
    """``heads`` as an ``np.intp`` array of shape ``(n+1,)``, n >= 1 (``ValueError`` otherwise)."""
    array = np.asarray(heads)
    if array.ndim != 1 or array.shape[0] < 2:
        raise ValueError(f"heads must have shape (n+1,) with n >= 1, got shape {array.shape}")
    return array.astype(np.intp, copy=False)


def find_cycle(heads: ArrayLike) -> list[int] | None:
    """Return one cycle of the head graph, or ``None`` when there is none.

    Args:
        heads: shape ``(n+1,)``; ``heads[d]`` is the head of ``d``. Values outside
            ``1..n`` (ROOT ``0``, unknown ``-1``) end a path.

    Returns:
        The nodes of a cycle in head-following order (``heads[c[i]] == c[i+1]``), starting
        from its smallest node, or ``None`` when following heads from every node ends.

    Examples:
        >>> find_cycle([-1, 5, 1, 0, 3, 2])  # 1 -> 5 -> 2 -> 1
        [1, 5, 2]
        >>> find_cycle([-1, 0, 1]) is None
        True
    """
    head_list = as_heads(heads).tolist()
    size = len(head_list)
    state = [0] * size  # 0 = unvisited, 1 = on the current path, 2 = done
    for start in range(1, size):
        path: list[int] = []
        node = start
        while 1 <= node < size and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = head_list[node]
        if 1 <= node < size and state[node] == 1:  # the path closed on itself
            cycle = path[path.index(node) :]
            first = cycle.index(min(cycle))
            return cycle[first:] + cycle[:first]
        for visited in path:
            state[visited] = 2
    return None


def is_tree(heads: ArrayLike) -> bool:
    """True when ``heads`` is a tree rooted at position 0 (several root children allowed).

    Args:
        heads: shape ``(n+1,)``.

    Examples:
        >>> is_tree([-1, 2, 0]), is_tree([-1, 2, 1]), is_tree([-1, 0, 0])
        (True, False, True)
    """
    array = as_heads(heads)
    size = array.shape[0]
    words = np.arange(1, size)
    valid = (array[0] == -1) and bool(np.all((array[1:] >= 0) & (array[1:] < size)))
    return valid and not np.any(array[1:] == words) and find_cycle(array) is None


def is_projective(heads: ArrayLike) -> bool:
    """True when no two arcs cross (ROOT arcs included), i.e. the tree is projective.

    For a tree rooted at position 0 (left of every word) "no crossing arcs" is equivalent
    to "every arc's span is dominated by its head".

    Args:
        heads: shape ``(n+1,)``, a tree (see :func:`is_tree`).

    Examples:
        >>> is_projective([-1, 2, 0, 2]), is_projective([-1, 3, 4, 0, 3])
        (True, False)
    """
    array = as_heads(heads)[1:]
    deps = np.arange(1, array.shape[0] + 1)
    left, right = np.minimum(deps, array), np.maximum(deps, array)
    # arcs a, b cross when left[a] < left[b] < right[a] < right[b]
    crossing = (
        (left[:, None] < left[None, :])
        & (left[None, :] < right[:, None])
        & (right[:, None] < right[None, :])
    )
    return not bool(crossing.any())


def tree_score(scores: ArrayLike, heads: ArrayLike) -> float:
    """Sum of ``scores[d, heads[d]]`` over the words ``d = 1..n``.

    Args:
        scores: shape ``(n+1, n+1)``, ``scores[dep, head]``.
        heads: shape ``(n+1,)``.

    Examples:
        >>> tree_score([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [3.0, 4.0, 0.0]], [-1, 2, 0])
        5.0
    """
    matrix = np.asarray(scores, dtype=np.float64)
    array = as_heads(heads)
    if matrix.shape != (array.shape[0], array.shape[0]):
        raise ValueError(f"scores {matrix.shape} and heads {array.shape} do not match")
    return float(matrix[np.arange(1, array.shape[0]), array[1:]].sum())


def reverse_heads(heads: NDArray[np.intp]) -> NDArray[np.intp]:
    """The same tree on the reversed sentence (word ``d`` becomes ``n+1-d``); an involution.

    Used by the right-to-left parsers, which read the sentence backwards.

    Examples:
        >>> reverse_heads(np.array([-1, 2, 0, 2])).tolist()
        [-1, 2, 0, 2]
    """
    n = len(heads) - 1
    flipped = heads[:0:-1]
    return np.concatenate(([-1], np.where(flipped > 0, n + 1 - flipped, flipped))).astype(np.intp)


def depths(heads: ArrayLike) -> NDArray[np.intp]:
    """Each word's distance from ROOT, shape ``(n+1,)``; ``depths[0] == 0``, and ``-1`` for a word
    whose head chain never reaches ROOT (it runs into a cycle or a head outside ``0..n``, as in
    a tree half edited by hand).

    Examples:
        >>> depths([-1, 2, 0, 2]).tolist()   # 2 is the root word, 1 and 3 hang from it
        [0, 2, 1, 2]
        >>> depths([-1, 0, 3, 2]).tolist()   # 2 and 3 head each other
        [0, 1, -1, -1]
    """
    head_list = as_heads(heads).tolist()
    size = len(head_list)
    depth = [0] + [-2] * (size - 1)  # -2: not yet known; -1: never reaches ROOT
    for start in range(1, size):
        path: list[int] = []
        node = start
        while 0 <= node < size and depth[node] == -2:
            depth[node] = -3  # on the current path
            path.append(node)
            node = head_list[node]
        base = depth[node] if 0 <= node < size and depth[node] >= 0 else -1
        for offset, word in enumerate(reversed(path), start=1):
            depth[word] = base + offset if base >= 0 else -1
    return np.array(depth, dtype=np.intp)
