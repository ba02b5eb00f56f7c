"""Second-order (adjacent-sibling) decoders: projective Eisner and non-projective rearrangement.

Conventions (see :mod:`parsing`): positions ``0..n``, ``0`` is ROOT. With ``N = n + 1``:

* ``arc_scores[dep, head]``, shape ``(N, N)``: first-order arc scores, as in
  :mod:`parsing.decoders.first_order` (row 0 and the diagonal are ignored; ``-inf`` forbids an arc).
* ``sibling_scores[h, s, c]``, shape ``(N, N, N)``: the score of head ``h`` taking the child
  ``c`` when ``s`` is ``c``'s previous *adjacent* sibling on the same side of ``h``, i.e.
  the child of ``h`` closest to ``c`` between ``h`` and ``c``. ``s == h`` means that ``c``
  is the first (closest to ``h``) child on its side. Left children are generated outwards
  from ``h`` just like right children: for ``h = 5`` with left children ``{1, 3}``, the
  terms are ``sibling_scores[5, 5, 3]`` and ``sibling_scores[5, 3, 1]``.

A tree's second-order score (:func:`score_second_order`) is the sum of its arc scores plus
one sibling term per word. Decoders return ``heads`` of shape ``(N,)``, dtype ``np.intp``,
with ``heads[0] == -1``, and never mutate their inputs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.decoders.first_order import _no_tree, _prepare
from parsing.trees import as_heads, is_tree
from parsing.types import Heads, Scores

__all__ = ["eisner_second_order", "score_second_order", "second_order_rearrange"]

_NEG = -np.inf


def _prepare_siblings(sibling_scores: ArrayLike, size: int) -> NDArray[np.float64]:
    array = np.array(sibling_scores, dtype=np.float64, copy=True)
    if array.shape != (size, size, size):
        raise ValueError(f"sibling_scores must have shape {(size,) * 3}, got {array.shape}")
    if np.isnan(array).any() or np.isposinf(array).any():
        raise ValueError("sibling_scores must not contain NaN or +inf")
    return array


def _previous_siblings(heads: NDArray[np.intp]) -> NDArray[np.intp]:
    """Previous adjacent sibling of every word, for a batch of head arrays.

    Args:
        heads: shape ``(K, N)``, ``heads[:, 0] == -1``.

    Returns:
        shape ``(K, N)``: ``prev[k, d]`` is the child of ``heads[k, d]`` closest to ``d``
        strictly between them, or ``heads[k, d]`` itself when there is none (column 0: -1).
    """
    size = heads.shape[1]
    pos = np.arange(size)
    head = heads[:, :, None]  # (K, N, 1): head of d
    dep = pos[None, :, None]  # d
    other = pos[None, None, :]  # d', a candidate sibling
    same = heads[:, :, None] == heads[:, None, :]  # (K, N, N)
    right = same & (head < other) & (other < dep)
    left = same & (dep < other) & (other < head)
    right_prev = np.where(right, other, -1).max(axis=2)
    left_prev = np.where(left, other, size).min(axis=2)
    prev = np.where(heads < pos, right_prev, left_prev)
    return np.where((prev < 0) | (prev >= size), heads, prev).astype(np.intp)


def _batch_scores(arcs: Scores, siblings: NDArray[np.float64], heads: NDArray[np.intp]) -> Scores:
    """Second-order scores of a batch of trees ``heads`` (shape ``(K, N)``), shape ``(K,)``."""
    deps = np.arange(1, heads.shape[1])
    head = heads[:, 1:]
    prev = _previous_siblings(heads)[:, 1:]
    return np.asarray(arcs[deps, head].sum(axis=1) + siblings[head, prev, deps].sum(axis=1))


def score_second_order(arc_scores: ArrayLike, sibling_scores: ArrayLike, heads: ArrayLike) -> float:
    """Arc scores plus adjacent-sibling scores of the tree ``heads``.

    Args:
        arc_scores: shape ``(N, N)``, ``arc_scores[dep, head]``.
        sibling_scores: shape ``(N, N, N)``, ``sibling_scores[head, prev_sibling, child]``.
        heads: shape ``(N,)``, ``heads[0] == -1``.

    Examples:
        >>> arcs, sibs = np.zeros((4, 4)), np.zeros((4, 4, 4))
        >>> sibs[2, 2, 3] = sibs[2, 2, 1] = 1.0  # 3 and 1 are first children of 2
        >>> sibs[0, 0, 2] = 0.5
        >>> score_second_order(arcs, sibs, [-1, 2, 0, 2])
        2.5
    """
    array = as_heads(heads)
    size = array.shape[0]
    arcs = np.asarray(arc_scores, dtype=np.float64)
    if arcs.shape != (size, size):
        raise ValueError(f"arc_scores {arcs.shape} and heads {array.shape} do not match")
    siblings = _prepare_siblings(sibling_scores, size)
    return float(_batch_scores(arcs, siblings, array[None, :])[0])


def eisner_second_order(
    arc_scores: ArrayLike, sibling_scores: ArrayLike, *, single_root: bool = True
) -> Heads:
    """Highest-scoring projective tree under arc + adjacent-sibling scores, in O(n³).

    McDonald & Pereira (2006), Algorithm 2 (after Eisner 1996): besides the complete (C)
    and incomplete (I) items, a sibling item ``SIB[s,t]`` joins two adjacent children ``s``
    and ``t`` of a common head. The loop runs over span widths; starts and split points are
    vectorised. ``single_root`` is exact, as in :func:`parsing.decoders.eisner`: the chart
    has no ROOT arcs and ROOT takes its only child ``r`` in a final step,
    ``max_r A[r,0] + B[0,0,r] + C←[1,r] + C→[r,n]``.

    Args:
        arc_scores: shape ``(N, N)``, ``arc_scores[dep, head]``; ``-inf`` forbids an arc.
        sibling_scores: shape ``(N, N, N)``, ``sibling_scores[head, prev_sibling, child]``
            (``prev_sibling == head`` for a first child; see the module docstring).
        single_root: exactly one word attaches to ROOT when true.

    Returns:
        heads: shape ``(N,)``, dtype ``np.intp``, ``heads[0] == -1``.

    Raises:
        ValueError: bad shapes, ``n < 1``, NaN/+inf, or no finite-score tree.

    Examples:
        >>> arcs, sibs = np.zeros((4, 4)), np.zeros((4, 4, 4))
        >>> sibs[0, 0, 1] = sibs[1, 1, 2] = sibs[1, 2, 3] = 1.0  # 1 heads 2 then 3
        >>> eisner_second_order(arcs, sibs).tolist()
        [-1, 0, 1, 1]
    """
    arcs = _prepare(arc_scores, "arc_scores")
    size = arcs.shape[0]
    sibs = _prepare_siblings(sibling_scores, size)
    root_arcs = arcs[:, 0].copy()
    if single_root:
        arcs[:, 0] = _NEG
    # Tables by start (X_s[s, w] = X[s, s+w]) and by end (X_e[t, w] = X[t-w, t]).
    cl_s, cl_e, cr_s, cr_e, il_e, ir_s, sb_s, sb_e = (np.full((size, size), _NEG) for _ in range(8))
    for table in (cl_s, cl_e, cr_s, cr_e):
        table[:, 0] = 0.0
    bp_sb, bp_il, bp_ir, bp_cl, bp_cr = (np.zeros((size, size), np.intp) for _ in range(5))
    starts = np.arange(size)
    for w in range(1, size):
        m = size - w
        s = starts[:m]
        s_col, k = s[:, None], np.arange(1, w)[None, :]  # k = r - s for a middle sibling r
        # SIB[s,t] = max_{s<=q<t} C→[s,q] + C←[q+1,t]                          (m, w)
        x = cr_s[:m, :w] + cl_e[w:, :w][:, ::-1]
        bp_sb[:m, w] = x.argmax(axis=1)
        sb_s[:m, w] = sb_e[w:, w] = x.max(axis=1)
        # I→[s,t] = A[t,s] + max(C←[s+1,t] + B[s,s,t],                      first child
        #                        max_{s<r<t} I→[s,r] + SIB[r,t] + B[s,r,t])  r = s + k
        first = cl_s[1 : m + 1, w - 1] + sibs[s, s, s + w]
        inner = ir_s[:m, 1:w] + sb_e[w:, 1:w][:, ::-1] + sibs[s_col, s_col + k, s_col + w]
        x = np.concatenate([first[:, None], inner], axis=1)  # (m, w), column 0 = first
        bp_ir[:m, w] = x.argmax(axis=1)
        ir_s[:m, w] = x.max(axis=1) + np.diagonal(arcs, -w)
        # I←[s,t] = A[s,t] + max(C→[s,t-1] + B[t,t,s],                      first child
        #                        max_{s<r<t} SIB[s,r] + I←[r,t] + B[t,r,s])  r = s + k
        first = cr_s[:m, w - 1] + sibs[s + w, s + w, s]
        inner = sb_s[:m, 1:w] + il_e[w:, 1:w][:, ::-1] + sibs[s_col + w, s_col + k, s_col]
        x = np.concatenate([first[:, None], inner], axis=1)
        bp_il[:m, w] = x.argmax(axis=1)
        il_e[w:, w] = x.max(axis=1) + np.diagonal(arcs, w)
        # C←[s,t] = max_{s<=r<t} C←[s,r] + I←[r,t]
        x = cl_s[:m, :w] + il_e[w:, 1 : w + 1][:, ::-1]
        bp_cl[:m, w] = x.argmax(axis=1)
        cl_s[:m, w] = cl_e[w:, w] = x.max(axis=1)
        # C→[s,t] = max_{s<r<=t} I→[s,r] + C→[r,t]
        x = ir_s[:m, 1 : w + 1] + cr_e[w:, :w][:, ::-1]
        bp_cr[:m, w] = x.argmax(axis=1)
        cr_s[:m, w] = cr_e[w:, w] = x.max(axis=1)
    heads = np.full(size, -1, dtype=np.intp)
    if single_root:
        words = np.arange(1, size)
        total = root_arcs[1:] + sibs[0, 0, words] + cl_s[1, words - 1] + cr_s[words, size - 1 - words]
        child = int(total.argmax()) + 1
        if total[child - 1] == _NEG:
            raise _no_tree()
        heads[child] = 0
        stack = [(0, 1, child), (1, child, size - 1)]
    else:
        if cr_s[0, size - 1] == _NEG:
            raise _no_tree()
        stack = [(1, 0, size - 1)]
    sb, il, ir, cl, cr = (b.tolist() for b in (bp_sb, bp_il, bp_ir, bp_cl, bp_cr))
    # Iterative backtracking; kinds: 0 C←, 1 C→, 2 I←, 3 I→, 4 SIB.
    while stack:
        kind, a, b = stack.pop()
        if a == b:
            continue
        if kind == 0:
            r = a + cl[a][b - a]
            stack += [(0, a, r), (2, r, b)]
        elif kind == 1:
            r = a + 1 + cr[a][b - a]
            stack += [(3, a, r), (1, r, b)]
        elif kind == 2:
            heads[a] = b
            k_ = il[a][b - a]
            stack += [(1, a, b - 1)] if k_ == 0 else [(4, a, a + k_), (2, a + k_, b)]
        elif kind == 3:
            heads[b] = a
            k_ = ir[a][b - a]
            stack += [(0, a + 1, b)] if k_ == 0 else [(3, a, a + k_), (4, a + k_, b)]
        else:
            q = a + sb[a][b - a]
            stack += [(1, a, q), (0, q + 1, b)]
    return heads


def second_order_rearrange(
    heads: ArrayLike,
    arc_scores: ArrayLike,
    sibling_scores: ArrayLike,
    *,
    single_root: bool = True,
    max_iter: int | None = None,
) -> Heads:
    """Approximate non-projective second-order parsing by hill-climbing (greedy rearrangement).

    McDonald & Pereira (2006), Section 3.2: starting from a tree (usually the output of
    :func:`eisner_second_order`), repeatedly apply the single head change ``d -> h`` that
    most increases :func:`score_second_order` while the result stays a tree (``h`` is not
    a descendant of ``d``; with ``single_root`` ROOT keeps exactly one child), until no
    change improves the score. Each round scores all ``n²`` candidates vectorised.

    Args:
        heads: shape ``(N,)``, the starting tree (single-rooted when ``single_root``).
        arc_scores: shape ``(N, N)``, ``arc_scores[dep, head]``.
        sibling_scores: shape ``(N, N, N)``, ``sibling_scores[head, prev_sibling, child]``.
        single_root: keep exactly one word attached to ROOT.
        max_iter: stop after this many changes (``None``: until a local optimum).

    Returns:
        heads: shape ``(N,)``, dtype ``np.intp``; its score is never below the input's.

    Raises:
        ValueError: bad shapes, or ``heads`` is not a (single-rooted) tree.

    Examples:
        >>> arcs, sibs = np.zeros((4, 4)), np.zeros((4, 4, 4))
        >>> arcs[1, 3] = 2.0  # the non-projective arc 3 -> 1 over the ROOT arc 0 -> 2
        >>> second_order_rearrange([-1, 2, 0, 2], arcs, sibs).tolist()
        [-1, 3, 0, 2]
    """
    current = as_heads(heads).copy()
    size = current.shape[0]
    arcs = _prepare(arc_scores, "arc_scores")
    if arcs.shape != (size, size):
        raise ValueError(f"arc_scores {arcs.shape} and heads {current.shape} do not match")
    sibs = _prepare_siblings(sibling_scores, size)
    if not is_tree(current) or (single_root and np.count_nonzero(current[1:] == 0) != 1):
        raise ValueError("heads must be a tree (with one root child when single_root)")
    best = _batch_scores(arcs, sibs, current[None, :])[0]
    changes = 0
    while max_iter is None or changes < max_iter:
        candidates = []
        for dep in range(1, size):
            # every new head h for dep that keeps a tree: h outside dep's subtree
            blocked = _descendants(current, dep)
            blocked[current[dep]] = True
            if single_root:
                blocked[0] = True  # dep would become a second root child
            new_heads = np.flatnonzero(~blocked)
            batch = np.repeat(current[None, :], new_heads.shape[0], axis=0)
            batch[:, dep] = new_heads
            candidates.append(batch)
        batch = np.concatenate(candidates)
        if batch.shape[0] == 0:
            break
        scores = _batch_scores(arcs, sibs, batch)
        top = int(scores.argmax())
        if not scores[top] > best:
            break
        current, best = batch[top], scores[top]
        changes += 1
    return current


def _descendants(heads: NDArray[np.intp], node: int) -> NDArray[np.bool_]:
    """Boolean mask of ``node`` and every word below it in the tree ``heads``."""
    size = heads.shape[0]
    inside = np.zeros(size, dtype=bool)
    inside[node] = True
    for _ in range(size):  # breadth-first: add the children of the current set
        grown = inside | (np.r_[False, inside[heads[1:]]])
        if np.array_equal(grown, inside):
            break
        inside = grown
    return inside
