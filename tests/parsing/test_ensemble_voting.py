"""Arc voting + MST reparsing, weighting schemes, and the shared Ensemble base."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from parsing.decoders.first_order import is_projective, is_tree
from parsing.ensemble.base import member_accuracy, reparse, scheme_weights, vote_labels
from parsing.ensemble.voting import ArcVoting, combine_votes, vote_matrix, vote_share
from parsing.types import Parse, Sentence
from tests.parsing.fakes import FIT_LOG, FixedParser, RuleParser


def parse(heads: list[int], labels: list[str] | None = None) -> Parse:
    return Parse(np.array([-1, *heads], dtype=np.intp), ["", *(labels or ["dep"] * len(heads))])


def sentences(count: int, n: int = 4) -> list[Sentence]:
    rng = np.random.default_rng(7)
    result = []
    for i in range(count):
        heads = [0] + [int(rng.integers(1, d)) for d in range(2, n + 1)]  # a random tree
        result.append(Sentence.from_words([f"w{j}" for j in range(n)], heads=heads,
                                          deprels=["dep"] * n, sent_id=f"s{i}"))
    return result


def test_majority_wins() -> None:
    a, b = parse([2, 0, 2]), parse([0, 1, 2])
    assert combine_votes([a, a, b], [1.0, 1.0, 1.0]).heads.tolist() == [-1, 2, 0, 2]
    assert combine_votes([b, a, b], [1.0, 1.0, 1.0]).heads.tolist() == [-1, 0, 1, 2]


def test_weights_tip_a_tie() -> None:
    a, b = parse([2, 0, 2]), parse([0, 1, 2])
    assert combine_votes([a, b], [1.0, 2.0]).heads.tolist() == [-1, 0, 1, 2]
    assert combine_votes([a, b], [2.0, 1.0]).heads.tolist() == [-1, 2, 0, 2]
    # equal weights: the deterministic tie-break favours the earlier member
    assert combine_votes([a, b], [1.0, 1.0]).heads.tolist() == [-1, 2, 0, 2]
    assert combine_votes([b, a], [1.0, 1.0]).heads.tolist() == [-1, 0, 1, 2]


def test_vote_matrix_counts_proposed_arcs_only() -> None:
    votes = vote_matrix([[-1, 2, 0], [-1, 2, 0], [-1, 0, 1]], [1.0, 2.0, 4.0])
    assert votes[1, 2] == pytest.approx(3.0, abs=1e-5) and votes[1, 0] == pytest.approx(4.0, abs=1e-5)
    assert np.isneginf(votes[0]).all() and np.isneginf(np.diag(votes)).all()
    assert votes[2, 1] == pytest.approx(4.0, abs=1e-5)
    assert votes[2, 0] == pytest.approx(3.0, abs=1e-5)
    assert np.isneginf(vote_matrix([[-1, 0, 1]], [1.0])[1, 2])


@pytest.mark.parametrize("projective", [False, True])
@pytest.mark.parametrize("single_root", [False, True])
def test_output_is_always_a_tree(projective: bool, single_root: bool) -> None:
    rng = np.random.default_rng(0)
    for _ in range(150):
        n = int(rng.integers(1, 9))
        members = [parse(rng.integers(0, n + 1, size=n).tolist()) for _ in range(int(rng.integers(1, 5)))]
        weights = rng.random(len(members))
        result = combine_votes(members, weights, projective=projective, single_root=single_root)
        assert is_tree(result.heads)
        if single_root:
            assert int((result.heads[1:] == 0).sum()) == 1
        if projective:
            assert is_projective(result.heads)
        assert len(result.deprels) == n + 1 and result.arc_scores is not None


def test_proposed_arcs_are_preferred_when_a_tree_of_them_exists() -> None:
    # a tree made only of proposed arcs exists, so no unproposed arc may be used
    a, b = parse([0, 3, 1]), parse([3, 1, 0])
    heads = combine_votes([a, b], [1.0, 1.0]).heads
    proposed = {(d, h) for p in (a, b) for d, h in enumerate(p.heads.tolist()) if d}
    assert all((d, h) in proposed for d, h in enumerate(heads.tolist()) if d)


def test_reparse_uses_unproposed_arcs_only_when_forced() -> None:
    votes = np.full((3, 3), -np.inf)
    votes[1, 0] = votes[2, 0] = 5.0
    assert reparse(votes, single_root=False).tolist() == [-1, 0, 0]
    assert is_tree(reparse(votes, single_root=True))


def test_label_vote_among_members_that_chose_the_winning_head() -> None:
    a = parse([2, 0], ["nsubj", "root"])
    b = parse([2, 0], ["obj", "root"])
    c = parse([0, 1], ["root", "amod"])
    result = combine_votes([a, b, c], [1.0, 1.5, 2.0])
    assert result.heads.tolist() == [-1, 2, 0]
    assert result.deprels == ["", "obj", "root"]  # c is heaviest but did not choose head 2
    # no member chose the winning head: everyone votes
    assert vote_labels([-1, 0, 0], [a, b], [1.0, 3.0]) == ["", "obj", "root"]


def test_vote_share_of_the_chosen_arc() -> None:
    a, b = parse([2, 0]), parse([0, 1])
    result = combine_votes([a, a, b], [1.0, 1.0, 2.0])
    share = vote_share([p.heads for p in (a, a, b)], [1.0, 1.0, 2.0], result.heads)
    np.testing.assert_allclose(result.arc_scores, share)
    assert share[1:].tolist() == [0.5, 0.5]


def test_green_weighting_schemes() -> None:
    acc = [0.92, 0.86, 0.88, 0.75, 0.90]  # Green's English order: rank votes 5, 2, 3, 1, 4
    assert scheme_weights(acc, "uniform").tolist() == [1.0] * 5
    assert scheme_weights(acc, "accuracy").tolist() == acc
    assert scheme_weights(acc, "rank").tolist() == [5.0, 2.0, 3.0, 1.0, 4.0]
    np.testing.assert_allclose(scheme_weights(acc, "power", exponent=10), np.array(acc) ** 10)
    np.testing.assert_allclose(scheme_weights(acc, "power", exponent=2), np.array(acc) ** 2)
    with pytest.raises(ValueError, match="unknown weighting"):
        scheme_weights(acc, "plural")


def test_member_accuracy_and_learned_weights() -> None:
    gold = sentences(20)
    members = [RuleParser("gold"), RuleParser("gold", noise=0.5), RuleParser("left")]
    parses = [m.predict(gold) for m in members]
    acc = member_accuracy(gold, parses)
    assert acc[0] == 1.0 and acc[0] > acc[1]
    for scheme in ("accuracy", "power", "rank"):
        ensemble = ArcVoting.from_fitted(members, gold, weighting=scheme, exponent=3.0)
        np.testing.assert_allclose(ensemble.accuracies_, acc)
        np.testing.assert_allclose(ensemble.weights_, scheme_weights(acc, scheme, exponent=3.0))
    explicit = ArcVoting.from_fitted(members, weights=[0.0, 0.0, 1.0])
    assert explicit.accuracies_ is None and explicit.weights_.tolist() == [0.0, 0.0, 1.0]
    assert explicit.predict(gold[:1])[0].heads.tolist() == [-1, 0, 1, 2, 3]
    with pytest.raises(ValueError, match="tuning"):
        ArcVoting.from_fitted(members, weighting="rank")


def test_fit_clones_members_and_tunes_on_dev() -> None:
    FIT_LOG.clear()
    member = RuleParser("gold", tag="m0")
    train, dev = sentences(6), sentences(3)
    ensemble = ArcVoting([member, RuleParser("left", tag="m1")], weighting="accuracy").fit(train, dev)
    assert not hasattr(member, "n_fit_sentences_")  # the caller's instance is untouched
    assert ensemble.members_[0] is not member and ensemble.members_[0].n_fit_sentences_ == 6
    assert len(FIT_LOG["m0"]) == 1  # dev given: no jackknife
    assert ensemble.accuracies_ is not None and ensemble.accuracies_[0] == 1.0
    copy = clone(ensemble)
    assert copy.get_params()["weighting"] == "accuracy" and not hasattr(copy, "weights_")


def test_fit_without_dev_tunes_on_held_out_folds() -> None:
    FIT_LOG.clear()
    train = sentences(8)
    ensemble = ArcVoting([RuleParser("gold", tag="m0"), FixedParser(
        {s.sent_id or "": [0] * 4 for s in train}, tag="m1")], weighting="rank", tuning_folds=2)
    ensemble.fit(train)
    full, *folds = FIT_LOG["m0"]
    assert len(full) == 8 and len(folds) == 2
    assert sorted(folds[0] + folds[1]) == sorted(full) and not set(folds[0]) & set(folds[1])
    assert ensemble.weights_.tolist() == [2.0, 1.0]


def test_predict_equals_combine_all_over_member_parses() -> None:
    gold = sentences(5)
    members = [RuleParser("gold", noise=0.3, random_state=s) for s in range(3)]
    ensemble = ArcVoting.from_fitted(members)
    parses = ensemble.member_predict(gold)
    direct = ensemble.predict(gold)
    cheap = ensemble.combine_all(gold, parses)
    assert [p.heads.tolist() for p in direct] == [p.heads.tolist() for p in cheap]


def test_tuned_weights_let_one_strong_member_outvote_many_correlated_weak_ones() -> None:
    """Predicted tags' failure mode: four weak members repeat the same errors (one parser's
    copies) and outvote a stronger one under one vote each; k chosen on dev LAS fixes it."""
    gold = sentences(30, n=6)
    weak = RuleParser("gold", noise=0.45, random_state=3)
    members = [RuleParser("gold", noise=0.1, random_state=1), weak, weak, weak, weak]
    uniform = ArcVoting.from_fitted(members, gold, weighting="uniform")
    tuned = ArcVoting.from_fitted(members, gold, weighting="tuned")
    assert tuned.exponent_ > 0
    np.testing.assert_allclose(tuned.weights_, scheme_weights(tuned.accuracies_, "power",
                                                              exponent=tuned.exponent_))
    uniform_uas = member_accuracy(gold, [uniform.predict(gold)])[0]
    tuned_uas = member_accuracy(gold, [tuned.predict(gold)])[0]
    strong_uas = member_accuracy(gold, [members[0].predict(gold)])[0]
    assert uniform_uas < strong_uas <= tuned_uas


def test_tuned_weights_keep_one_vote_each_when_that_is_best() -> None:
    gold = sentences(30, n=6)
    members = [RuleParser("gold", noise=0.3, random_state=s) for s in range(5)]  # independent errors
    tuned = ArcVoting.from_fitted(members, gold, weighting="tuned", exponents=(0.0, 100.0))
    votes = ArcVoting.from_fitted(members, gold, weighting="uniform")
    assert member_accuracy(gold, [tuned.predict(gold)])[0] >= member_accuracy(gold, [votes.predict(gold)])[0]
    with pytest.raises(ValueError, match="exponent"):
        ArcVoting.from_fitted(members, gold, weighting="tuned", exponents=())


def labelled_sentences(count: int, n: int = 6) -> list[Sentence]:
    """Random trees whose labels vary (``nsubj``, ``obj``, ``dep``), so labels can be wrong."""
    rng = np.random.default_rng(11)
    result = []
    for i in range(count):
        heads = [0] + [int(rng.integers(1, d)) for d in range(2, n + 1)]
        labels = [str(x) for x in rng.choice(["nsubj", "obj", "dep"], size=n)]
        result.append(Sentence.from_words([f"w{j}" for j in range(n)], heads=heads, deprels=labels,
                                          sent_id=f"s{i}"))
    return result


def las_of(gold: list[Sentence], parses: list[Parse]) -> float:
    from parsing.scorer.metrics import evaluate

    return float(evaluate(gold, parses).las.f1)


def test_tuned_label_weights_hear_the_member_that_labels_best() -> None:
    """Three members attach every word right but label them all ``dep``; one attaches worse
    and labels right: head weights give the labels to the three, label weights to the one."""
    gold = labelled_sentences(30)
    fixed = {s.sent_id or "": s.heads[1:].tolist() for s in gold}
    members = [RuleParser("gold", noise=0.3, random_state=2),
               *(FixedParser(fixed, tag=f"f{i}") for i in range(3))]
    heads_only = ArcVoting.from_fitted(members, gold, weighting="tuned")
    tuned = ArcVoting.from_fitted(members, gold, weighting="tuned", labels="tuned")
    assert heads_only.label_exponent_ is None and heads_only.label_weights_ is heads_only.weights_
    from parsing.ensemble.voting import ensemble_label_weights

    assert ensemble_label_weights(heads_only) is None  # callers vote labels as heads
    assert tuned.label_accuracies_ is not None and tuned.label_accuracies_[0] == 1.0
    assert tuned.label_accuracies_[1:].max() < 0.5 and tuned.label_exponent_ is not None
    np.testing.assert_allclose(tuned.label_weights_, scheme_weights(tuned.label_accuracies_, "power",
                                                                    exponent=tuned.label_exponent_))
    np.testing.assert_allclose(tuned.weights_, heads_only.weights_)  # heads are voted as before
    plain, better = heads_only.predict(gold), tuned.predict(gold)
    assert [p.heads.tolist() for p in plain] == [p.heads.tolist() for p in better]
    assert las_of(gold, better) > las_of(gold, plain) + 0.2


def test_tuned_label_weights_stay_the_head_weights_when_nothing_labels_better() -> None:
    gold = labelled_sentences(20)
    members = [RuleParser("gold", noise=0.3, random_state=s) for s in range(3)]  # same labeller
    tuned = ArcVoting.from_fitted(members, gold, weighting="tuned", labels="tuned")
    assert tuned.label_exponent_ is None
    np.testing.assert_allclose(tuned.label_weights_, tuned.weights_)
    with pytest.raises(ValueError, match="labels must be one of heads, tuned"):
        ArcVoting(members, labels="best")


def test_label_weights_survive_a_model_file_and_older_files_label_as_before(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from parsing.ensemble.registry import load_ensemble, save_ensemble
    from parsing.ensemble.voting import ensemble_label_weights

    gold = labelled_sentences(20)
    fixed = {s.sent_id or "": s.heads[1:].tolist() for s in gold}
    members = [RuleParser("gold", noise=0.3, random_state=2),
               *(FixedParser(fixed, tag=f"f{i}") for i in range(3))]
    names = ["rule", "f0", "f1", "f2"]
    tuned = ArcVoting.from_fitted(members, gold, weighting="tuned", labels="tuned")
    save_ensemble(tuned, names, tmp_path / "vote.model")
    loaded = load_ensemble(tmp_path / "vote.model", dict(zip(names, tuned.members_, strict=True)))
    assert isinstance(loaded, ArcVoting)
    np.testing.assert_allclose(ensemble_label_weights(loaded), tuned.label_weights_)
    assert loaded.labels == "tuned" and loaded.label_exponent_ == tuned.label_exponent_
    assert [p.deprels for p in loaded.predict(gold)] == [p.deprels for p in tuned.predict(gold)]
    del loaded.label_weights_  # a model saved before label weights existed
    assert ensemble_label_weights(loaded) is None
    old = loaded.predict(gold)
    assert [p.deprels for p in old] == [p.deprels for p in
                                        ArcVoting.from_fitted(members, gold, weighting="tuned").predict(gold)]


def test_constrained_votes_label_with_the_label_weights() -> None:
    from parsing.constraints import Constraints
    from parsing.ensemble.constrained import force_combined, vote_forced

    good = parse([2, 0, 2], ["nsubj", "root", "obj"])
    loud = parse([2, 0, 2], ["dep", "root", "dep"])
    members = [good, loud, loud]
    forced = Constraints({1: 2})
    assert vote_forced(members, [1.0, 1.0, 1.0], forced).deprels == ["", "dep", "root", "dep"]
    heard = vote_forced(members, [1.0, 1.0, 1.0], forced, [1.0, 0.1, 0.1])
    assert heard.deprels == ["", "nsubj", "root", "obj"]
    other = parse([0, 1, 2], ["root", "dep", "dep"])  # the ensemble's tree misses the forced arc
    tree = force_combined(other, members, [1.0, 1.0, 1.0], forced, [1.0, 0.1, 0.1])
    assert tree.heads.tolist() == [-1, 2, 0, 2]
    assert tree.deprels == ["", "nsubj", "root", "dep"]  # word 3 kept its arc, and its label
    assert force_combined(other, members, [1.0, 1.0, 1.0], forced).deprels[1] == "dep"
