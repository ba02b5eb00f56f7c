"""``bench/detect_folds.py`` on a small Telugu slice: each part of train is parsed by members
trained without it, and the detector is fitted with and without those parses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import format_conllu, read_conllu, to_sentence
from parsing.pipeline import train_models


@pytest.mark.usefixtures("bench_path")
def test_training_parts_are_parsed_by_members_trained_without_them(tmp_path: Path, telugu: Path) -> None:
    from bench.detect import prepare
    from bench.detect_folds import fold_of, measure, parse_fold

    treebank = tmp_path / "ud" / "UD_Telugu-Small"
    treebank.mkdir(parents=True)
    slices = {"train": read_conllu(telugu / "te_mtg-ud-train.conllu")[:160],
              "dev": read_conllu(telugu / "te_mtg-ud-dev.conllu")[:60],
              "test": read_conllu(telugu / "te_mtg-ud-test.conllu")[:60]}
    for split, raws in slices.items():
        (treebank / f"te_small-ud-{split}.conllu").write_text(format_conllu(raws), encoding="utf-8")
    models = tmp_path / "models"
    train = [to_sentence(s) for s in slices["train"]]
    dev = [to_sentence(s) for s in slices["dev"]]
    train_models(train, dev, models / "UD_Telugu-Small-predicted", names=["graph1", "eager"],
                 tags="predicted", params={"graph1": {"max_iter": 2}, "eager": {"epochs": 2}})
    cache = tmp_path / "cache"
    folder = prepare(treebank, cache, models, "vote-uniform")

    part = fold_of(160, 2, 0)
    assert np.bincount(part).tolist() == [80, 80] and fold_of(160, 2, 0).tolist() == part.tolist()
    for fold in (0, 1):
        out = parse_fold(treebank, folder, 2, fold, 0)
        manifest = json.loads((out / "model" / "manifest.json").read_text())
        assert manifest["train_sentences"] == 80  # trained without its own part
        assert manifest["parsers"] == ["graph1", "eager"] and manifest["ensemble"]["method"] == "vote-uniform"
        parsed = read_conllu(out / "train" / "ensemble.conllu")
        held = [raw for raw, p in zip(slices["train"], part, strict=True) if p == fold]
        assert [to_sentence(s).sent_id for s in parsed] == [to_sentence(s).sent_id for s in held]

    alone, more = measure(treebank, folder, 2, 0, copies=0)
    test_words = sum(len(to_sentence(s)) for s in slices["test"])
    dev_words = sum(len(s) for s in dev)
    assert alone["tuning"] == "dev" and alone["tuning_words"] == dev_words
    assert more["tuning"] == "dev+folds" and more["tuning_words"] == dev_words + sum(len(s) for s in train)
    for row in (alone, more):
        assert row["detector"]["words"] == test_words and 0.0 <= row["detector"]["auc"] <= 1.0
        assert row["dev_jackknifed"]["words"] == dev_words
