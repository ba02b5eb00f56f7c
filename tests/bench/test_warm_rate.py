"""``bench/warm_rate.py``: the last line per treebank, member and rate wins, and each rate's mean
dev LAS is per member over the treebanks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.warm_rate import report


def _row(treebank: str, member: str, rate: float, dev: float) -> dict[str, Any]:
    return {"treebank": treebank, "member": member, "previous_sentences": 1000, "sentences": 1050,
            "previous_dev": 70.0, "previous_test": 68.0, "warm_rate": rate, "warm_epochs": 5, "cpu_s": 20.0,
            "best_epoch": 3, "dev": dev, "test": 69.0}


def test_the_table_keeps_the_last_line_and_means_each_rate_per_member(tmp_path: Path) -> None:
    rows = [_row("UD_Tamil-TTB", "biaffine", 0.3, 10.0), _row("UD_Tamil-TTB", "biaffine", 0.3, 60.0),
            _row("UD_Telugu-MTG", "biaffine", 0.3, 80.0), _row("UD_Telugu-MTG", "biaffine", 1.0, 79.0),
            _row("UD_Telugu-MTG", "lstm-hybrid", 0.3, 82.0)]
    out = tmp_path / "warm_rate.jsonl"
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    table = report(out)
    assert table.count("| UD_Tamil-TTB | biaffine |") == 1 and "| 60.00 (70.00) |" in table
    assert "biaffine, warm_rate 0.3: mean dev LAS 70.00 over 2 treebanks" in table
    assert "biaffine, warm_rate 1: mean dev LAS 79.00 over 1 treebanks" in table
    assert "lstm-hybrid, warm_rate 0.3: mean dev LAS 82.00 over 1 treebanks" in table
