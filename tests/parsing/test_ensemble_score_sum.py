"""Score-level ensemble with exact inference (Razavi 2012)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from parsing.decoders.first_order import is_tree, tree_score
from parsing.ensemble.score_sum import ScoreSum, normalise_scores, sum_scores
from parsing.types import Sentence
from tests.parsing.fakes import FixedParser, RuleParser


def random_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    scores = rng.normal(size=(n + 1, n + 1)) * 3
    scores[0] = -np.inf
    np.fill_diagonal(scores, -np.inf)
    return scores


def test_normalisations() -> None:
    rng = np.random.default_rng(0)
    s = random_scores(rng, 4)
    soft = normalise_scores(s, "softmax")
    np.testing.assert_allclose(np.where(np.isfinite(soft), soft, 0)[1:].sum(axis=1), 1.0)
    probs = np.exp(normalise_scores(s, "log_softmax")[1:])  # forbidden arcs: exp(-inf) = 0
    np.testing.assert_allclose(probs, np.where(np.isfinite(soft[1:]), soft[1:], 0.0))
    z = normalise_scores(s, "zscore")
    assert abs(z[np.isfinite(z)].mean()) < 1e-9 and abs(z[np.isfinite(z)].std() - 1) < 1e-9
    np.testing.assert_array_equal(normalise_scores(s, "none"), s)
    assert np.isneginf(soft[0]).all() and np.isneginf(np.diag(soft)).all()
    with pytest.raises(ValueError):
        normalise_scores(s, "minmax")


@pytest.mark.parametrize("normalise", ["none", "softmax", "log_softmax", "zscore"])
def test_decoding_is_exact_over_the_summed_scores(normalise: str) -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        n = int(rng.integers(1, 5))
        matrices = [random_scores(rng, n) for _ in range(3)]
        weights = rng.random(3) + 0.1
        total = sum_scores(matrices, weights, normalise=normalise)
        trees = [[-1, *h] for h in itertools.product(range(n + 1), repeat=n)]
        trees = [t for t in trees if is_tree(t) and t[1:].count(0) == 1]
        best = max(tree_score(total, t) for t in trees)
        ensemble = ScoreSum.from_fitted([], normalise=normalise)  # decoding only
        assert tree_score(total, ensemble.decode(total)) == pytest.approx(best)


def test_members_scores_are_summed_with_weights() -> None:
    sentence = Sentence.from_words(["a", "b", "c", "d"], sent_id="s")
    left, right = RuleParser("left", margin=3.0, label="L"), RuleParser("right", margin=1.0, label="R")
    parse = ScoreSum.from_fitted([left, right]).predict([sentence])[0]
    assert parse.heads.tolist() == [-1, 0, 1, 2, 3] and parse.deprels[1:] == ["L"] * 4
    parse = ScoreSum.from_fitted([left, right], weights=[0.0, 1.0]).predict([sentence])[0]
    assert parse.heads.tolist() == [-1, 2, 3, 4, 0] and parse.deprels[1:] == ["R"] * 4
    with pytest.raises(TypeError, match="score_arcs"):
        ScoreSum.from_fitted([left, FixedParser({"s": [0, 1, 2, 3]})])
