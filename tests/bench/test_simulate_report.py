"""``bench/simulate_report.py``: the token-share table, with and without the seed trees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.simulate_report import (
    batch_label,
    is_interactive,
    is_oracle_fill,
    is_refill,
    partial_gain_table,
    read_rows,
    self_training_table,
    strategy_parts,
    token_share_table,
)


def _row(strategy: str, curve: list[tuple[int, float]], seed: int = 0) -> dict[str, Any]:
    config = {"seed_trees": 100, "per_round": 50, "parsers": ["graph1"], "warm": False}
    rounds = [{"annotated_tokens": tokens, "dev_las": las} for tokens, las in curve]
    return {"treebank": "UD_X", "strategy": strategy, "seed": seed, "self_training": "none",
            "select": "confidence", "config": config, "rounds": rounds}


def test_the_share_counts_the_seed_trees_unless_told_to_leave_them_out() -> None:
    rows = [_row("random", [(1000, 70.0), (2000, 72.0), (3000, 74.0)]),
            _row("expected-errors+partial-0.8", [(1000, 70.0), (1500, 73.0), (2000, 74.0)])]
    every = token_share_table(rows)
    rounds_only = token_share_table(rows, beyond_seed=True)
    # random reaches 74.0 at 3,000 tokens, the partial run at 2,000: 66.7% of every token, but
    # 1,000 of random's 2,000 tokens annotated after the 1,000 seed tokens: 50.0%
    assert "| UD_X | 100 | 100.0% | 66.7% |" in every
    assert "| UD_X | 100 | 100.0% | 50.0% |" in rounds_only


def test_a_run_that_never_arrives_says_how_far_it_got_beyond_the_seed() -> None:
    rows = [_row("random", [(1000, 70.0), (3000, 74.0)]),
            _row("longest", [(1000, 70.0), (2000, 72.5)])]
    assert "not reached (50% of tokens: -1.50 LAS)" in token_share_table(rows, beyond_seed=True)
    assert "not reached (67% of tokens: -1.50 LAS)" in token_share_table(rows)


def test_interactive_strategies_keep_their_threshold() -> None:
    assert strategy_parts("expected-errors+partial-0.8+interactive") == ("expected-errors", "0.8")
    assert is_interactive("expected-errors+partial-0.8+interactive")
    assert not is_interactive("random+interactive") and not is_interactive("expected-errors+partial-0.8")


def test_refill_and_oracle_fill_endings_keep_the_threshold_and_combine() -> None:
    label = "expected-errors+partial-0.8+interactive+refill+oracle-fill"
    assert strategy_parts(label) == ("expected-errors", "0.8")
    assert is_interactive(label) and is_refill(label) and is_oracle_fill(label)
    assert is_refill("entropy+partial-0.8+refill") and not is_oracle_fill("entropy+partial-0.8+refill")
    bound = "entropy+partial-0.8+oracle-fill"
    assert is_oracle_fill(bound) and not is_refill(bound)
    assert not is_refill("random+refill") and not is_oracle_fill("random+oracle-fill")  # not partial


def _trained(row: dict[str, Any], automatic: list[int], las: list[float]) -> dict[str, Any]:
    for record, count, score in zip(row["rounds"], automatic, las, strict=True):
        record["automatic_sentences"] = {"graph1": count}
        record["members"] = {"graph1": {"uas": score + 5, "las": score}}
    return row


def test_self_training_gains_leave_out_runs_whose_pool_ran_out() -> None:
    def run(treebank: str, setting: str, automatic: list[int], las: list[float]) -> dict[str, Any]:
        row = _row("random", [(1000, las[0]), (1500, las[1])])
        row.update(treebank=treebank, self_training=setting)
        return _trained(row, automatic, las)

    rows = [run("UD_A", "none", [0, 0], [70.0, 72.0]), run("UD_A", "ensemble", [0, 50], [70.0, 73.0]),
            run("UD_B", "none", [0, 0], [60.0, 61.0]), run("UD_B", "ensemble", [50, 0], [60.0, 61.0])]
    table = self_training_table(rows)
    assert "| UD_A | 100 | random | ensemble:confidence | +1.00 | +1.00 |" in table
    assert ("| UD_B | 100 | random | ensemble:confidence | "
            "no automatic tree in the final round (the pool ran out) |") in table
    assert "| **mean** | | | ensemble:confidence | **+1.00** | **+1.00** |" in table  # UD_B's +0.00 left out


def test_partial_runs_with_smaller_rounds_are_measured_against_the_usual_baseline() -> None:
    full = _row("random", [(1000, 70.0), (2000, 72.0), (3000, 74.0)])
    small = _row("expected-errors+partial-0.8", [(1000, 70.0), (1250, 72.0), (1500, 73.8), (1750, 74.0)])
    small["config"] = {**small["config"], "per_round": 25}
    table = partial_gain_table([full, small])
    # 95% of random's gain of 4.0 is 73.8, reached after 500 of random's 2,000 added tokens
    assert "| UD_X | expected-errors+partial-0.8 (25 a round) | random | 25.0% | 1/1 |" in table
    assert batch_label(full) == "random"


def test_the_partial_mean_says_on_how_many_treebanks_it_was_reached() -> None:
    rows = []
    for treebank, curve in (("UD_A", [(1000, 70.0), (1500, 73.8)]), ("UD_B", [(1000, 70.0), (1500, 71.0)])):
        full = _row("random", [(1000, 70.0), (2000, 72.0), (3000, 74.0)])
        partial = _row("random+partial-0.8", curve)
        full["treebank"] = partial["treebank"] = treebank
        rows += [full, partial]
    table = partial_gain_table(rows)
    assert "| UD_B | random+partial-0.8 | random | not reached | 0/1 |" in table
    # UD_A reaches 73.8 (95% of random's gain of 4.0) at 1,500 tokens: 500 of random's 2,000 added
    assert "| **mean** (reached on 1 of 2 treebanks) | random+partial-0.8 | random | **25.0%** | |" in table


def test_an_interactive_column_follows_its_plain_twin_whatever_the_order_of_the_rows() -> None:
    curve = [(1000, 70.0), (2000, 74.0)]
    labels = ["expected-errors+partial-0.8+interactive", "expected-errors+partial-0.8", "random"]
    for ordered in (labels, labels[::-1]):
        header = token_share_table([_row(label, curve) for label in ordered]).splitlines()[0]
        assert header == ("| treebank | seed trees | random | expected-errors+partial-0.8 | "
                          "expected-errors+partial-0.8+interactive |")


def test_runs_with_filled_arcs_weighted_are_told_apart_from_the_default_ones(tmp_path: Path) -> None:
    full = _row("random", [(1000, 70.0), (2000, 72.0), (3000, 74.0)])
    usual = _row("expected-errors+partial-0.8", [(1000, 70.0), (1500, 72.0), (2000, 73.8)])
    weighted = _row("expected-errors+partial-0.8", [(1000, 70.0), (1500, 73.8)])
    params = {"eager": {"filled_weight": 0.3}, "hybrid": {"filled_weight": 0.3}}
    weighted["config"] = {**weighted["config"], "member_params": params}
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in (full, usual, weighted)), encoding="utf-8")
    assert len(read_rows(path)) == 3  # the same strategy and seed, not one run recorded twice
    table = partial_gain_table(read_rows(path))
    assert "| UD_X | expected-errors+partial-0.8 | random | 50.0% | 1/1 |" in table
    assert "| UD_X | expected-errors+partial-0.8 (filled arcs ×0.3) | random | 25.0% | 1/1 |" in table
    header = token_share_table(read_rows(path)).splitlines()[0]
    assert "expected-errors+partial-0.8 (filled arcs ×0.3) |" in header


@pytest.mark.usefixtures("bench_path")
def test_detector_flagged_runs_get_their_own_rows_and_command(tmp_path: Path) -> None:
    import argparse

    from bench.simulate import _job
    from bench.simulate_report import flag_threshold, is_partial

    either, alone = "expected-errors+partial-0.8+flagged-0.3", "expected-errors+flagged-0.4"
    assert strategy_parts(either) == ("expected-errors", "0.8") and flag_threshold(either) == "0.3"
    assert strategy_parts(alone) == ("expected-errors", None) and flag_threshold(alone) == "0.4"
    assert is_partial(alone) and not is_partial("expected-errors")
    assert is_oracle_fill(alone + "+oracle-fill") and flag_threshold(alone + "+oracle-fill") == "0.4"
    full = _row("random", [(1000, 70.0), (2000, 72.0), (3000, 74.0)])
    rows = [full, _row("expected-errors+partial-0.8", [(1000, 70.0), (2000, 73.8)]),
            _row(either, [(1000, 70.0), (1800, 73.8)]), _row(alone, [(1000, 70.0), (1500, 73.8)])]
    table = partial_gain_table(rows)
    assert "| UD_X | expected-errors+partial-0.8 | random | 50.0% | 1/1 |" in table
    assert f"| UD_X | {either} | random | 40.0% | 1/1 |" in table
    assert f"| UD_X | {alone} | random | 25.0% | 1/1 |" in table
    folder = tmp_path / "UD_X"
    folder.mkdir()
    for split in ("train", "dev"):
        (folder / f"x-ud-{split}.conllu").write_text("", encoding="utf-8")
    args = argparse.Namespace(ud=tmp_path, per_round=50, seed_trees=100, rounds=10, parsers="graph1",
                              out_dir=tmp_path / "out", member_params=[], warm=False, diversity=False)
    for strategy, partial, flag in ((either, ["--partial", "0.8"], ["--flag-detector", "0.3"]),
                                    (alone, [], ["--flag-detector", "0.4"])):
        out, command = _job(args, "UD_X", strategy, ("none", "confidence"), 0)
        assert strategy in out.name
        assert command[command.index("--strategy") + 1] == "expected-errors"
        assert ("--partial" in command) == bool(partial) and command[-2:] == flag
