"""Fuzzy C-means and per-UPOS weighted voting (Green 2013 §3.1.2)."""

from __future__ import annotations

import numpy as np
import pytest

from parsing.ensemble.fuzzy import FuzzyPosVoting, fuzzy_cmeans, pos_model_weights, upos_profiles
from parsing.ensemble.voting import ArcVoting
from parsing.types import Sentence
from tests.parsing.fakes import FixedParser


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_fuzzy_cmeans_recovers_two_obvious_clusters(metric: str) -> None:
    rng = np.random.default_rng(0)
    first = np.array([0.9, 0.1, 0.1]) + rng.normal(0, 0.03, size=(10, 3))
    second = np.array([0.1, 0.2, 0.9]) + rng.normal(0, 0.03, size=(8, 3))
    points = np.vstack([first, second])
    u, v = fuzzy_cmeans(points, 2, metric=metric, random_state=3)
    assert u.shape == (18, 2) and v.shape == (2, 3)
    np.testing.assert_allclose(u.sum(axis=1), 1.0)
    labels = u.argmax(axis=1)
    assert len(set(labels[:10])) == 1 and len(set(labels[10:])) == 1 and labels[0] != labels[10]
    assert u.max(axis=1).min() > 0.8
    centre = v[labels[0]]
    assert centre.argmax() == 0 and v[labels[10]].argmax() == 2
    again, _ = fuzzy_cmeans(points, 2, metric=metric, random_state=3)
    np.testing.assert_array_equal(u, again)


def test_fuzzy_cmeans_point_on_a_centroid_and_bad_arguments() -> None:
    u, _ = fuzzy_cmeans([[1.0, 0.0], [1.0, 0.0]], 1)
    np.testing.assert_allclose(u, [[1.0], [1.0]])
    with pytest.raises(ValueError):
        fuzzy_cmeans([[1.0, 0.0]], 2)
    with pytest.raises(ValueError):
        fuzzy_cmeans([[1.0, 0.0], [0.0, 1.0]], 2, fuzzifier=1.0)


def test_green_edge_weight_equation() -> None:
    # Fig. 3.4 worked example (VBZ; ZPar and Charniak propose the arc): sum_k u_k sum_j w_kj
    u = np.array([0.971, 0.025, 0.0036])
    w = np.array([[21.48, 18.38], [26.46, 3.91], [31.68, 8.70]])
    expected = sum(u[k] * w[k].sum() for k in range(3))
    assert pos_model_weights(u, w).sum() == pytest.approx(expected)
    assert expected == pytest.approx(39.59, abs=0.03)
    np.testing.assert_allclose(pos_model_weights(u, w, exponent=10), (u @ w) ** 10)


def _corpus(count: int, offset: int) -> list[Sentence]:
    rng = np.random.default_rng(offset)
    result = []
    for i in range(count):
        n = 5
        tags = rng.choice(["NOUN", "VERB"], size=n).tolist()
        heads = [d + 1 for d in range(1, n)] + [0]  # right chain
        result.append(Sentence.from_words(["w"] * n, upos=tags, heads=heads, sent_id=f"s{offset + i}"))
    return result


def test_per_upos_weights_follow_the_expert_of_each_tag() -> None:
    tuning, test = _corpus(20, 0), _corpus(10, 100)

    def heads(sentence: Sentence, expert: str | None) -> list[int]:
        left = list(range(len(sentence)))  # d -> d-1 (wrong everywhere)
        gold = sentence.heads[1:].tolist()
        return [g if tag == expert else w for g, w, tag in zip(gold, left, sentence.upos[1:], strict=True)]

    def member(expert: str | None) -> FixedParser:
        return FixedParser({str(s.sent_id): heads(s, expert) for s in tuning + test})

    members = [member("NOUN"), member("VERB"), member(None), member(None)]
    tags, profiles = upos_profiles(tuning, [m.predict(tuning) for m in members])
    assert tags == ["NOUN", "VERB"]
    np.testing.assert_allclose(profiles, [[1, 0, 0, 0], [0, 1, 0, 0]])
    fuzzy = FuzzyPosVoting.from_fitted(members, tuning, n_clusters=3)
    assert fuzzy.memberships_.shape == (2, 2)  # K lowered to the number of tags
    np.testing.assert_allclose(fuzzy.memberships_.sum(axis=1), 1.0)
    gold = [s.heads.tolist() for s in test]
    assert [p.heads.tolist() for p in fuzzy.predict(test)] == gold
    uniform = ArcVoting.from_fitted(members)
    assert [p.heads.tolist() for p in uniform.predict(test)] != gold
    unseen = fuzzy.token_weights(["<ROOT>", "ADJ"])
    np.testing.assert_allclose(unseen[:, 1], fuzzy.default_weights_)
