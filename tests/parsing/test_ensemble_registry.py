"""Methods by name: fitted over already-fitted members, saved without them, loaded back."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

import parsing.ensemble.registry as registry
from parsing.decoders.first_order import is_tree
from parsing.ensemble.registry import (
    DEFAULT_METHOD,
    METHODS,
    combine,
    fit_ensemble,
    load_ensemble,
    method_spec,
    save_ensemble,
)
from parsing.ensemble.stacking import Stacking
from parsing.types import Sentence
from tests.parsing.fakes import FIT_LOG, RuleParser
from tests.parsing.test_ensemble_stacking import random_trees


def fitted_members(train: list[Sentence]) -> dict[str, RuleParser]:
    """Three rule members under real member names: two good graph ones, one weak chain."""
    return {
        "graph1": RuleParser("gold", noise=0.1, random_state=1).fit(train),
        "graph2": RuleParser("gold", noise=0.2, random_state=2).fit(train),
        "eager": RuleParser("left", tag="level0").fit(train),
    }


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_fits_saves_and_loads_to_the_same_trees(method: str, tmp_path: Path) -> None:
    train, dev, test = random_trees(30, 1), random_trees(10, 2), random_trees(8, 3)
    members = fitted_members(train)
    ensemble, names = fit_ensemble(method, members, train, dev,
                                   params={"max_iter": 2, "n_bits": 16, "min_count": 1}
                                   if method == "stack" else None)
    assert names == method_spec(method).uses(list(members))
    parses = {name: parser.predict(test) for name, parser in members.items()}
    before = combine(ensemble, names, test, parses)
    save_ensemble(ensemble, names, tmp_path / "ensemble.model")
    assert ensemble.members_ and not isinstance(ensemble.members[0], str)  # saving left it whole
    loaded = load_ensemble(tmp_path / "ensemble.model", members)
    after = combine(loaded, names, test, parses)
    for one, two in zip(before, after, strict=True):
        assert is_tree(one.heads)
        assert one.heads.tolist() == two.heads.tolist() and one.deprels == two.deprels
    assert (tmp_path / "ensemble.model").stat().st_size < 2_000_000  # the members are not inside


def test_the_better_members_outvote_the_chain() -> None:
    train, dev, test = random_trees(30, 1), random_trees(10, 2), random_trees(10, 3)
    members = fitted_members(train)
    ensemble, names = fit_ensemble("vote-accuracy", members, train, dev)
    combined = combine(ensemble, names, test, {n: p.predict(test) for n, p in members.items()})
    right = sum(int(np.sum(p.heads[1:] == s.heads[1:])) for p, s in zip(combined, test, strict=True))
    assert right / sum(len(s) for s in test) > 0.85


def test_without_dev_the_weights_come_from_held_out_folds() -> None:
    FIT_LOG.clear()
    train = random_trees(20, 4)
    members = fitted_members(train)
    members["eager"] = RuleParser("memorise", tag="spy").fit(train)  # perfect on what it saw
    FIT_LOG.clear()
    ensemble, _ = fit_ensemble("vote-accuracy", members, train, None)
    assert len(FIT_LOG["spy"]) == 2  # two folds, fitted on copies
    assert ensemble.accuracies_[2] < 0.5  # held out, the memoriser is a chain: no inflated weight


def test_stack_jackknifes_its_level0_member_on_train() -> None:
    FIT_LOG.clear()
    train, dev = random_trees(16, 5), random_trees(6, 6)
    members = fitted_members(train)
    FIT_LOG.clear()
    ensemble, names = fit_ensemble("stack", members, train, dev,
                                   params={"max_iter": 2, "n_bits": 16, "min_count": 1})
    assert isinstance(ensemble, Stacking) and names == ["eager"]
    folds = FIT_LOG["level0"]
    assert len(folds) == 2 and not set(folds[0]) & set(folds[1])
    assert sorted(folds[0] + folds[1]) == sorted(s.sent_id for s in train)
    assert ensemble.members_ == [members["eager"]]  # the fitted member itself, not retrained


def test_unknown_method_missing_member_and_bad_params() -> None:
    with pytest.raises(ValueError, match="unknown ensemble method 'best'"):
        method_spec("best")
    with pytest.raises(ValueError, match="combines none"):
        fit_ensemble("score-sum", {"eager": RuleParser("left")}, random_trees(4, 0), None)
    with pytest.raises(ValueError, match="Invalid parameter"):
        fit_ensemble("vote-power", {"graph1": RuleParser()}, random_trees(4, 0), random_trees(2, 1),
                     params={"nope": 1})


def test_loading_needs_the_members_it_combines(tmp_path: Path) -> None:
    train = random_trees(10, 7)
    members = fitted_members(train)
    ensemble, names = fit_ensemble("vote-uniform", members, train, None)
    save_ensemble(ensemble, names, tmp_path / "e.model")
    with pytest.raises(ValueError, match="combines graph2, eager"):
        load_ensemble(tmp_path / "e.model", {"graph1": members["graph1"]})


def test_default_method_is_registered() -> None:
    assert DEFAULT_METHOD in METHODS


def test_docstring_examples() -> None:
    assert doctest.testmod(registry).failed == 0


def test_the_default_method_is_chosen_per_tag_mode() -> None:
    from parsing.ensemble.registry import DEFAULT_METHODS, default_method

    assert set(DEFAULT_METHODS) == {"gold", "predicted"}
    assert all(default_method(tags) in METHODS for tags in DEFAULT_METHODS)
    with pytest.raises(ValueError, match="tags"):
        default_method("silver")
