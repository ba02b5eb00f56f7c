"""Tree predicates of :mod:`parsing.trees` (their doctests, and bad input)."""

from __future__ import annotations

import doctest

import pytest

from parsing import trees
from parsing.trees import depths


def test_doctests() -> None:
    result = doctest.testmod(trees)
    assert result.attempted and result.failed == 0


def test_depths_follow_every_chain_to_the_root() -> None:
    # 3 -> 4 -> 2 -> 0 and 1 -> 2: a chain longer than the words visited before it
    assert depths([-1, 2, 0, 4, 2]).tolist() == [0, 2, 1, 3, 2]


@pytest.mark.parametrize(("heads", "expected"), [([-1, 2, 1], [0, -1, -1]), ([-1, 0, 5], [0, 1, -1]),
                                               ([-1, 0, 3, 4, 3, 1], [0, 1, -1, -1, -1, 2])])
def test_depths_mark_the_words_that_never_reach_root(heads: list[int], expected: list[int]) -> None:
    assert depths(heads).tolist() == expected
