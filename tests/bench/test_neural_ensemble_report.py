"""``bench/neural_ensemble_report.py``: the neural members beside the classic ones and the votes."""

from __future__ import annotations

from pathlib import Path

from bench.neural_ensemble_report import latest_rows, table
from tests.bench.test_tag_source_report import write_rows


def test_the_best_neural_member_is_compared_with_the_best_classic_one(tmp_path: Path) -> None:
    rows = []
    for treebank, classic, biaffine, lstm, vote in (("UD_Tamil-TTB", 54.0, 51.0, 58.0, 59.0),
                                                    ("UD_Wolof-WTB", 73.0, 75.0, 74.0, 77.5)):
        bank = {"treebank": treebank, "tags": "predicted"}
        rows += [{**bank, "kind": "member", "parser": "graph1", "LAS": classic},
                 {**bank, "kind": "member", "parser": "eager", "LAS": classic - 1},
                 {**bank, "kind": "member", "parser": "biaffine", "LAS": biaffine},
                 {**bank, "kind": "member", "parser": "lstm-hybrid", "LAS": lstm},
                 {**bank, "kind": "ensemble", "parser": "vote-tuned-labels", "LAS": vote}]
    text = table(latest_rows([write_rows(tmp_path / "rows.jsonl", rows)]), ["vote-tuned-labels"])
    assert "| Tamil-TTB | graph1 54.00 | 51.00 | — | 58.00 |" in text
    assert "best neural member vs best classic member: mean +3.00 over 2 (+4.00, +2.00)" in text
    assert "vote-tuned-labels vs best neural: mean +1.75 over 2 (+1.00, +2.50)" in text
