"""First-order tree decoders: Eisner (projective) and Chu-Liu-Edmonds (non-projective).

Conventions (see :mod:`parsing`): a sentence of ``n`` words has positions ``0..n`` with
``0`` the artificial ROOT. ``scores`` has shape ``(n+1, n+1)`` and ``scores[dep, head]``
is the score of the arc ``head -> dep``; row 0 and the diagonal are ignored (treated as
``-inf``), and any other ``-inf`` entry is a forbidden arc. Every decoder returns
``heads`` of shape ``(n+1,)``, dtype ``np.intp``, with ``heads[0] == -1``.

Decoders are pure: they copy their input before masking it, validate shapes with
``ValueError``, and raise ``ValueError`` when every tree uses a forbidden arc. The tree
predicates (``find_cycle``, ``is_tree``, ``is_projective``, ``tree_score``) live in
:mod:`parsing.trees` and are re-exported here for convenience.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.trees import find_cycle, is_projective, is_tree, tree_score
from parsing.types import Heads, Scores

__all__ = [
    "chu_liu_edmonds",
    "eisner",
    "find_cycle",
    "is_projective",
    "is_tree",
    "last_resort",
    "mst",
    "tree_score",
]

_NEG = -np.inf


def _prepare(scores: ArrayLike, name: str = "scores") -> Scores:
    """Validate a score matrix and return a masked float64 copy (row 0, diagonal -inf)."""
    array = np.array(scores, dtype=np.float64, copy=True)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square (n+1, n+1) matrix, got shape {array.shape}")
    if array.shape[0] < 2:
        raise ValueError(f"{name} must cover at least one word (n >= 1), got shape {array.shape}")
    if np.isnan(array).any() or np.isposinf(array).any():
        raise ValueError(f"{name} must not contain NaN or +inf")
    array[0, :] = _NEG
    np.fill_diagonal(array, _NEG)
    return array


def _no_tree() -> ValueError:
    return ValueError("no dependency tree with a finite score: every tree uses a -inf arc")


# ------------------------------------------------------------------------------- Eisner


def _eisner_chart(
    scores: Scores,
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], list[list[int]], list[list[int]], list[list[int]]
]:
    """Fill the first-order Eisner chart for the masked ``scores`` (shape ``(N, N)``).

    Every table ``X[s, t]`` (span ``s..t``) is stored twice so that all reads of one span
    width are plain slices: ``X_s[s, w] = X[s, s+w]`` (by start) and ``X_e[t, w] =
    X[t-w, t]`` (by end). Items: ``C→[s,t]`` complete, head ``s``; ``C←[s,t]`` complete,
    head ``t``; ``I→[s,t]`` the arc ``s -> t``; ``I←[s,t]`` the arc ``t -> s``.

    Returns:
        ``(CL_s, CR_s, bp_I, bp_CL, bp_CR)``: complete tables by start, shape ``(N, N)``, and
        split-point backpointers as nested lists indexed ``[s][w]``.
    """
    size = scores.shape[0]
    cl_s, cl_e, cr_s, cr_e, il_e, ir_s = (np.full((size, size), _NEG) for _ in range(6))
    for table in (cl_s, cl_e, cr_s, cr_e):
        table[:, 0] = 0.0  # width-0 complete spans score 0
    bp_i, bp_cl, bp_cr = (np.zeros((size, size), dtype=np.intp) for _ in range(3))
    for w in range(1, size):
        m = size - w  # spans s..t with t = s + w, for s = 0..m-1; rows are s
        # I←[s,t] = max_{s<=r<t} C→[s,r] + C←[r+1,t] + S[s,t];  I→ adds S[t,s] instead
        x = cr_s[:m, :w] + cl_e[w:, :w][:, ::-1]  # (m, w), column k = r - s
        r = x.argmax(axis=1)
        best = x.max(axis=1)
        bp_i[:m, w] = r
        il = best + np.diagonal(scores, w)  # S[s, s+w]
        ir = best + np.diagonal(scores, -w)  # S[s+w, s]
        il_e[w:, w] = il
        ir_s[:m, w] = ir
        # C←[s,t] = max_{s<=r<t} C←[s,r] + I←[r,t]
        x = cl_s[:m, :w] + il_e[w:, 1 : w + 1][:, ::-1]  # (m, w), k = r - s
        bp_cl[:m, w] = x.argmax(axis=1)
        cl = x.max(axis=1)
        cl_s[:m, w] = cl
        cl_e[w:, w] = cl
        # C→[s,t] = max_{s<r<=t} I→[s,r] + C→[r,t]
        x = ir_s[:m, 1 : w + 1] + cr_e[w:, :w][:, ::-1]  # (m, w), k = r - s - 1
        bp_cr[:m, w] = x.argmax(axis=1)
        cr = x.max(axis=1)
        cr_s[:m, w] = cr
        cr_e[w:, w] = cr
    return cl_s, cr_s, bp_i.tolist(), bp_cl.tolist(), bp_cr.tolist()


def _eisner_backtrack(
    heads: Heads, spans: list[tuple[int, int, int]], bp: tuple[list[list[int]], ...]
) -> None:
    """Write the arcs of the items in ``spans`` (``(kind, s, t)``) into ``heads``, iteratively.

    Kinds: 0 = C←, 1 = C→, 2 = I←, 3 = I→; ``bp = (bp_I, bp_CL, bp_CR)`` from the chart.
    """
    bp_i, bp_cl, bp_cr = bp
    stack = list(spans)
    while stack:
        kind, s, t = stack.pop()
        if s == t:
            continue
        if kind == 0:
            r = s + bp_cl[s][t - s]
            stack += [(0, s, r), (2, r, t)]
        elif kind == 1:
            r = s + 1 + bp_cr[s][t - s]
            stack += [(3, s, r), (1, r, t)]
        else:
            if kind == 2:
                heads[s] = t
            else:
                heads[t] = s
            r = s + bp_i[s][t - s]
            stack += [(1, s, r), (0, r + 1, t)]


def eisner(scores: ArrayLike, *, single_root: bool = True) -> Heads:
    """Highest-scoring projective tree, by Eisner's O(n³) dynamic programme.

    The Python loop runs over span widths only; all start positions and split points of a
    width are handled by one numpy expression (Eisner 1996). With ``single_root`` the chart
    is built over the words alone (no ROOT arcs) and ROOT takes its single child ``r`` in
    one final step, ``max_r S[r,0] + C←[1,r] + C→[r,n]``: every single-rooted projective
    tree decomposes this way, so the constraint is exact, not a penalty.

    Args:
        scores: shape ``(n+1, n+1)``, ``scores[dep, head]``; ``-inf`` forbids an arc.
        single_root: exactly one word attaches to ROOT when true; any number when false.

    Returns:
        heads: shape ``(n+1,)``, dtype ``np.intp``, ``heads[0] == -1``.

    Raises:
        ValueError: non-square ``scores``, ``n < 1``, NaN/+inf, or no finite-score tree.

    Examples:
        >>> s = np.array([[0, 0, 0, 0], [0, 0, 5, 1], [5, 1, 0, 1], [0, 1, 5, 0]])
        >>> eisner(s).tolist()  # row 0 and the diagonal are ignored
        [-1, 2, 0, 2]
    """
    matrix = _prepare(scores)
    size = matrix.shape[0]
    heads = np.full(size, -1, dtype=np.intp)
    if single_root:
        root_scores = matrix[:, 0].copy()
        matrix[:, 0] = _NEG
    cl_s, cr_s, *bp = _eisner_chart(matrix)
    if single_root:
        # final step: ROOT -> r, with C←[1,r] to its left and C→[r,n] to its right
        words = np.arange(1, size)
        total = root_scores[1:] + cl_s[1, words - 1] + cr_s[words, size - 1 - words]
        child = int(total.argmax()) + 1
        if total[child - 1] == _NEG:
            raise _no_tree()
        heads[child] = 0
        spans = [(0, 1, child), (1, child, size - 1)]
    else:
        if cr_s[0, size - 1] == _NEG:
            raise _no_tree()
        spans = [(1, 0, size - 1)]
    _eisner_backtrack(heads, spans, tuple(bp))
    return heads


# ---------------------------------------------------------------------- Chu-Liu-Edmonds


def _cle(scores: Scores) -> Heads | None:
    """Maximum spanning arborescence rooted at 0 of masked ``scores``; None if infeasible.

    Iterative: contract one cycle of the greedy graph at a time (recording how to expand
    it), then expand the contractions in reverse order. Each contraction is vectorised.
    """
    records = []
    current = scores
    while True:
        size = current.shape[0]
        heads: Heads = current.argmax(axis=1).astype(np.intp)
        best = current[np.arange(size), heads]
        if np.any(best[1:] == _NEG):
            return None
        heads[0] = -1
        cycle_list = find_cycle(heads)
        if cycle_list is None:
            break
        cycle = np.array(cycle_list, dtype=np.intp)
        outside = np.ones(size, dtype=bool)
        outside[cycle] = False
        rest = np.flatnonzero(outside)  # rest[0] == 0: ROOT is never on a cycle
        # arc h -> cycle (h outside): max_c S[c,h] - S[c,head(c)], shape (len(rest),)
        enter = current[cycle[:, None], rest] - best[cycle][:, None]
        enter_arg = enter.argmax(axis=0)
        # arc cycle -> d (d outside): max_c S[d,c], shape (len(rest),)
        leave = current[rest[:, None], cycle]
        leave_arg = leave.argmax(axis=1)
        k = rest.shape[0]  # the contracted node gets index k
        contracted = np.empty((k + 1, k + 1))
        contracted[:k, :k] = current[rest[:, None], rest]
        contracted[:k, k] = leave[np.arange(k), leave_arg]
        contracted[k, :k] = enter[enter_arg, np.arange(k)]
        contracted[k, k] = _NEG
        records.append((rest, cycle, heads[cycle], enter_arg, leave_arg, size))
        current = contracted
    for rest, cycle, cycle_heads, enter_arg, leave_arg, size in reversed(records):
        k = rest.shape[0]
        expanded = np.empty(size, dtype=np.intp)
        small = heads[:k]
        from_cycle = small == k
        expanded[rest] = np.where(from_cycle, cycle[leave_arg], rest[np.where(from_cycle, 0, small)])
        expanded[0] = -1
        expanded[cycle] = cycle_heads
        expanded[cycle[enter_arg[heads[k]]]] = rest[heads[k]]  # the arc that breaks the cycle
        heads = expanded
    return heads


def chu_liu_edmonds(scores: ArrayLike, *, single_root: bool = True) -> Heads:
    """Maximum spanning arborescence (non-projective), exact.

    Chu & Liu (1965), Edmonds (1967), as used for parsing by McDonald et al. (2005). When
    the greedy heads already form a tree they are returned at once. The single-root
    constraint is exact and needs at most one more decode (Gabow & Tarjan 1984; Zmigrod et
    al. 2020): if the unconstrained optimum has one ROOT child it is optimal; otherwise
    every ROOT arc is made dearer by a penalty larger than any two trees' score difference
    (:func:`_root_penalty`), so the best tree under the penalised scores has as few ROOT
    children as possible (one, when any single-root tree is finite) and, among those, the
    highest original score.

    Args:
        scores: shape ``(n+1, n+1)``, ``scores[dep, head]``; ``-inf`` forbids an arc.
        single_root: exactly one word attaches to ROOT when true; any number when false.

    Returns:
        heads: shape ``(n+1,)``, dtype ``np.intp``, ``heads[0] == -1``.

    Raises:
        ValueError: non-square ``scores``, ``n < 1``, NaN/+inf, or no finite-score tree.

    Examples:
        >>> s = np.array([[0, 0, 0, 0], [0, 0, 2, 5], [5, 0, 0, 0], [0, 5, 1, 0]])
        >>> chu_liu_edmonds(s).tolist()  # the greedy cycle 1 <-> 3 is broken
        [-1, 2, 0, 1]
    """
    matrix = _prepare(scores)
    heads = _cle(matrix)
    if heads is None:
        raise _no_tree()
    if not single_root or np.count_nonzero(heads[1:] == 0) == 1:
        return heads
    matrix[:, 0] -= _root_penalty(matrix)
    heads = _cle(matrix)
    if heads is None or np.count_nonzero(heads[1:] == 0) != 1:
        raise _no_tree()  # every tree with one ROOT child uses a -inf arc
    return heads


def _root_penalty(scores: Scores) -> float:
    """A ROOT-arc penalty that outweighs any difference between two trees' scores.

    A tree has ``n`` arcs, each finite one between ``min`` and ``max`` of the finite
    scores, so two finite trees differ by at most ``n * (max - min)``; one ROOT child
    fewer must win over that. Float rounding at this magnitude stays near ``1e-13`` of
    the spread, far below any difference the scorers make.
    """
    finite = scores[np.isfinite(scores)]
    return float(scores.shape[0] * (finite.max() - finite.min()) + 1.0)


def mst(scores: ArrayLike, *, projective: bool = False, single_root: bool = True) -> Heads:
    """Best tree under ``scores``: Eisner when ``projective``, else Chu-Liu-Edmonds.

    Args:
        scores: shape ``(n+1, n+1)``, ``scores[dep, head]``; ``-inf`` forbids an arc.
        projective: restrict to projective trees (:func:`eisner`).
        single_root: exactly one word attaches to ROOT.

    Returns:
        heads: shape ``(n+1,)``, dtype ``np.intp``, ``heads[0] == -1``.

    Raises:
        ValueError: see :func:`eisner` and :func:`chu_liu_edmonds`.

    Examples:
        >>> s = np.array([[0, 0, 0, 0], [0, 0, 2, 5], [5, 0, 0, 0], [0, 5, 1, 0]])
        >>> mst(s).tolist(), mst(s, projective=True).tolist()
        ([-1, 2, 0, 1], [-1, 2, 0, 2])
    """
    if projective:
        return eisner(scores, single_root=single_root)
    return chu_liu_edmonds(scores, single_root=single_root)


def last_resort(scores: ArrayLike) -> Scores:
    """A copy of ``scores`` in which every absent (``-inf``) arc other than into ROOT or a
    self-loop costs more than any possible total of the finite entries, so a maximum spanning
    tree uses as few of them as it can, yet always exists (the ensemble's incomplete graphs,
    :func:`parsing.ensemble.base.reparse`, and forced arcs, :mod:`parsing.constraints`).

    Examples:
        >>> votes = np.full((3, 3), -np.inf); votes[1, 0] = 2.0
        >>> last_resort(votes)[2].tolist()
        [-5.0, -5.0, -inf]
    """
    matrix = np.array(scores, dtype=np.float64, copy=True)
    size = matrix.shape[0]
    matrix[0, :] = -np.inf
    np.fill_diagonal(matrix, -np.inf)
    finite = np.isfinite(matrix)
    span = float(np.abs(matrix[finite]).sum()) if finite.any() else 0.0
    allowed = ~np.eye(size, dtype=bool)
    allowed[0, :] = False
    matrix[allowed & ~finite] = -(2.0 * span + 1.0)
    scored: Scores = matrix
    return scored
