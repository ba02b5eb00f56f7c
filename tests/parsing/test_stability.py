"""Keeping a previous tree's arcs unless this round's members back the new ones by a margin."""

from __future__ import annotations

import numpy as np
import pytest

from parsing.ensemble.stability import keep_previous, label_share, with_previous_votes
from parsing.trees import is_tree
from parsing.types import Parse


def parse(heads: list[int], deprels: list[str]) -> Parse:
    return Parse(np.array([-1, *heads]), ["", *deprels])


# three words; members split 2:1 on word 1's head
A = parse([2, 0, 2], ["nsubj", "root", "obj"])
B = parse([2, 0, 2], ["nsubj", "root", "obj"])
C = parse([3, 0, 2], ["nmod", "root", "obj"])
PREVIOUS = parse([3, 0, 2], ["nmod", "root", "obl"])


def test_a_close_vote_keeps_the_previous_arc_and_label() -> None:
    kept = keep_previous([A, B, C], [1.0, 1.0, 1.0], A, PREVIOUS.heads, PREVIOUS.deprels, margin=0.34)
    assert kept.heads.tolist() == [-1, 3, 0, 2]  # 2/3 against 1/3: within a margin of 0.34
    assert kept.deprels[1] == "nmod"
    assert kept.deprels[3] == "obj"  # same head, but every member says obj: the lead beats the margin
    assert kept.arc_scores is not None and kept.arc_scores[1] == pytest.approx(1 / 3)


def test_a_clear_lead_takes_the_new_arc() -> None:
    new = keep_previous([A, B, C], [1.0, 1.0, 1.0], A, PREVIOUS.heads, PREVIOUS.deprels, margin=0.2)
    assert new.heads.tolist() == A.heads.tolist() and new.deprels == A.deprels


def test_nothing_kept_returns_the_new_parse_itself() -> None:
    assert keep_previous([A, B], [1.0, 1.0], A, PREVIOUS.heads, PREVIOUS.deprels, margin=0.5) is A
    assert keep_previous([A, B, C], [1.0, 1.0, 1.0], A, [-1, 0], ["", "root"]) is A  # another sentence


def test_the_result_is_always_a_single_rooted_tree() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 9))
        members = [parse(rng.integers(0, n + 1, size=n).tolist(), ["dep"] * n) for _ in range(3)]
        new = parse([0] + [1] * (n - 1), ["root"] + ["dep"] * (n - 1))
        previous = rng.integers(0, n + 1, size=n).tolist()  # not even a tree
        kept = keep_previous(members, [1.0, 2.0, 1.0], new, [-1, *previous], ["", *["x"] * n], margin=1.0)
        assert is_tree(kept.heads) and int((kept.heads[1:] == 0).sum()) == 1
        for d in range(1, n + 1):  # where the previous arcs form a tree with one root, they all stay
            if is_tree(np.array([-1, *previous])) and previous.count(0) == 1:
                assert kept.heads[d] == previous[d - 1]


def test_label_share_counts_only_members_with_that_head() -> None:
    assert label_share([A, B, C], [1.0, 1.0, 2.0], 1, 2, "nsubj") == 1.0
    assert label_share([A, B, C], [1.0, 1.0, 2.0], 1, 1, "nsubj") == 0.0


def test_the_previous_rounds_members_keep_their_share_of_the_vote() -> None:
    # this round: A, B for head 2 (2 of 3); the previous round's three members all chose head 3
    voters, vote = with_previous_votes([A, B, C], [1.0, 1.0, 1.0], [C, C, C], [1.0, 1.0, 1.0], 0.4)
    assert len(voters) == 6 and vote.shape == (6, 4)
    assert vote[:, 1].sum() == pytest.approx(1.0) and vote[3:, 1].sum() == pytest.approx(0.4)
    share_new = 0.6 * 2 / 3  # A's head for word 1 now holds 0.4 of the vote, C's 0.2 + 0.4
    kept = keep_previous(voters, vote, A, PREVIOUS.heads, PREVIOUS.deprels, margin=0.0)
    assert share_new < 0.6 and kept.heads.tolist() == [-1, 3, 0, 2]
    alone, weights = with_previous_votes([A, B, C], [1.0, 1.0, 1.0], [], [], 0.4)
    assert len(alone) == 3 and weights[:, 1].sum() == pytest.approx(3.0)
