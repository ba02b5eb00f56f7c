"""Tests of the probabilistic members' k-best helpers (parsing.kbest)."""

from __future__ import annotations

import doctest

import numpy as np

from parsing import kbest
from parsing.kbest import list_parse, tree_distribution


def test_doctests() -> None:
    assert doctest.testmod(kbest).failed == 0


def test_derivations_of_one_tree_add_up_and_posteriors_follow_the_list() -> None:
    chain, flat = np.array([-1, 0, 1]), np.array([-1, 2, 0])
    listed = tree_distribution([(chain, ["", "root", "obj"], np.log(0.3)),
                                (flat, ["", "nsubj", "root"], np.log(0.5)),
                                (chain, ["", "root", "obj"], np.log(0.2))])
    assert [round(p, 6) for _, _, p in listed] == [0.5, 0.5]
    assert listed[0][0].tolist() == chain.tolist()  # ties keep the tree met first
    parse = list_parse(listed, 1)
    assert parse.heads.tolist() == flat.tolist() and parse.extras["rank"] == 1
    assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
    assert parse.arc_scores[1:].tolist() == [0.5, 0.5]
