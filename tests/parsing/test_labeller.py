"""Tests of :class:`parsing.labeller.ArcLabeller` on a slice of UD_Tamil-TTB (gold trees)."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.graph.templates import TokenEncoder
from parsing.labeller import LABEL_TEMPLATES, ArcLabeller, arc_label_features
from parsing.persist import load_model, save_model
from parsing.types import Sentence

TREEBANK = "UD_Tamil-TTB"


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / TREEBANK
    if not folder.is_dir():
        pytest.skip(f"{TREEBANK} not found under {ud_root}")
    train = load_sentences(next(folder.glob("*-ud-train.conllu")))[:300]
    dev = load_sentences(next(folder.glob("*-ud-dev.conllu")))
    return train, dev


@pytest.fixture(scope="module")
def labeller(data: tuple[list[Sentence], list[Sentence]]) -> ArcLabeller:
    return ArcLabeller().fit(data[0])


def test_labels_gold_trees_well_above_the_majority_label(
    labeller: ArcLabeller, data: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = data
    majority = Counter(r for s in train for r in s.deprels[1:]).most_common(1)[0][0]
    gold = [r for s in dev for r in s.deprels[1:]]
    predicted = [r for labels in labeller.predict(dev) for r in labels[1:]]
    accuracy = np.mean([g == p for g, p in zip(gold, predicted, strict=True)])
    baseline = np.mean([g == majority for g in gold])
    assert accuracy > baseline + 0.4


def test_predict_proba_is_a_distribution_per_arc(
    labeller: ArcLabeller, data: tuple[list[Sentence], list[Sentence]]
) -> None:
    dev = data[1][:10]
    probabilities = labeller.predict_proba(dev)
    for sentence, proba in zip(dev, probabilities, strict=True):
        assert proba.shape == (len(sentence) + 1, len(labeller.classes_))
        assert np.isnan(proba[0]).all()
        assert np.allclose(proba[1:].sum(axis=1), 1.0)
    labels = labeller.predict(dev)
    assert [labeller.labels_of(p) for p in probabilities] == labels
    assert all(label in labeller.classes_ for sentence in labels for label in sentence[1:])


def test_uses_the_given_trees_not_the_sentences_heads(
    labeller: ArcLabeller, data: tuple[list[Sentence], list[Sentence]]
) -> None:
    dev = data[1][:10]
    chains = [np.array([-1, *range(0, len(s))]) for s in dev]  # every word under the previous one
    blank = copy.deepcopy(dev)
    for sentence in blank:
        sentence.heads[1:] = -1
    assert labeller.predict(blank, chains) == labeller.predict(dev, chains)
    assert labeller.predict(dev, chains) != labeller.predict(dev)
    with pytest.raises(ValueError, match="trees"):
        labeller.predict(dev, chains[:-1])


def test_features_have_one_column_per_template_and_depend_on_the_tree(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, _ = data
    sentence = train[0]
    tokens = TokenEncoder.build(train).encode(sentence)
    features = arc_label_features(tokens, sentence.heads, n_bits=20)
    assert features.shape == (len(sentence), len(LABEL_TEMPLATES))
    assert features.min() >= 0 and features.max() < 2**20
    chain = np.array([-1, *range(0, len(sentence))])
    assert not np.array_equal(arc_label_features(tokens, chain, n_bits=20), features)


def test_save_load_and_single_label(data: tuple[list[Sentence], list[Sentence]], tmp_path: Path) -> None:
    train, dev = data
    labeller = ArcLabeller().fit(train[:50])
    save_model(labeller, tmp_path / "labeller.bin")
    loaded = load_model(tmp_path / "labeller.bin", ArcLabeller)
    assert loaded.predict(dev[:20]) == labeller.predict(dev[:20])
    one = Sentence.from_words(["a", "b"], upos=["X", "X"], heads=[0, 1], deprels=["dep", "dep"])
    assert ArcLabeller().fit([one]).predict([one]) == [["", "dep", "dep"]]


def test_same_data_same_model(data: tuple[list[Sentence], list[Sentence]]) -> None:
    """liblinear shuffles the arcs; a fixed seed makes two fits identical (numpy's global
    state, which the first fit moves on, no longer decides the model)."""
    train = data[0][:80]
    first, second = ArcLabeller().fit(train), ArcLabeller().fit(train)
    assert first.model_ is not None and second.model_ is not None
    assert np.array_equal(first.model_.coef_, second.model_.coef_)
    assert np.array_equal(first.model_.intercept_, second.model_.intercept_)


def test_empty_input(labeller: ArcLabeller) -> None:
    assert labeller.predict([]) == []
