"""``bench/tag_source_report.py``: the same models parsed with the tagger's tags and with the chosen ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.tag_source_report import read, table


def _rows(upos: float, source: str, members: list[float], vote: float) -> list[dict[str, Any]]:
    bank = {"treebank": "UD_Welsh-CCG", "tags": "predicted"}
    return [{**bank, "kind": "tagger", "parser": "tagger", "UPOS": upos, "source": source,
             "dev_upos": {"tagger": 0.93, "biaffine": 0.945}},
            *[{**bank, "kind": "member", "parser": f"m{i}", "LAS": las} for i, las in enumerate(members)],
            {**bank, "kind": "member", "parser": "biaffine", "LAS": 90.0},  # not a feature member
            {**bank, "kind": "ensemble", "parser": "vote-tuned-labels", "LAS": vote}]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_table_pairs_each_treebank_and_averages_the_changes(tmp_path: Path) -> None:
    tagger = read(write_rows(tmp_path / "a.jsonl", _rows(93.0, "tagger", [70.0, 72.0], 75.0)))
    chosen = read(write_rows(tmp_path / "b.jsonl", _rows(94.5, "biaffine", [71.0, 74.0], 75.5)))
    text = table(tagger, chosen, ["vote-tuned-labels"])
    assert ("| Welsh-CCG | 93.00 / 94.50 | biaffine | 93.00 → 94.50 | 71.00 → 72.50 "
            "| 75.00 → 75.50 (+0.50) |") in text
    assert "mean change over 1: upos +1.50, members +1.50, vote-tuned-labels +0.50" in text
