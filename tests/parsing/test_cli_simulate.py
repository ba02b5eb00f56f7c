"""``python -m parsing simulate`` end to end on a tiny real sample (issue #11's contract)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.cli import main
from parsing.conllu_io import format_conllu, load_sentences, read_conllu
from parsing.graph.first_order import FirstOrderParser
from parsing.members import MEMBERS, MemberSpec
from parsing.semi.simulate import SimulationConfig, run_simulation

CHEAP = ["--parsers", "graph1,eager", "--member-params", "graph1.max_iter=1",
         "--member-params", "graph1.n_bits=16", "--member-params", "eager.epochs=1",
         "--member-params", "eager.n_bits=16"]
ROUND_KEYS = {"round", "annotated_sentences", "annotated_tokens", "dev_uas", "dev_las", "members", "train_s"}


@pytest.fixture(scope="module")
def sample(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Telugu: 30 training sentences, 15 dev sentences."""
    folder = tmp_path_factory.mktemp("telugu-sim")
    source = ud_root / "UD_Telugu-MTG"
    paths = {"train": folder / "train.conllu", "dev": folder / "dev.conllu"}
    paths["train"].write_text(format_conllu(read_conllu(source / "te_mtg-ud-train.conllu")[:30]), "utf-8")
    paths["dev"].write_text(format_conllu(read_conllu(source / "te_mtg-ud-dev.conllu")[:15]), "utf-8")
    return paths


def _simulate(sample: dict[str, Path], out: Path, *extra: str) -> dict[str, Any]:
    status = main(["simulate", "--train", str(sample["train"]), "--dev", str(sample["dev"]),
                   "--seed-trees", "10", "--per-round", "5", "--rounds", "2", "--out", str(out),
                   *CHEAP, *extra])
    assert status == 0
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def test_result_follows_the_contract(sample: dict[str, Path], tmp_path: Path) -> None:
    plot = tmp_path / "curve.svg"
    result = _simulate(sample, tmp_path / "result.json", "--strategy", "disagreement", "--seed", "3",
                       "--plot", str(plot))
    config = result["config"]
    assert config["strategy"] == "disagreement" and config["seed"] == 3
    assert config["seed_trees"] == 10 and config["per_round"] == 5 and config["rounds"] == 2
    assert config["self_training"] == "none" and config["parsers"] == ["graph1", "eager"]
    assert config["member_params"]["eager"] == {"epochs": 1, "n_bits": 16}
    rounds = result["rounds"]
    assert [r["round"] for r in rounds] == [0, 1, 2]
    train = load_sentences(sample["train"])
    lengths = {s.sent_id: len(s) for s in train}
    seen = set(rounds[0]["selected_ids"])
    assert len(seen) == 10
    for before, after in zip(rounds, rounds[1:], strict=False):
        assert after["annotated_sentences"] == before["annotated_sentences"] + 5
        assert len(after["selected_ids"]) == 5 and not seen & set(after["selected_ids"])
        seen |= set(after["selected_ids"])
        grown = sum(lengths[i] for i in after["selected_ids"])
        assert after["annotated_tokens"] == before["annotated_tokens"] + grown
    for r in rounds:
        assert ROUND_KEYS <= set(r)
        assert set(r["members"]) == {"graph1", "eager"}
        assert 0 <= r["dev_las"] <= r["dev_uas"] <= 100
        assert all(0 <= m["las"] <= m["uas"] <= 100 for m in r["members"].values())
        assert r["train_s"] > 0
    assert rounds[0]["annotated_sentences"] == 10 and rounds[-1]["pool_sentences"] == 10
    svg = ET.fromstring(plot.read_text(encoding="utf-8"))
    assert len(list(svg.iter("{http://www.w3.org/2000/svg}polyline"))) == 3  # ensemble + 2 members


def test_longest_strategy_reveals_the_longest_pool_sentences(sample: dict[str, Path], tmp_path: Path) -> None:
    result = _simulate(sample, tmp_path / "r.json", "--strategy", "longest", "--rounds", "1")
    train = load_sentences(sample["train"])
    seed, chosen = (set(r["selected_ids"]) for r in result["rounds"])
    assert len(seed) == 10 and len(chosen) == 5 and not seed & chosen
    revealed = [len(s) for s in train if s.sent_id in chosen]
    pool = [len(s) for s in train if s.sent_id not in chosen | seed]
    assert len(pool) == 15 and max(pool) <= min(revealed)


@pytest.mark.parametrize("source", ["own", "ensemble"])
def test_self_training_adds_automatic_trees(sample: dict[str, Path], tmp_path: Path, source: str) -> None:
    result = _simulate(sample, tmp_path / "r.json", "--strategy", "random", "--self-training", source,
                       "--select", "random", "--max-share", "0.5")
    rounds = result["rounds"]
    assert rounds[0]["automatic_sentences"] == {"graph1": 0, "eager": 0}
    for r in rounds[1:]:
        bound = min(int(0.5 * r["annotated_sentences"]), r["pool_sentences"])
        assert 0 < r["automatic_sentences"]["graph1"] <= bound
        assert r["automatic_sentences"]["graph1"] == r["automatic_sentences"]["eager"]
    assert result["config"]["self_training"] == source


class _ColdGraph(FirstOrderParser):
    """graph1 without a ``warm_start`` hyperparameter: a member that cannot continue."""

    def __init__(self, *, max_iter: int = 10, n_bits: int = 22, random_state: int | None = 0) -> None:
        super().__init__(max_iter=max_iter, n_bits=n_bits, random_state=random_state)


def test_warm_rounds_continue_members_that_allow_it(sample: dict[str, Path], monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    monkeypatch.setitem(MEMBERS, "graph1", MemberSpec("graph1", __name__, "_ColdGraph", "cold graph1"))
    train, dev = load_sentences(sample["train"]), load_sentences(sample["dev"])
    settings: dict[str, Any] = {
        "seed_trees": 10, "per_round": 5, "rounds": 2, "parsers": ("graph1", "eager"),
        "member_params": {"graph1": {"max_iter": 1, "n_bits": 16}, "eager": {"epochs": 1, "n_bits": 16}},
    }
    warm = run_simulation(train, dev, SimulationConfig(warm=True, **settings))
    assert [r["warm_members"] for r in warm["rounds"]] == [[], ["eager"], ["eager"]]
    cold = run_simulation(train, dev, SimulationConfig(warm=False, **settings))
    assert [r["warm_members"] for r in cold["rounds"]] == [[], [], []]
    assert [r["annotated_sentences"] for r in warm["rounds"]] == [10, 15, 20]


def test_bad_input_exits_with_a_message(sample: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--train", str(sample["train"]), "--dev", str(sample["dev"]), "--per-round", "5",
            "--rounds", "1", "--strategy", "random", "--out", str(tmp_path / "r.json")]
    assert main([*base, "--seed-trees", "31"]) == 2
    assert "seed_trees=31 but the training file has 30 sentences" in capsys.readouterr().err
    assert main([*base, "--seed-trees", "5", "--member-params", "neural.max_epochs=1"]) == 2
    assert "neural, which is not simulated" in capsys.readouterr().err
    assert main([*base, "--seed-trees", "5", "--member-params", "eager-epochs"]) == 2
    assert "--member-params 'eager-epochs': expected MEMBER.PARAM=VALUE" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    with pytest.raises(SystemExit):
        main([*base, "--seed-trees", "0"])
    with pytest.raises(ValueError, match="rounds"):
        SimulationConfig(seed_trees=1, per_round=1, rounds=-1)


def test_partial_annotation_counts_only_the_touched_words(sample: dict[str, Path], tmp_path: Path) -> None:
    whole = _simulate(sample, tmp_path / "whole.json", "--strategy", "expected-errors", "--rounds", "1")
    partial = _simulate(sample, tmp_path / "partial.json", "--strategy", "expected-errors", "--rounds", "1",
                        "--partial", "0.8")
    assert partial["config"]["partial"] == 0.8
    seed_whole, seed_partial = whole["rounds"][0], partial["rounds"][0]
    assert seed_partial["annotated_tokens"] == seed_whole["annotated_tokens"]  # seed trees count whole
    after = partial["rounds"][1]
    assert after["selected_ids"] == whole["rounds"][1]["selected_ids"]  # the same sentences, fewer words
    assert after["annotated_words"] == whole["rounds"][1]["annotated_tokens"]
    assert seed_partial["annotated_tokens"] <= after["annotated_tokens"] < after["annotated_words"]


def test_interactive_partial_annotation_reparses_with_the_rounds_members(sample: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    static = _simulate(sample, tmp_path / "static.json", "--strategy", "expected-errors", "--rounds", "1",
                       "--partial", "0.8")
    interactive = _simulate(sample, tmp_path / "interactive.json", "--strategy", "expected-errors",
                            "--rounds", "1", "--partial", "0.8", "--interactive")
    assert interactive["config"]["interactive"] is True and static["config"]["interactive"] is False
    before, after = interactive["rounds"]
    assert after["selected_ids"] == static["rounds"][1]["selected_ids"]  # same model, same choice
    assert before["annotated_tokens"] < after["annotated_tokens"] < after["annotated_words"]


def test_interactive_without_partial_is_refused(sample: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["simulate", "--train", str(sample["train"]), "--dev", str(sample["dev"]),
                   "--seed-trees", "5", "--per-round", "5", "--rounds", "1", "--strategy", "random",
                   "--interactive", "--out", str(tmp_path / "r.json"), *CHEAP])
    assert status == 2
    assert "give partial too" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_refill_fills_the_earlier_partial_trees_again_each_round(sample: dict[str, Path], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import parsing.semi.simulate as simulate_module

    calls: list[tuple[Any, Any]] = []
    original = simulate_module.refill

    def spy(tree, *args):  # noqa: ANN001, ANN202
        again = original(tree, *args)
        calls.append((tree, again))
        return again

    monkeypatch.setattr(simulate_module, "refill", spy)
    result = _simulate(sample, tmp_path / "refill.json", "--strategy", "expected-errors", "--partial", "0.8",
                       "--rounds", "3", "--refill")
    assert result["config"]["refill"] is True
    first, second = (set(result["rounds"][n]["selected_ids"]) for n in (1, 2))
    # round 1 has no earlier partial tree; round 2 fills round 1's again, round 3 those of rounds 1-2
    refilled = [tree.sent_id for tree, _ in calls]
    partial_first = len(refilled) - len(set(refilled))  # filled twice: round 1's partial trees
    assert set(refilled) <= first | second and set(refilled) & first
    assert partial_first == len(set(refilled) & first)
    for tree, again in calls:
        assert tree.partial and again.annotated is not None
        human = np.flatnonzero(tree.annotated)
        assert np.array_equal(again.heads[human], tree.heads[human])
        assert [again.deprels[d] for d in human] == [tree.deprels[d] for d in human]
    with pytest.raises(ValueError, match="give partial too"):
        SimulationConfig(seed_trees=1, per_round=1, rounds=1, refill=True)


def trees_learned(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """Each simulated round's human trees, as ``train_round`` receives them (appended per round)."""
    import parsing.semi.simulate as simulate_module

    learned: list[list[Any]] = []
    original = simulate_module.train_round

    def spy(parsers, human, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        learned.append(list(human))
        return original(parsers, human, *args, **kwargs)

    monkeypatch.setattr(simulate_module, "train_round", spy)
    return learned


def test_oracle_fill_learns_whole_true_trees_at_the_touched_words_cost(
        sample: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    learned = trees_learned(monkeypatch)
    partial = _simulate(sample, tmp_path / "partial.json", "--strategy", "expected-errors",
                        "--partial", "0.8", "--rounds", "1")
    partial_trees = learned[-1]
    bound = _simulate(sample, tmp_path / "bound.json", "--strategy", "expected-errors", "--partial", "0.8",
                      "--rounds", "1", "--oracle-fill")
    assert bound["config"]["oracle_fill"] is True
    assert bound["rounds"][1]["selected_ids"] == partial["rounds"][1]["selected_ids"]
    assert bound["rounds"][1]["annotated_tokens"] == partial["rounds"][1]["annotated_tokens"]
    gold = {s.sent_id: s for s in load_sentences(sample["train"])}
    assert any(tree.partial for tree in partial_trees)
    for tree in learned[-1]:  # whole true trees, nothing marked
        assert tree.annotated is None or not tree.partial
        assert np.array_equal(tree.heads, gold[tree.sent_id].heads)


def test_flag_detector_touches_the_flagged_words_too_or_alone(sample: dict[str, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import parsing.semi.simulate as simulate_module

    scored: list[tuple[str, np.ndarray]] = []
    original = simulate_module._round_detector

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        score = original(*args, **kwargs)  # the round's real detector is fitted and scores

        def every_third(sentences, by_name, trees):  # noqa: ANN001, ANN202
            real = score(sentences, by_name, trees)
            assert [len(p) for p in real] == [len(s) for s in sentences]
            fake = [np.where(np.arange(len(s)) % 3 == 0, 0.9, 0.1) for s in sentences]  # words 1, 4, 7, ...
            scored.extend((s.sent_id, p) for s, p in zip(sentences, fake, strict=True))
            return fake
        return every_third

    monkeypatch.setattr(simulate_module, "_round_detector", spy)
    learned = trees_learned(monkeypatch)
    share = _simulate(sample, tmp_path / "share.json", "--strategy", "expected-errors", "--rounds", "1",
                      "--partial", "0.8")
    assert not scored  # the share alone fits no detector
    share_marks = {t.sent_id: t.annotated for t in learned[-1] if t.annotated is not None}
    either = _simulate(sample, tmp_path / "either.json", "--strategy", "expected-errors", "--rounds", "1",
                       "--partial", "0.8", "--flag-detector", "0.5")
    either_marks = {t.sent_id: t.annotated for t in learned[-1] if t.annotated is not None}
    scored.clear()
    alone = _simulate(sample, tmp_path / "alone.json", "--strategy", "expected-errors", "--rounds", "1",
                      "--flag-detector", "0.5")
    alone_marks = {t.sent_id: t.annotated for t in learned[-1] if t.annotated is not None}
    assert either["config"]["flag_detector"] == 0.5 and either["config"]["partial"] == 0.8
    assert alone["config"]["partial"] is None and share["config"]["flag_detector"] is None
    selected = share["rounds"][1]["selected_ids"]
    assert either["rounds"][1]["selected_ids"] == selected == alone["rounds"][1]["selected_ids"]
    assert sorted(sent_id for sent_id, _ in scored) == sorted(selected)  # only the selected are scored
    flagged = {sent_id: np.concatenate([[False], p >= 0.5]) for sent_id, p in scored}
    for sent_id in selected:  # the human words: flagged alone, or below the share or flagged
        assert alone_marks[sent_id].tolist() == flagged[sent_id].tolist()
        assert either_marks[sent_id].tolist() == (share_marks[sent_id] | flagged[sent_id]).tolist()
    seed = share["rounds"][0]["annotated_tokens"]
    assert alone["rounds"][1]["annotated_tokens"] - seed == sum(int(f.sum()) for f in flagged.values())
    assert either["rounds"][1]["annotated_tokens"] - seed == sum(int(either_marks[i].sum()) for i in selected)
    assert either["rounds"][1]["annotated_tokens"] >= share["rounds"][1]["annotated_tokens"]


def test_flag_detector_settings_are_checked(sample: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--train", str(sample["train"]), "--dev", str(sample["dev"]), "--seed-trees", "5",
            "--per-round", "5", "--rounds", "1", "--strategy", "random", "--out", str(tmp_path / "r.json"),
            *CHEAP]
    with pytest.raises(SystemExit):
        main([*base, "--flag-detector", "0"])
    assert "must lie in (0, 1]" in capsys.readouterr().err
    assert main([*base, "--flag-detector", "0.5", "--partial", "0.8", "--interactive"]) == 2
    assert "does not take flag_detector" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    with pytest.raises(ValueError, match="flag_detector must be"):
        SimulationConfig(seed_trees=1, per_round=1, rounds=1, flag_detector=1.5)
    assert SimulationConfig(seed_trees=1, per_round=1, rounds=1, flag_detector=0.5, refill=True).refill
