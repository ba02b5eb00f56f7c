"""``bench/member_folds_report.py``: the others trained on the tagger's jackknifed tags against the
neural member's folds, in time and LAS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.member_folds_report import table
from bench.tag_source_report import read
from tests.bench.test_tag_source_report import write_rows


def _rows(folds: dict[str, Any] | None, seconds: float, members: list[float],
          vote: float) -> list[dict[str, Any]]:
    bank = {"treebank": "UD_Welsh-CCG", "tags": "predicted"}
    return [{**bank, "kind": "tagger", "parser": "tagger", "UPOS": 94.5, "source": "biaffine",
             "member_folds": folds, "round_train_s": seconds},
            *[{**bank, "kind": "member", "parser": f"m{i}", "LAS": las} for i, las in enumerate(members)],
            {**bank, "kind": "member", "parser": "biaffine", "LAS": 90.0},  # not a feature member
            {**bank, "kind": "ensemble", "parser": "vote-tuned-labels", "LAS": vote}]


def test_each_run_gets_its_line_with_folds_training_tags_time_and_las(tmp_path: Path) -> None:
    base = read(write_rows(tmp_path / "base.jsonl", _rows(None, 1500.0, [70.0, 72.0], 75.0)))
    folds = {"folds": 3, "seconds": 800.0, "train_upos": {"tagger": 0.931, "biaffine": 0.9425}}
    three = read(write_rows(tmp_path / "folds3.jsonl", _rows(folds, 2300.0, [71.0, 74.0], 75.5)))
    text = table(base, [("folds3", three)], ["vote-tuned-labels"])
    assert "| Welsh-CCG | base | — | tagger's jackknife | 1500 | 71.00 | 75.00 |" in text
    assert "|  | folds3 | 3 | 94.25 (tagger 93.10) | 2300 | 72.50 | 75.50 |" in text
