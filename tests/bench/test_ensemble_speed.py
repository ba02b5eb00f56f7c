"""``bench/ensemble_speed.py`` on a tiny predicted-tag model kept as ``bench/ensembles.py
--variant`` keeps it: the variant's folder is found, the default method is fitted on dev, and
the ensemble's words/s include tagging."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from parsing.conllu_io import load_sentences
from parsing.pipeline import load_models, train_models


@pytest.mark.usefixtures("bench_path")
def test_a_variants_model_gets_the_default_method_tuned_on_dev(tmp_path: Path, telugu: Path) -> None:
    from bench.ensemble_speed import measure
    train = load_sentences(telugu / "te_mtg-ud-train.conllu")[:150]
    dev_path, test_path = tmp_path / "dev.conllu", tmp_path / "test.conllu"
    shutil.copy(telugu / "te_mtg-ud-dev.conllu", dev_path)
    shutil.copy(telugu / "te_mtg-ud-test.conllu", test_path)
    model_dir = tmp_path / "UD_Telugu-MTG-predicted-small"
    train_models(train, load_sentences(dev_path), model_dir, names=["graph1", "eager"], tags="predicted")
    assert load_models(model_dir).ensemble is None  # as bench/ensembles.py keeps them

    row = measure(model_dir, test_path, 1, tmp_path / "no-peer.udpipe", dev_path)
    assert row["treebank"] == "UD_Telugu-MTG" and row["tags"] == "predicted"
    assert row["method"] == "vote-tuned-labels" and set(row["members"]) == {"graph1", "eager"}
    assert row["udpipe1"] is None and row["tagger_words_per_s"] > 0
    assert row["words"] == sum(len(s) for s in load_sentences(test_path))
    assert 0 < row["ensemble"]["words_per_s"] and 30 < row["ensemble"]["las"] < 100
