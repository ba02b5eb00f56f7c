"""Tests of parsing.scorer.significance: null cases, clear differences, determinism, exact values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parsing.scorer.significance import (
    approximate_randomization,
    binomial_two_sided,
    compare,
    mcnemar,
    paired_bootstrap,
)
from parsing.types import Parse, Sentence


def random_gold(seed: int, sentences: int = 150) -> list[Sentence]:
    rng = np.random.default_rng(seed)
    corpus = []
    for _ in range(sentences):
        n = int(rng.integers(2, 30))
        heads = [0] + [int(rng.integers(1, d + 1)) for d in range(1, n)]
        corpus.append(Sentence.from_words(
            [f"w{i}" for i in range(n)], heads=heads,
            deprels=["root"] + ["nsubj"] * (n - 1), upos=["NOUN"] * n,
        ))
    return corpus


def system(gold: list[Sentence], *, error_rate: float, seed: int) -> list[Parse]:
    """Parses with exactly ``round(error_rate * W)`` wrong heads and as many wrong labels,
    on words drawn at random (``W`` words in all)."""
    rng = np.random.default_rng(seed)
    total = sum(len(s) for s in gold)
    wrong_head = set(rng.choice(total, round(error_rate * total), replace=False).tolist())
    wrong_label = set(rng.choice(total, round(error_rate * total), replace=False).tolist())
    parses, word = [], 0
    for s in gold:
        heads, deprels = s.heads.copy(), list(s.deprels)
        for d in range(1, len(s) + 1):
            if word in wrong_head:
                heads[d] = (heads[d] + 1) % (len(s) + 1) or 1
            if word in wrong_label:
                deprels[d] = "obj"
            word += 1
        parses.append(Parse(heads=heads, deprels=deprels))
    return parses


GOLD = random_gold(0)
GOOD = system(GOLD, error_rate=0.10, seed=1)
BAD = system(GOLD, error_rate=0.25, seed=2)
SIMILAR = system(GOLD, error_rate=0.105, seed=3)


def test_identical_systems_are_not_significant() -> None:
    results = compare(GOLD, GOOD, GOOD, resamples=500, seed=0)
    for result in results.values():
        assert result.delta == 0.0
        assert result.bootstrap.p_value == 1.0
        assert result.randomization_p == 1.0
        assert (result.mcnemar.b, result.mcnemar.c, result.mcnemar.p_value) == (0, 0, 1.0)
        assert result.bootstrap.ci_low == result.bootstrap.ci_high == 0.0


def test_clearly_better_system_is_significant() -> None:
    results = compare(GOLD, GOOD, BAD, resamples=1000, seed=0)
    for result in results.values():
        assert result.delta > 0.1
        assert result.bootstrap.p_value < 0.01
        assert result.randomization_p < 0.01
        assert result.mcnemar.method == "chi2" and result.mcnemar.p_value < 1e-6
        assert result.bootstrap.ci_low > 0 and result.bootstrap.ci_high > result.delta


def test_systems_of_equal_quality_are_not_significant() -> None:
    result = compare(GOLD, GOOD, SIMILAR, resamples=1000, seed=0)["UAS"]
    assert 0 < result.delta < 0.01
    assert result.bootstrap.p_value > 0.2 and result.randomization_p > 0.2
    assert result.mcnemar.p_value > 0.2
    assert result.bootstrap.ci_low < 0 < result.bootstrap.ci_high


def test_tests_are_deterministic_given_a_seed() -> None:
    first = compare(GOLD, GOOD, SIMILAR, resamples=300, seed=5)
    again = compare(GOLD, GOOD, SIMILAR, resamples=300, seed=5)
    other = compare(GOLD, GOOD, SIMILAR, resamples=300, seed=6)
    assert first == again
    assert first["LAS"].bootstrap != other["LAS"].bootstrap


def test_bootstrap_chunks_do_not_change_the_sample_count() -> None:
    result = paired_bootstrap([5, 4, 3], [4, 4, 2], [6, 5, 4], resamples=2500, seed=1)
    assert result.resamples == 2500
    assert result.delta == pytest.approx(2 / 15)


def test_randomization_with_one_decisive_sentence() -> None:
    # a single differing sentence: half the swaps reproduce |delta|, so p is about 1
    p = approximate_randomization([5, 3, 3], [0, 3, 3], trials=2000, seed=0)
    assert p == pytest.approx(1.0)


def test_binomial_two_sided_values() -> None:
    assert binomial_two_sided(0, 10) == pytest.approx(2 / 1024)
    assert binomial_two_sided(10, 10) == pytest.approx(2 / 1024)
    assert binomial_two_sided(2, 10) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert binomial_two_sided(0, 0) == 1.0


def test_mcnemar_exact_for_small_counts_and_chi2_otherwise() -> None:
    small = mcnemar([True] * 7 + [False] * 2, [False] * 7 + [True] * 2)
    assert (small.b, small.c, small.method) == (7, 2, "exact")
    assert small.p_value == pytest.approx(2 * (1 + 9 + 36) / 512)
    a = np.array([True] * 30 + [False] * 10 + [True] * 50)
    b = np.array([False] * 30 + [True] * 10 + [True] * 50)
    large = mcnemar(a, b)
    assert (large.b, large.c, large.method) == (30, 10, "chi2")
    assert large.statistic == pytest.approx(19**2 / 40)
    assert large.p_value == pytest.approx(math.erfc(math.sqrt(19**2 / 80)))


def test_mcnemar_agrees_with_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    a = np.array([True] * 30 + [False] * 10)
    b = ~a
    assert mcnemar(a, b).p_value == pytest.approx(stats.chi2.sf(19**2 / 40, 1))
    assert binomial_two_sided(3, 17) == pytest.approx(stats.binomtest(3, 17).pvalue)


@pytest.mark.parametrize(
    "call",
    [
        lambda: paired_bootstrap([1, 2], [1], [2, 2]),
        lambda: paired_bootstrap([0], [0], [0]),
        lambda: paired_bootstrap([1], [1], [1], resamples=0),
        lambda: approximate_randomization([1], [1], trials=0),
        lambda: mcnemar([True], [True, False]),
    ],
)
def test_bad_inputs_raise(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


def test_compare_checks_words() -> None:
    with pytest.raises(ValueError, match="sentences"):
        compare(GOLD, GOOD, GOOD[:-1], resamples=10)
