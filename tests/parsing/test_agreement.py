"""Inter-annotator agreement (parsing.scorer.agreement) on constructed data with known values."""

from __future__ import annotations

import doctest
from collections import Counter

import pytest

from parsing.scorer import agreement
from parsing.scorer.agreement import AgreementCounts, cohen_kappa, corpus_agreement, sentence_agreement


def test_doctests() -> None:
    assert doctest.testmod(agreement).failed == 0


def test_kappa_of_the_textbook_table() -> None:
    """50 items, yes/no: 20 both yes, 5 A yes B no, 10 A no B yes, 15 both no:
    p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, kappa = 0.4."""
    table = Counter({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert cohen_kappa(table) == pytest.approx(0.4)


def test_kappa_perfect_chance_and_undefined() -> None:
    assert cohen_kappa(Counter({("a", "a"): 3, ("b", "b"): 2})) == pytest.approx(1.0)
    # A always says a, B splits evenly, half agree: p_o = 0.5 = p_e, kappa 0
    assert cohen_kappa(Counter({("a", "a"): 2, ("a", "b"): 2})) == pytest.approx(0.0)
    assert cohen_kappa(Counter()) is None
    assert cohen_kappa(Counter({("a", "a"): 4})) is None


def test_sentence_counts_and_attached_kappa() -> None:
    # word 3 differs in head and label, word 4 same head different label
    counts = sentence_agreement([2, 0, 2, 2], ["nsubj", "root", "obj", "advmod"],
                                [2, 0, 1, 2], ["nsubj", "root", "nmod", "obl"])
    assert (counts.words, counts.same_head, counts.same_arc) == (4, 3, 2)
    assert counts.uas == pytest.approx(0.75) and counts.las == pytest.approx(0.5)
    assert sum(counts.attached_labels.values()) == 3
    assert ("obj", "nmod") not in counts.attached_labels and counts.labels[("obj", "nmod")] == 1
    # attached: pairs (nsubj,nsubj) (root,root) (advmod,obl): p_o = 2/3,
    # p_e = (1/3·1/3)·2 + 1/3·0 + 0·1/3 = 2/9, kappa = (2/3 - 2/9) / (7/9) = 4/7
    assert counts.attached_kappa == pytest.approx(4 / 7)


def test_pooling_adds_counts() -> None:
    one = sentence_agreement([0], ["root"], [0], ["root"])
    two = sentence_agreement([0, 1], ["root", "obj"], [2, 0], ["nsubj", "root"])
    pooled = corpus_agreement([([0], ["root"], [0], ["root"]),
                               ([0, 1], ["root", "obj"], [2, 0], ["nsubj", "root"])])
    assert pooled == one + two
    assert (pooled.sentences, pooled.words, pooled.same_head) == (2, 3, 1)
    assert AgreementCounts().to_dict()["uas"] is None


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="one head and one label"):
        sentence_agreement([0, 1], ["root"], [0, 1], ["root", "x"])
