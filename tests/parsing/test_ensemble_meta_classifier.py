"""SVM meta-classifier (Green 2013 §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from parsing.decoders.first_order import is_tree
from parsing.ensemble.meta_classifier import MetaClassifier, word_features
from parsing.ensemble.voting import ArcVoting
from parsing.types import Sentence
from tests.parsing.fakes import RuleParser


def random_trees(count: int, seed: int) -> list[Sentence]:
    rng = np.random.default_rng(seed)
    result = []
    for i in range(count):
        n = int(rng.integers(3, 9))
        order = rng.permutation(n) + 1
        heads = np.zeros(n + 1, dtype=int)
        for k in range(1, n):
            heads[order[k]] = order[rng.integers(0, k)]
        tags = rng.choice(["NOUN", "VERB", "ADP"], size=n).tolist()
        result.append(Sentence.from_words(["w"] * n, upos=tags, heads=heads[1:].tolist(),
                                          deprels=["dep"] * n, sent_id=f"s{seed}-{i}"))
    return result


def test_agreement_features_follow_green_pair_order() -> None:
    heads = np.array([[-1, 3], [-1, 4], [-1, 2], [-1, 3], [-1, 2]])  # Green's Tables 3.15/3.16
    x = word_features(heads, ["<ROOT>", "X"], ["agreement"], [])
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    expected = [1.0 if heads[i, 1] == heads[j, 1] else 0.0 for i, j in pairs]
    assert x.tolist() == [expected] and x.shape == (1, 10)
    assert x[0, pairs.index((0, 3))] == 1.0 and x[0, pairs.index((2, 4))] == 1.0
    full = word_features(heads, ["<ROOT>", "X"], ["agreement", "vote_share", "upos", "position"], ["X"])
    assert full.shape == (1, 10 + 5 + 1 + 9)
    with pytest.raises(ValueError, match="unknown features"):
        word_features(heads, ["<ROOT>", "X"], ["nope"], [])


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_learns_to_trust_the_member_that_is_always_right(kernel: str) -> None:
    tuning, test = random_trees(40, 1), random_trees(15, 2)
    # two colluding wrong members outvote the always-right one under majority voting
    members = [RuleParser("left"), RuleParser("gold"), RuleParser("left", label="x")]
    meta = MetaClassifier.from_fitted(members, tuning, kernel=kernel)
    gold = [s.heads.tolist() for s in test]
    predicted = meta.predict(test)
    assert [p.heads.tolist() for p in predicted] == gold
    assert all(p.deprels[1:] == ["dep"] * len(p) for p in predicted)
    assert [p.heads.tolist() for p in ArcVoting.from_fitted(members).predict(test)] != gold


def test_output_is_repaired_into_a_tree() -> None:
    tuning, test = random_trees(30, 3), random_trees(20, 4)
    members = [RuleParser("gold", noise=0.6, random_state=s) for s in range(3)]
    meta = MetaClassifier.from_fitted(members, tuning, features=("agreement",))
    for parse in meta.predict(test):
        assert is_tree(parse.heads) and int((parse.heads[1:] == 0).sum()) == 1


def test_a_single_class_needs_no_svm() -> None:
    tuning = random_trees(5, 5)
    only = MetaClassifier.from_fitted([RuleParser("gold")], tuning)
    assert only.classifier_ is None and only.predict(tuning)[0].heads.tolist() == tuning[0].heads.tolist()
