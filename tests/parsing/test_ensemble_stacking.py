"""Stacking (Martins et al. 2008): jackknifed level 0, stacked-feature level 1."""

from __future__ import annotations

import numpy as np
import pytest

from parsing.ensemble.stacking import PRESETS, StackedParser, Stacking, _siblings, stacked_features
from parsing.types import Sentence
from tests.parsing.fakes import FIT_LOG, RuleParser


def random_trees(count: int, seed: int) -> list[Sentence]:
    rng = np.random.default_rng(seed)
    result = []
    for i in range(count):
        n = int(rng.integers(3, 8))
        order = rng.permutation(n) + 1
        heads = np.zeros(n + 1, dtype=int)
        for k in range(1, n):
            heads[order[k]] = order[rng.integers(0, k)]
        result.append(Sentence.from_words(
            [f"w{int(x)}" for x in rng.integers(0, 30, size=n)],
            upos=rng.choice(["NOUN", "VERB", "ADP"], size=n).tolist(),
            heads=heads[1:].tolist(), deprels=rng.choice(["a", "b"], size=n).tolist(),
            sent_id=f"s{seed}-{i}"))
    return result


def test_siblings_of_a_candidate_arc() -> None:
    heads = np.array([-1, 3, 3, 0, 3, 3])  # word 3 heads 1, 2, 4, 5
    prev, nxt = _siblings(heads)
    # the previous sibling is the nearest child towards (and possibly beyond) the head
    assert (prev[2, 3], nxt[2, 3]) == (4, 1)
    assert (prev[5, 3], nxt[5, 3]) == (4, -1)
    assert (prev[4, 3], nxt[4, 3]) == (2, 5)
    assert (prev[1, 2], nxt[1, 2]) == (-1, -1)  # word 2 has no predicted children


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_are_cumulative(preset: str) -> None:
    upos = np.array([1, 2, 3, 2])
    features = stacked_features(upos, np.array([-1, 2, 0, 2]), np.array([0, 1, 2, 1]), member=0,
                                groups=PRESETS[preset], n_bits=16)
    assert features.shape[:2] == (4, 4)
    assert features.shape[2] == {"A": 5, "B": 9, "C": 12, "D": 14, "E": 16}[preset]
    assert features.max() <= 1 << 16


def test_folds_never_see_their_own_gold() -> None:
    FIT_LOG.clear()
    train = random_trees(12, 0)
    stacking = Stacking([RuleParser("memorise", tag="spy")], preset="A", max_iter=2, n_bits=16,
                        min_count=1, tuning_folds=2)
    level0 = stacking.jackknife_parses(train)
    folds = FIT_LOG["spy"]
    assert len(folds) == 2 and not set(folds[0]) & set(folds[1])
    for sentence, parse in zip(train, level0[0], strict=True):  # held-out: never the memorised gold
        assert parse.heads.tolist() == list(range(-1, len(sentence)))
    FIT_LOG.clear()
    stacking.fit(train)
    *jackknife_calls, full = FIT_LOG["spy"]
    assert len(jackknife_calls) == 2 and sorted(full) == sorted(s.sent_id for s in train)


def test_level1_learns_to_trust_a_good_level0() -> None:
    train, test = random_trees(60, 1), random_trees(20, 2)
    stacking = Stacking([RuleParser("gold", noise=0.1, random_state=3)], preset="E", max_iter=4,
                        n_bits=18, min_count=1, tuning_folds=2).fit(train)
    predicted = stacking.predict(test)
    correct = sum(int(np.sum(p.heads[1:] == s.heads[1:])) for p, s in zip(predicted, test, strict=True))
    assert correct / sum(len(s) for s in test) > 0.8
    assert all(set(p.deprels[1:]) <= {"a", "b"} for p in predicted)


def test_stacked_parser_needs_level0() -> None:
    with pytest.raises(TypeError, match="level-0"):
        StackedParser().fit([])
    with pytest.raises(TypeError, match="level-0"):
        StackedParser().predict([])
