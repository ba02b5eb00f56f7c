"""``bench/biaffine_variants.py``: the seeds' means per setting, each paired with ``forms`` on the
same seeds and settings but the compared one, and tag accuracy over annotated words only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.biaffine_variants import accuracy, report
from parsing.types import Parse, Sentence


def _row(seed: int, variant: str, params: dict[str, Any], dev: float, test: float,
         seconds: float = 100.0) -> dict[str, Any]:
    return {"treebank": "UD_Tamil-TTB", "seed": seed, "variant": variant, "params": params,
            "dev_LAS": dev, "test_LAS": test, "train_s": seconds, "epochs": 20 + seed,
            "test_tags": {"upos": 80.0, "xpos": 70.0, "feats": 72.0, "lemmas": None}}


def test_each_setting_is_paired_with_forms_on_the_same_seeds(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row(0, "forms", {}, 60.0, 50.0), _row(1, "forms", {}, 58.0, 52.0),
            _row(0, "forms", {"morphology_weight": 0.2}, 61.0, 53.0),
            _row(1, "forms", {"morphology_weight": 0.2}, 60.0, 53.0, seconds=50.0),
            _row(2, "forms", {"morphology_weight": 0.2}, 99.0, 99.0),  # no base seed 2: not in the Δ
            _row(0, "forms", {"max_seconds": 9}, 10.0, 10.0),  # another base: not paired with the first
            _row(0, "forms", {"max_seconds": 9, "morphology_weight": 0.2}, 12.0, 9.0)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report([str(path)])
    lines = capsys.readouterr().out.splitlines()
    # seconds: the paired seeds' sums, (100 + 50) / (100 + 100)
    assert '| UD_Tamil-TTB | forms {"morphology_weight": 0.2} | 0,1,2 | 73.33 | 68.33 | +1.50 | +2.00 ' \
           '| 21.0 | 83 | 0.75 | 80.00 | 70.00 | 72.00 | — |' in lines
    assert '| UD_Tamil-TTB | forms {"max_seconds": 9, "morphology_weight": 0.2} | 0 | 12.00 | 9.00 | +2.00 ' \
           '| -1.00 | 20.0 | 100 | 1.00 | 80.00 | 70.00 | 72.00 | — |' in lines
    assert '| UD_Tamil-TTB | forms | 0,1 | 59.00 | 51.00 |  |  | 20.5 | 100 |  ' \
           '| 80.00 | 70.00 | 72.00 | — |' in lines


def test_batch_words_is_compared_with_sentence_batches(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row(0, "forms", {}, 60.0, 50.0, seconds=90.0),
            _row(0, "forms", {"batch_words": 256}, 59.0, 51.0, seconds=30.0)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report([str(path)])
    assert '| UD_Tamil-TTB | forms {"batch_words": 256} | 0 | 59.00 | 51.00 | -1.00 | +1.00 | 20.0 | 30 ' \
           '| 0.33 | 80.00 | 70.00 | 72.00 | — |' in capsys.readouterr().out.splitlines()


def test_tag_accuracy_counts_every_word_and_none_for_an_unannotated_column() -> None:
    gold = Sentence.from_words(["a", "b", "c", "d"], heads=[0, 1, 1, 1], upos=["NOUN", "VERB", "_", "_"])
    parse = Parse(np.array([-1, 0, 1, 1, 1]), ["", "root", "dep", "dep", "dep"],
                  extras={"upos": ["<ROOT>", "NOUN", "NOUN", "X", "_"],
                          "lemmas": ["<ROOT>", "a", "b", "c", "d"]})
    assert accuracy([gold], [parse], "upos") == 50.0  # "_" predicted for "_" counts, as in UFeats
    assert accuracy([gold], [parse], "lemmas") is None  # every gold lemma is "_"


def test_the_other_member_is_paired_with_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row(0, "forms", {}, 60.0, 50.0), _row(0, "lstm-hybrid", {}, 62.0, 52.0, seconds=80.0),
            {**_row(0, "lstm-hybrid", {"batch_words": 256}, 63.0, 51.0, seconds=40.0), "test_tags": None}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report([str(path)])
    assert '| UD_Tamil-TTB | lstm-hybrid {"batch_words": 256} | 0 | 63.00 | 51.00 | +1.00 | -1.00 | 20.0 ' \
           '| 40 | 0.50 | — | — | — | — |' in capsys.readouterr().out.splitlines()
