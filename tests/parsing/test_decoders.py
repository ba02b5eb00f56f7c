"""Tests for parsing.decoders.first_order and parsing.decoders.second_order.

The decoders are cross-checked against brute-force enumeration of every tree (n <= 7) on
random score matrices, comparing scores rather than heads (ties aside, the argmax is
unique because the scores are continuous).
"""

from __future__ import annotations

import doctest
import functools

import numpy as np
import pytest
from numpy.typing import NDArray

from parsing.decoders import first_order, second_order
from parsing.decoders.first_order import (
    chu_liu_edmonds,
    eisner,
    find_cycle,
    is_projective,
    is_tree,
    mst,
    tree_score,
)
from parsing.decoders.second_order import (
    eisner_second_order,
    score_second_order,
    second_order_rearrange,
)

N_MATRICES = 30
IntArray = NDArray[np.int64]

# Tiny literal trees: heads[d] for d = 0..n, heads[0] == -1.
PROJECTIVE = [-1, 2, 0, 2, 3]  # 0 -> 2 -> {1, 3}, 3 -> 4
NON_PROJECTIVE = [-1, 3, 4, 0, 3]  # arc 4 -> 2 crosses 3 -> 1
CYCLIC = [-1, 0, 3, 4, 2]  # heads: 2 -> 3 -> 4 -> 2
MULTI_ROOTED = [-1, 0, 1, 0]  # two words attach to ROOT; still a tree


# ----------------------------------------------------------------- brute-force reference


@functools.cache
def all_trees(n: int) -> tuple[IntArray, NDArray[np.bool_], NDArray[np.bool_]]:
    """Every tree over n words (heads, shape (T, n+1)), its projectivity and single-rootedness.

    Enumerates all n**n head sequences without self-loops and keeps the acyclic ones by
    pointer jumping: a sequence is a tree when every word reaches ROOT in <= n steps.
    """
    index = np.indices((n,) * n, dtype=np.int64).reshape(n, -1).T  # (n**n, n)
    deps = np.arange(1, n + 1)
    heads = np.concatenate([np.zeros((len(index), 1), np.int64), index + (index >= deps)], 1)
    reach = heads.copy()  # ROOT maps to itself, so reach = heads**k stays at 0 once there
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        reach = np.take_along_axis(reach, reach, axis=1)
    trees = heads[(reach == 0).all(axis=1)]
    trees[:, 0] = -1
    left = np.minimum(trees[:, 1:], deps)
    right = np.maximum(trees[:, 1:], deps)
    crossing = (
        (left[:, :, None] < left[:, None, :])
        & (left[:, None, :] < right[:, :, None])
        & (right[:, :, None] < right[:, None, :])
    )
    projective = ~crossing.any(axis=(1, 2))
    single_root = (trees[:, 1:] == 0).sum(axis=1) == 1
    return trees, projective, single_root


def random_scores(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """Continuous random scores; about one matrix in three has some forbidden arcs."""
    scores = rng.normal(size=(n + 1, n + 1))
    if rng.random() < 0.35:
        scores[rng.random(scores.shape) < 0.25] = -np.inf
    return scores


def first_order_scores(scores: NDArray[np.float64], trees: IntArray) -> NDArray[np.float64]:
    n = scores.shape[0] - 1
    return np.asarray(scores[np.arange(1, n + 1), trees[:, 1:]].sum(axis=1))


def check_against_brute_force(
    heads: NDArray[np.intp], best: float, *, projective: bool, single_root: bool
) -> None:
    assert heads.dtype == np.intp and heads[0] == -1
    assert is_tree(heads)
    if projective:
        assert is_projective(heads)
    if single_root:
        assert np.count_nonzero(heads[1:] == 0) == 1


@pytest.mark.parametrize("n", range(1, 8))
def test_first_order_decoders_match_brute_force(n: int) -> None:
    trees, projective, single_root = all_trees(n)
    rng = np.random.default_rng(1000 + n)
    for _ in range(N_MATRICES):
        scores = random_scores(rng, n)
        tree_scores = first_order_scores(scores, trees)
        for decoder, is_proj in ((chu_liu_edmonds, False), (eisner, True)):
            for single in (True, False):
                allowed = (projective if is_proj else True) & (single_root if single else True)
                best = tree_scores[allowed].max()
                if best == -np.inf:
                    with pytest.raises(ValueError, match="no dependency tree"):
                        decoder(scores, single_root=single)
                    continue
                heads = decoder(scores, single_root=single)
                check_against_brute_force(heads, best, projective=is_proj, single_root=single)
                assert np.isclose(tree_score(scores, heads), best), (decoder, single, scores)
                via_mst = mst(scores, projective=is_proj, single_root=single)
                assert np.array_equal(via_mst, heads)


@pytest.mark.parametrize("n", range(2, 7))
def test_chu_liu_edmonds_with_tied_integer_scores_matches_brute_force(n: int) -> None:
    """Ties everywhere (scores in 0..3): many greedy cycles at once, many equal trees."""
    trees, _, single_root = all_trees(n)
    rng = np.random.default_rng(2000 + n)
    for _ in range(N_MATRICES):
        scores = rng.integers(0, 4, size=(n + 1, n + 1)).astype(np.float64)
        tree_scores = first_order_scores(scores, trees)
        for single in (True, False):
            heads = chu_liu_edmonds(scores, single_root=single)
            check_against_brute_force(heads, 0.0, projective=False, single_root=single)
            best = tree_scores[single_root].max() if single else tree_scores.max()
            assert tree_score(scores, heads) == best


def reference_second_order(arcs: NDArray[np.float64], sibs: NDArray[np.float64], heads: list[int]) -> float:
    """Plain-Python second-order score: arcs plus sibling terms, children generated outwards."""
    total = 0.0
    for head in range(len(heads)):
        children = [d for d in range(1, len(heads)) if heads[d] == head]
        right = sorted(c for c in children if c > head)
        left = sorted((c for c in children if c < head), reverse=True)
        for side in (right, left):
            previous = head
            for child in side:
                total += arcs[child, head] + sibs[head, previous, child]
                previous = child
    return total


@functools.cache
def sibling_index(n: int) -> tuple[IntArray, IntArray, NDArray[np.bool_]]:
    """Projective trees over n words, each word's previous sibling, and single-rootedness."""
    trees, projective, single_root = all_trees(n)
    trees = trees[projective]
    prev = np.zeros_like(trees)
    for row, heads in enumerate(trees.tolist()):
        for head in range(n + 1):
            children = [d for d in range(1, n + 1) if heads[d] == head]
            for side in (sorted(c for c in children if c > head),
                         sorted((c for c in children if c < head), reverse=True)):
                for previous, child in zip([head, *side], side, strict=False):
                    prev[row, child] = previous
    return trees, prev, single_root[projective]


@pytest.mark.parametrize("n", range(1, 7))
def test_second_order_eisner_matches_brute_force(n: int) -> None:
    trees, prev, single_root = sibling_index(n)
    deps = np.arange(1, n + 1)
    rng = np.random.default_rng(2000 + n)
    for _ in range(N_MATRICES):
        arcs = random_scores(rng, n)
        sibs = rng.normal(size=(n + 1,) * 3)
        if rng.random() < 0.3:
            sibs[rng.random(sibs.shape) < 0.1] = -np.inf
        heads_ = trees[:, 1:]
        scores = arcs[deps, heads_].sum(axis=1) + sibs[heads_, prev[:, 1:], deps].sum(axis=1)
        for single in (True, False):
            best = scores[single_root].max() if single else scores.max()
            if best == -np.inf:
                with pytest.raises(ValueError, match="no dependency tree"):
                    eisner_second_order(arcs, sibs, single_root=single)
                continue
            heads = eisner_second_order(arcs, sibs, single_root=single)
            check_against_brute_force(heads, best, projective=True, single_root=single)
            assert np.isclose(score_second_order(arcs, sibs, heads), best)
            assert np.isclose(reference_second_order(arcs, sibs, heads.tolist()), best)


@pytest.mark.parametrize("single_root", [True, False])
def test_rearrangement_never_lowers_the_score(single_root: bool) -> None:
    rng = np.random.default_rng(3)
    for n in (2, 4, 7, 12):
        for _ in range(8):
            arcs, sibs = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
            start = eisner_second_order(arcs, sibs, single_root=single_root)
            before = score_second_order(arcs, sibs, start)
            heads = second_order_rearrange(start, arcs, sibs, single_root=single_root)
            assert is_tree(heads) and heads.dtype == np.intp
            if single_root:
                assert np.count_nonzero(heads[1:] == 0) == 1
            after = score_second_order(arcs, sibs, heads)
            assert after >= before
            assert np.isclose(after, reference_second_order(arcs, sibs, heads.tolist()))
            # from a poor start (a chain) it must climb
            chain = np.arange(-1, n, dtype=np.intp)
            climbed = second_order_rearrange(chain, arcs, sibs, single_root=single_root)
            assert is_tree(climbed)
            assert score_second_order(arcs, sibs, climbed) >= score_second_order(arcs, sibs, chain)


def test_rearrangement_reaches_a_non_projective_optimum() -> None:
    arcs, sibs = np.zeros((5, 5)), np.zeros((5, 5, 5))
    arcs[1, 3], arcs[2, 0], arcs[3, 2], arcs[4, 2] = 4.0, 4.0, 4.0, 4.0  # 3 -> 1 crosses 0 -> 2
    projective = eisner_second_order(arcs, sibs)
    heads = second_order_rearrange(projective, arcs, sibs)
    assert heads.tolist() == [-1, 3, 0, 2, 2] and not is_projective(heads)
    assert second_order_rearrange(heads, arcs, sibs, max_iter=0).tolist() == heads.tolist()


def test_second_order_inputs_validated_and_not_mutated() -> None:
    rng = np.random.default_rng(5)
    arcs, sibs = rng.normal(size=(4, 4)), rng.normal(size=(4, 4, 4))
    arcs_before, sibs_before = arcs.copy(), sibs.copy()
    heads = eisner_second_order(arcs, sibs)
    second_order_rearrange(heads, arcs, sibs)
    assert np.array_equal(arcs, arcs_before) and np.array_equal(sibs, sibs_before)
    with pytest.raises(ValueError):
        eisner_second_order(arcs, sibs[:3])
    with pytest.raises(ValueError):
        eisner_second_order(arcs[:, :3], sibs)
    with pytest.raises(ValueError):
        second_order_rearrange([-1, 2, 3, 1], arcs, sibs)  # cyclic start
    with pytest.raises(ValueError):
        second_order_rearrange([-1, 0, 0, 0], arcs, sibs)  # three root children
    assert eisner_second_order(np.zeros((2, 2)), np.zeros((2, 2, 2))).tolist() == [-1, 0]


@pytest.mark.parametrize(("n", "tree_bonus"), [(10, 0.0), (25, 0.0), (60, 3.0)])
def test_single_root_matches_exhaustive_root_choice(n: int, tree_bonus: float) -> None:
    """Longer sentences: the single-root decode equals trying every root child.

    With ``tree_bonus`` a random tree with several ROOT children is favoured, as a trained
    scorer favours one: the unconstrained optimum is that tree, and the constraint binds.
    """
    rng = np.random.default_rng(n)
    for _ in range(15):
        scores = rng.normal(size=(n + 1, n + 1))
        scores[1:, 0] += 1.0  # several words want ROOT, so the constraint binds
        favoured = [0, 0, 0, *(int(rng.integers(0, d)) for d in range(3, n + 1))]
        scores[np.arange(1, n + 1), favoured[1:]] += tree_bonus
        best = -np.inf
        for child in range(1, n + 1):
            restricted = scores.copy()
            restricted[:, 0] = -np.inf
            restricted[child, 0] = scores[child, 0]
            best = max(best, tree_score(scores, chu_liu_edmonds(restricted, single_root=False)))
        heads = chu_liu_edmonds(scores)
        assert np.count_nonzero(heads[1:] == 0) == 1 and is_tree(heads)
        assert np.isclose(tree_score(scores, heads), best)
        free = chu_liu_edmonds(scores, single_root=False)
        assert tree_score(scores, free) >= best - 1e-9
        if tree_bonus:
            assert np.count_nonzero(free[1:] == 0) > 1
        assert tree_score(scores, eisner(scores)) <= best + 1e-9


# -------------------------------------------------------------------------- unit tests


def test_find_cycle() -> None:
    assert find_cycle(PROJECTIVE) is None
    assert find_cycle(NON_PROJECTIVE) is None
    assert find_cycle(MULTI_ROOTED) is None
    assert find_cycle(CYCLIC) == [2, 3, 4]
    assert find_cycle([-1, 1]) == [1]  # a self-loop is a cycle
    assert find_cycle([-1, 2, 1, 0]) == [1, 2]
    assert find_cycle(np.array([-1, -1, 0])) is None  # unknown heads end a path


def test_is_tree() -> None:
    assert is_tree(PROJECTIVE)
    assert is_tree(NON_PROJECTIVE)
    assert is_tree(MULTI_ROOTED)
    assert not is_tree(CYCLIC)
    assert not is_tree([-1, 1])  # self-loop
    assert not is_tree([-1, -1, 0])  # unknown head
    assert not is_tree([-1, 3])  # head out of range
    assert not is_tree([0, 0])  # heads[0] must be -1


def test_is_projective() -> None:
    assert is_projective(PROJECTIVE)
    assert is_projective(MULTI_ROOTED)
    assert not is_projective(NON_PROJECTIVE)
    assert not is_projective([-1, 3, 0, 1])  # ROOT arc 0 -> 2 crosses 3 -> 1
    assert is_projective([-1, 0])


def test_tree_score() -> None:
    scores = np.arange(16, dtype=float).reshape(4, 4)
    assert tree_score(scores, PROJECTIVE[:4]) == scores[1, 2] + scores[2, 0] + scores[3, 2]
    with pytest.raises(ValueError):
        tree_score(scores, [-1, 0])


@pytest.mark.parametrize("decoder", [eisner, chu_liu_edmonds])
@pytest.mark.parametrize("single_root", [True, False])
def test_n_equals_one(decoder: object, single_root: bool) -> None:
    heads = decoder(np.array([[-np.inf, -np.inf], [0.5, -np.inf]]), single_root=single_root)  # type: ignore[operator]
    assert heads.tolist() == [-1, 0] and heads.dtype == np.intp


@pytest.mark.parametrize("decoder", [eisner, chu_liu_edmonds, mst])
def test_input_not_mutated(decoder: object) -> None:
    scores = np.random.default_rng(0).normal(size=(6, 6))
    before = scores.copy()
    decoder(scores)  # type: ignore[operator]
    assert np.array_equal(scores, before)


@pytest.mark.parametrize("decoder", [eisner, chu_liu_edmonds, mst])
@pytest.mark.parametrize(
    "bad",
    [np.zeros((3, 4)), np.zeros((1, 1)), np.zeros(3), np.zeros((2, 2, 2)), np.full((3, 3), np.nan)],
)
def test_bad_input_raises(decoder: object, bad: NDArray[np.float64]) -> None:
    with pytest.raises(ValueError):
        decoder(bad)  # type: ignore[operator]


def test_greedy_tree_fast_path_and_ignored_row_zero() -> None:
    scores = np.zeros((4, 4))
    scores[1, 2] = scores[2, 0] = scores[3, 2] = 1.0
    scores[0, 3] = 100.0  # row 0 (ROOT's head) and the diagonal are ignored
    scores[2, 2] = 100.0
    assert chu_liu_edmonds(scores).tolist() == [-1, 2, 0, 2]
    assert eisner(scores).tolist() == [-1, 2, 0, 2]


def test_single_root_differs_from_multi_root() -> None:
    scores = np.full((4, 4), -1.0)
    scores[1:, 0] = 5.0  # every word prefers ROOT
    assert chu_liu_edmonds(scores, single_root=False).tolist() == [-1, 0, 0, 0]
    assert eisner(scores, single_root=False).tolist() == [-1, 0, 0, 0]
    for decoder in (chu_liu_edmonds, eisner):
        assert np.count_nonzero(decoder(scores)[1:] == 0) == 1


def test_large_sentence_is_a_tree() -> None:
    scores = np.random.default_rng(7).normal(size=(61, 61))
    for projective in (True, False):
        heads = mst(scores, projective=projective)
        assert is_tree(heads) and np.count_nonzero(heads[1:] == 0) == 1
    assert is_projective(mst(scores, projective=True))
    assert tree_score(scores, mst(scores)) >= tree_score(scores, mst(scores, projective=True))


@pytest.mark.parametrize("module", [first_order, second_order])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
