"""The training plan (:mod:`parsing.plan`): what it accepts and refuses, its JSON round trip, and
that the pipeline, the command line and the simulation read the same plan."""

from __future__ import annotations

import argparse
import doctest
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import parsing.plan as plan_module
from parsing.cli import build_parser, main
from parsing.commands.parsers import train_plan_of
from parsing.conllu_io import load_sentences
from parsing.member_fit import in_order
from parsing.members import member_names
from parsing.pipeline import load_models, read_manifest, train_models, train_plan
from parsing.plan import PLAN_FORMAT, TrainingPlan
from parsing.semi.simulate import SimulationConfig
from parsing.types import Sentence

CHEAP = {"graph1": {"max_iter": 1, "n_bits": 16}, "eager": {"epochs": 1, "n_bits": 16}}


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> list[Sentence]:
    return load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:40]


def test_doctests() -> None:
    assert doctest.testmod(plan_module).failed == 0


def test_from_options_keeps_what_the_round_trains_and_drops_what_it_ignores() -> None:
    plan = TrainingPlan.from_options(
        names=["graph1", "eager"], tags="gold",
        params={**CHEAP, "hybrid": {"epochs": 3}, "tagger": {"max_iter": 2}, "ensemble": {"max_iter": 3}},
        ensemble=None, ensemble_params={"max_iter": 4})
    assert plan.members == ("graph1", "eager")
    assert dict(plan.settings) == CHEAP  # hybrid is not trained; "ensemble" is no member
    assert plan.tagger_settings == {} and plan.ensemble is None and plan.ensemble_settings == {}
    assert not plan.warm and plan.warm_from is None and plan.seed == 0 and plan.jobs == 1
    predicted = TrainingPlan.from_options(names=["graph1"], tags="predicted",
                                          params={"tagger": {"max_iter": 2}}, ensemble="stack",
                                          ensemble_params={"max_iter": 3}, random_state=7,
                                          warm_from=Path("/models/1"))
    assert predicted.tagger_settings == {"max_iter": 2} and predicted.ensemble_settings == {"max_iter": 3}
    assert predicted.seed == 7 and predicted.warm and predicted.warm_from == "/models/1"
    assert TrainingPlan.from_options().members == tuple(member_names())


def test_member_params_add_the_tag_mode_and_the_plans_settings_win() -> None:
    gold = TrainingPlan(members=("biaffine", "graph1"), tags="gold", settings={"graph1": {"max_iter": 2}})
    assert gold.member_params("biaffine") == {"tag_inputs": True}
    assert gold.member_params("graph1") == {"max_iter": 2}
    predicted = TrainingPlan(members=("biaffine",), tags="predicted")
    assert predicted.member_params("biaffine") == {"tag_inputs": False}
    forced = TrainingPlan(members=("biaffine",), tags="predicted",
                          settings={"biaffine": {"tag_inputs": True}})
    assert forced.member_params("biaffine") == {"tag_inputs": True}
    with pytest.raises(ValueError, match="eager is not a member of this plan"):
        gold.member_params("eager")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"members": ()}, "at least one member"),
    ({"members": "graph1"}, "not one string"),
    ({"members": ("graph1", "nope")}, "unknown parser.*nope"),
    ({"members": ("graph1", "graph1")}, "graph1 named more than once"),
    ({"tags": "silver"}, "tags must be gold or predicted, not 'silver'"),
    ({"settings": {"eager": {"epochs": 1}}}, "settings for eager, which the plan does not train"),
    ({"settings": {"graph1": {"epochs": 1}}},
     "member graph1 has no setting 'epochs'; its settings: .*max_iter"),
    ({"settings": {"graph1": 3}}, "settings of member graph1 must be a mapping"),
    ({"tagger_settings": {"max_iter": 2}}, "tagger settings apply with predicted tags only"),
    ({"tags": "predicted", "tagger_settings": {"max_iters": 2}}, "the tagger has no setting 'max_iters'"),
    ({"ensemble": "vote-nothing"}, "vote-nothing"),
    ({"ensemble": "stack", "ensemble_settings": {"max_iters": 2}}, "ensemble stack: .*max_iters"),
    ({"ensemble_settings": {"max_iter": 2}}, "ensemble settings without an ensemble method"),
    ({"seed": True}, "seed must be an integer"),
    ({"jobs": 0}, "jobs must be at least 1"),
    ({"warm": "yes"}, "warm must be true or false"),
    ({"warm_from": "/models/1"}, "set warm too"),
])
def test_a_plan_that_does_not_hold_is_refused_saying_what_and_why(kwargs: dict[str, Any],
                                                                   message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainingPlan(**{"members": ("graph1",), **kwargs})


def test_tagger_settings_that_are_no_tagger_argument_but_read_by_training_are_accepted() -> None:
    plan = TrainingPlan(members=("graph1",), tags="predicted", tagger_settings={"jackknife_seeds": 2})
    assert plan.tagger_settings == {"jackknife_seeds": 2}


def test_json_round_trip_keeps_everything_but_the_runners() -> None:
    plan = TrainingPlan(members=("graph1", "eager"), tags="predicted", settings=CHEAP,
                        tagger_settings={"max_iter": 2, "jackknife_seeds": 2}, ensemble="stack",
                        ensemble_settings={"max_iter": 3}, seed=5, warm=True, warm_from="/models/3", jobs=2,
                        member_runner=in_order)
    data = plan.to_json()
    assert data["format"] == PLAN_FORMAT and "member_runner" not in data and "fold_runner" not in data
    again = TrainingPlan.from_json(json.loads(json.dumps(data)))
    assert again == plan and again.member_runner is None
    assert again.to_json() == data
    assert TrainingPlan.from_json(data, member_runner=in_order).runners()[0] is in_order


def test_json_that_is_no_plan_is_refused() -> None:
    good = TrainingPlan(members=("graph1",)).to_json()
    for data, message in [([], "not a training plan"), ({"tags": "gold"}, "not a training plan"),
                          ({**good, "format": 99}, "format 99"),
                          ({**good, "member": "x"}, "unknown key.*member"),
                          ({**good, "members": "graph1"}, "members must be a list"),
                          ({**good, "settings": {"graph1": {"epochs": 1}}}, "no setting 'epochs'")]:
        with pytest.raises(ValueError, match=message):
            TrainingPlan.from_json(data)  # type: ignore[arg-type]


def test_settings_that_are_not_json_data_are_kept_but_not_saved() -> None:
    plan = TrainingPlan(members=("graph1",), settings={"graph1": {"clusters": object()}})
    assert not plan.json_ready()
    with pytest.raises(ValueError, match=r"setting graph1\.clusters \(object\) cannot be saved as JSON"):
        plan.to_json()


def test_runners_are_the_plans_else_local_processes_for_several_jobs() -> None:
    assert TrainingPlan(members=("graph1",)).runners() == (None, None)
    member, fold = TrainingPlan(members=("graph1",), jobs=2).runners()
    assert callable(member) and callable(fold)
    assert TrainingPlan(members=("graph1",), jobs=2, member_runner=in_order).runners()[0] is in_order
    assert TrainingPlan(members=("graph1",)).with_runners(member_runner=in_order).member_runner is in_order


def test_the_pipeline_trains_the_same_members_from_the_plan_and_records_it(
        wolof: list[Sentence], tmp_path: Path) -> None:
    train, dev = wolof[:30], wolof[30:]
    train_models(train, None, tmp_path / "options", names=["graph1", "eager"], params=CHEAP,
                 ensemble="vote-uniform", random_state=3)
    plan = TrainingPlan(members=("graph1", "eager"), settings=CHEAP, ensemble="vote-uniform", seed=3)
    train_plan(plan, train, None, tmp_path / "plan")
    first, second = load_models(tmp_path / "options"), load_models(tmp_path / "plan")
    one, two = first.parse_with_ensemble(dev), second.parse_with_ensemble(dev)
    for name in ("graph1", "eager"):
        assert all(np.array_equal(a.heads, b.heads) and a.deprels == b.deprels
                   for a, b in zip(one[0][name], two[0][name], strict=True))
    assert all(np.array_equal(a.heads, b.heads) for a, b in zip(one[1], two[1], strict=True))
    recorded = read_manifest(tmp_path / "plan")["plan"]
    assert TrainingPlan.from_json(recorded) == plan
    assert read_manifest(tmp_path / "options")["plan"] == recorded


def test_the_pipeline_refuses_extra_trees_for_a_member_it_does_not_train(
        wolof: list[Sentence], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="extra training trees for neural"):
        train_plan(TrainingPlan(members=("graph1",)), wolof[:5], None, tmp_path, extra_train={"neural": []})


def _train_args(*extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["train", "--train", "t.conllu", "--out", "m", *extra])


def test_the_train_command_builds_its_plan_from_its_options() -> None:
    plan = train_plan_of(_train_args("--parsers", "graph1,eager", "--tags", "gold", "--seed", "4",
                                     "--jobs", "2", "--set", "eager.epochs=2", "--set", "ensemble.max_iter=3",
                                     "--ensemble", "stack"))
    assert plan == TrainingPlan(members=("graph1", "eager"), tags="gold", settings={"eager": {"epochs": 2}},
                                ensemble="stack", ensemble_settings={"max_iter": 3}, seed=4, jobs=2)
    assert train_plan_of(_train_args("--parsers", "graph1", "--ensemble", "none")).ensemble is None
    default = train_plan_of(_train_args("--parsers", "graph1"))
    assert default.tags == "predicted" and default.ensemble is not None


def test_the_train_command_trains_a_saved_plan_and_refuses_mixing_it_with_options(tmp_path: Path) -> None:
    plan = TrainingPlan(members=("graph1", "eager"), tags="gold", settings=CHEAP, ensemble="stack", seed=2)
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(plan.to_json()), encoding="utf-8")
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"tags": "gold", "parsers": ["graph1"], "plan": plan.to_json()}),
                        encoding="utf-8")
    assert train_plan_of(_train_args("--plan", str(saved), "--jobs", "2")) == replace(plan, jobs=2)
    assert train_plan_of(_train_args("--plan", str(manifest))) == plan
    for extra in (["--parsers", "graph1"], ["--seed", "0"], ["--tags", "gold"], ["--set", "eager.epochs=1"]):
        with pytest.raises(ValueError, match=f"--plan says what to train: leave out {extra[0]}"):
            train_plan_of(_train_args("--plan", str(saved), *extra))
    (tmp_path / "bad.json").write_text('{"tags": "gold"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: not a training plan"):
        train_plan_of(_train_args("--plan", str(tmp_path / "bad.json")))
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: not JSON"):
        train_plan_of(_train_args("--plan", str(tmp_path / "broken.json")))


def test_the_train_command_refuses_a_bad_setting_before_reading_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["train", "--train", str(tmp_path / "missing.conllu"), "--out", str(tmp_path / "m"),
                   "--parsers", "graph1", "--set", "graph1.epochs=2"])
    assert status == 2
    assert "member graph1 has no setting 'epochs'" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_the_simulation_builds_one_plan_and_checks_it_up_front() -> None:
    config = SimulationConfig(seed_trees=2, per_round=1, rounds=1, parsers=("graph1", "eager"),
                              ensemble="stack",
                              member_params={"eager": {"epochs": 1}, "ensemble": {"max_iter": 2}},
                              seed=3, warm=True)
    assert config.plan() == TrainingPlan(members=("graph1", "eager"), tags="gold",
                                         settings={"eager": {"epochs": 1}}, ensemble="stack",
                                         ensemble_settings={"max_iter": 2}, seed=3, warm=True)
    with pytest.raises(ValueError, match="member eager has no setting 'epoch'"):
        SimulationConfig(seed_trees=2, per_round=1, rounds=1, parsers=("graph1", "eager"),
                         member_params={"eager": {"epoch": 1}})
