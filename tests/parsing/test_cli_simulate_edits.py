"""``python -m parsing simulate-edits`` end to end on a tiny Wolof model (issue 12's contract)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsing.cli import main
from parsing.conllu_io import format_conllu, load_sentences, read_conllu
from parsing.pipeline import load_models, train_models
from parsing.semi.edits import run_edits

KEYS = {"sentences", "words", "edits", "edits_per_100_words", "wrong_arcs_before"}


@pytest.fixture(scope="module")
def tiny(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 2-member model (vote-uniform) on 40 Wolof sentences, and 15 short gold dev sentences."""
    folder = tmp_path_factory.mktemp("edits")
    source = ud_root / "UD_Wolof-WTB"
    train = load_sentences(source / "wo_wtb-ud-train.conllu")[:40]
    dev = [s for s in read_conllu(source / "wo_wtb-ud-dev.conllu") if len(s.words) <= 20][:15]
    (folder / "dev.conllu").write_text(format_conllu(dev), "utf-8")
    train_models(train, None, folder / "model", names=["graph1", "hybrid"], ensemble="vote-uniform",
                 params={"graph1": {"max_iter": 1, "n_bits": 16}, "hybrid": {"epochs": 1, "n_bits": 16}})
    return {"model": folder / "model", "dev": folder / "dev.conllu"}


def _run(tiny: dict[str, Path], out: Path, policy: str, *extra: str) -> dict[str, object]:
    status = main(["simulate-edits", "--model", str(tiny["model"]), "--input", str(tiny["dev"]),
                   "--policy", policy, "--out", str(out), *extra])
    assert status == 0
    result: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return result


@pytest.mark.parametrize("policy", ["worst-first", "left-to-right"])
def test_interactive_needs_no_more_edits_than_fixing_each_arc(
    tiny: dict[str, Path], tmp_path: Path, policy: str
) -> None:
    plain = _run(tiny, tmp_path / "plain.json", policy)
    live = _run(tiny, tmp_path / "live.json", policy, "--interactive")
    assert KEYS <= set(plain) and KEYS <= set(live)
    gold = load_sentences(tiny["dev"])
    assert plain["sentences"] == live["sentences"] == len(gold)
    assert plain["words"] == sum(len(s) for s in gold)
    assert plain["wrong_arcs_before"] == live["wrong_arcs_before"] == plain["edits"]
    assert isinstance(plain["edits"], int) and plain["edits"] > 0  # a 1-epoch model makes mistakes
    assert isinstance(live["edits"], int) and live["edits"] <= plain["edits"]
    assert plain["edits_per_100_words"] == pytest.approx(100 * plain["edits"] / plain["words"], abs=1e-3)


@pytest.mark.parametrize("interactive", [False, True])
def test_every_final_tree_equals_gold(tiny: dict[str, Path], interactive: bool) -> None:
    gold = load_sentences(tiny["dev"])
    states, _ = run_edits(load_models(tiny["model"]), gold, policy="worst-first", interactive=interactive)
    for state, sentence in zip(states, gold, strict=True):
        assert state.tree.heads.tolist() == sentence.heads.tolist()
        assert state.tree.deprels == sentence.deprels
        assert state.edits <= len(sentence)


def test_unknown_policy_is_refused(tiny: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["simulate-edits", "--model", str(tiny["model"]), "--input", str(tiny["dev"]),
              "--policy", "random", "--out", str(tmp_path / "x.json")])
