"""Minimum Bayes risk selection, checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from parsing.decoders.first_order import is_tree
from parsing.ensemble.mbr import MinimumBayesRisk, expected_loss, mbr_parse, tree_distribution
from parsing.types import Parse, Sentence
from tests.parsing.fakes import RuleParser


def all_trees(n: int, *, single_root: bool) -> list[list[int]]:
    trees = []
    for heads in itertools.product(range(n + 1), repeat=n):
        full = [-1, *heads]
        if is_tree(full) and (not single_root or heads.count(0) == 1):
            trees.append(full)
    return trees


def random_tree(rng: np.random.Generator, n: int) -> Parse:
    order = rng.permutation(n) + 1
    heads = np.full(n + 1, -1, dtype=np.intp)
    heads[order[0]] = 0
    for i in range(1, n):
        heads[order[i]] = order[rng.integers(0, i)]
    return Parse(heads, ["", *rng.choice(["a", "b"], size=n).tolist()])


def brute_loss(heads: list[int], trees: list[Parse], probs: np.ndarray) -> float:
    pairs = zip(trees, probs, strict=True)
    return float(sum(p * np.sum(np.asarray(heads)[1:] != t.heads[1:]) for t, p in pairs))


def test_candidates_mode_picks_minimum_expected_loss() -> None:
    rng = np.random.default_rng(1)
    for _ in range(40):
        n = int(rng.integers(2, 6))
        members = [random_tree(rng, n) for _ in range(int(rng.integers(2, 6)))]
        weights = rng.random(len(members)) + 0.1
        result = mbr_parse(members, weights)
        trees, probs = tree_distribution(members, weights)
        losses = [brute_loss(t.heads.tolist(), trees, probs) for t in trees]
        assert brute_loss(result.heads.tolist(), trees, probs) == pytest.approx(min(losses))
        assert result.extras["expected_loss"] == pytest.approx(min(losses))
        chosen = members[int(result.extras["candidate"])]  # type: ignore[arg-type]
        assert result.deprels == chosen.deprels  # the chosen tree keeps its own labels


@pytest.mark.parametrize("single_root", [True, False])
def test_all_mode_matches_brute_force_over_every_tree(single_root: bool) -> None:
    rng = np.random.default_rng(2)
    for _ in range(15):
        n = int(rng.integers(1, 5))
        members = [random_tree(rng, n) for _ in range(3)]
        weights = rng.random(3) + 0.1
        trees, probs = tree_distribution(members, weights)
        best = min(brute_loss(t, trees, probs) for t in all_trees(n, single_root=single_root))
        result = mbr_parse(members, weights, search="all", single_root=single_root)
        assert brute_loss(result.heads.tolist(), trees, probs) == pytest.approx(best, abs=1e-4)


def test_kbest_lists_spread_member_mass() -> None:
    a = Parse(np.array([-1, 2, 0]), ["", "x", "root"])
    b = Parse(np.array([-1, 0, 1]), ["", "root", "y"],
              extras={"kbest": [([-1, 0, 1], ["", "root", "y"], 0.6), ([-1, 2, 0], ["", "z", "root"], 0.4)]})
    trees, probs = tree_distribution([a, b], [1.0, 1.0])
    np.testing.assert_allclose(probs, [0.5, 0.3, 0.2])
    assert mbr_parse([a, b], [1.0, 1.0]).heads.tolist() == [-1, 2, 0]  # 0.7 of the mass
    assert mbr_parse([a, b], [1.0, 1.0], use_kbest=False).heads.tolist() == [-1, 2, 0]  # tie: first


def test_labelled_loss() -> None:
    assert expected_loss([[-1, 0, 1]], [[-1, 0, 1]], [1.0], candidate_labels=[["", "a", "b"]],
                         support_labels=[["", "a", "c"]]).tolist() == [1.0]
    a = Parse(np.array([-1, 0, 1]), ["", "root", "b"])
    c = Parse(np.array([-1, 0, 1]), ["", "root", "c"])
    result = mbr_parse([a, c, c], [1.0, 1.0, 1.0], labelled=True)
    assert result.deprels == ["", "root", "c"]


def test_invalid_candidates_fall_back_to_a_tree() -> None:
    cyclic = Parse(np.array([-1, 2, 1, 0]), [""] * 4)
    two_roots = Parse(np.array([-1, 0, 0, 1]), [""] * 4)
    result = mbr_parse([cyclic, two_roots], [1.0, 1.0])
    assert is_tree(result.heads) and result.extras["candidate"] is None
    assert int((result.heads[1:] == 0).sum()) == 1


def test_estimator_with_learned_weights() -> None:
    gold = [Sentence.from_words(["a", "b", "c"], heads=[2, 0, 2], sent_id=f"s{i}") for i in range(4)]
    members = [RuleParser("left"), RuleParser("gold"), RuleParser("right")]
    mbr = MinimumBayesRisk.from_fitted(members, gold, weighting="power", exponent=2.0)
    assert mbr.weights_[1] == 1.0
    assert mbr.predict(gold[:1])[0].heads.tolist() == [-1, 2, 0, 2]
