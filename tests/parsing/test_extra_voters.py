"""Extra voters (an uploaded parse, a plugin) joining a voting ensemble, abstaining where they have
no tree (issue #16)."""

from __future__ import annotations

import numpy as np
import pytest

from parsing.ensemble.extra_voters import combine_with_voters, extra_voter_weight, member_vote_weights, voters
from parsing.ensemble.fuzzy import FuzzyPosVoting
from parsing.ensemble.registry import METHODS, fit_ensemble
from parsing.ensemble.voting import ArcVoting, combine_votes
from parsing.types import Parse, Sentence
from tests.parsing.fakes import FixedParser


def parse(heads: list[int], labels: list[str] | None = None) -> Parse:
    return Parse(np.array([-1, *heads], dtype=np.intp), ["", *(labels or ["dep"] * len(heads))])


LEFT = parse([0, 1, 2], ["root", "obj", "obj"])    # a chain to the right of word 1
RIGHT = parse([2, 3, 0], ["nsubj", "nsubj", "root"])  # a chain ending in word 3


def test_abstaining_voter_leaves_the_members_vote() -> None:
    members = [LEFT, LEFT, RIGHT]
    alone = combine_votes(members, [1.0, 1.0, 1.0])
    with_abstainer = combine_with_voters(members, [1.0, 1.0, 1.0], [None, None], [5.0, None])
    assert with_abstainer.heads.tolist() == alone.heads.tolist() == LEFT.heads.tolist()
    assert with_abstainer.deprels == alone.deprels
    np.testing.assert_allclose(with_abstainer.arc_scores[1:], alone.arc_scores[1:])


def test_a_present_voter_with_enough_weight_changes_the_tree() -> None:
    members = [LEFT, LEFT, RIGHT]
    assert combine_with_voters(members, [1.0] * 3, [RIGHT], [0.5]).heads.tolist() == LEFT.heads.tolist()
    changed = combine_with_voters(members, [1.0] * 3, [RIGHT], [1.5])
    assert changed.heads.tolist() == RIGHT.heads.tolist()
    assert changed.deprels[1:] == ["nsubj", "nsubj", "root"]
    # its share of the vote: (1 member + 1.5) of 4.5
    assert changed.arc_scores[1] == pytest.approx(2.5 / 4.5)


def test_average_member_weight_follows_per_word_weights() -> None:
    per_word = np.array([[0.0, 1.0, 3.0, 1.0], [0.0, 3.0, 1.0, 1.0]])  # (M, n+1)
    kept, matrix = voters([LEFT, RIGHT], per_word, [RIGHT, None], [None, 2.0])
    assert len(kept) == 3  # the second extra voter abstains
    np.testing.assert_allclose(matrix[2], per_word.mean(axis=0))


def test_bad_extra_voters_are_refused() -> None:
    with pytest.raises(ValueError, match="2 extra parses for 1 weights"):
        voters([LEFT], [1.0], [LEFT, None], [1.0])
    with pytest.raises(ValueError, match="2 words, the members' 3"):
        voters([LEFT], [1.0], [parse([0, 1])], [1.0])
    with pytest.raises(ValueError, match="non-negative"):
        voters([LEFT], [1.0], [LEFT], [-1.0])


def test_weights_follow_the_ensembles_scheme() -> None:
    assert extra_voter_weight("uniform", 0.2) == 1.0
    assert extra_voter_weight("accuracy", 0.8) == 0.8
    assert extra_voter_weight("power", 0.9) == pytest.approx(0.9**10)
    assert extra_voter_weight("rank", 0.99, [0.5, 0.6]) == 3.0
    assert extra_voter_weight("rank", 0.1, [0.5, 0.6]) == 1.0
    assert extra_voter_weight("accuracy", None) is None  # no dev: an average member's weight


def test_member_vote_weights_of_fitted_voting_ensembles() -> None:
    sentence = Sentence.from_words(["a", "b", "c"], upos=["NOUN", "VERB", "NOUN"], heads=[0, 1, 2],
                                   deprels=["root", "obj", "obj"], sent_id="s")
    right, wrong = FixedParser({"s": [0, 1, 2]}), FixedParser({"s": [2, 3, 0]})
    voting = ArcVoting([right, wrong], weights=[2.0, 1.0])
    voting.members_ = [right, wrong]
    voting.fit_combiner([], [[], []])
    assert member_vote_weights(voting, sentence).tolist() == [2.0, 1.0]
    fuzzy, _ = fit_ensemble("fuzzy-pos", {"a": right, "b": wrong}, [sentence] * 4, [sentence] * 4)
    assert isinstance(fuzzy, FuzzyPosVoting)
    per_word = member_vote_weights(fuzzy, sentence)
    assert per_word.shape == (2, 4)
    assert per_word[0, 1] > per_word[1, 1]  # the member right on every NOUN weighs more there
    with pytest.raises(ValueError, match="does not vote"):
        member_vote_weights(object(), sentence)


def test_only_voting_methods_take_extra_voters() -> None:
    voting = {name for name, spec in METHODS.items() if spec.votes}
    assert voting == {"vote-uniform", "vote-accuracy", "vote-power", "vote-tuned", "vote-tuned-labels",
                      "vote-rank", "fuzzy-pos"}
