"""Lockstep (batched) prediction of the transition parsers equals sentence-by-sentence parsing.

``TransitionParser.predict`` parses batches of sentences in lockstep; ``_predict_one_by_one``
runs the original one-state-at-a-time algorithm (``_parse``). Both must give the same heads,
labels and arc scores, bit for bit, whatever the batch a sentence lands in.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.transition import MEMBERS, TransitionParser, make_member
from parsing.transition import decoding as decoding_module
from parsing.trees import is_projective
from parsing.types import Parse, Sentence

TREEBANKS = {
    # short sentences; long, often non-projective sentences
    "UD_Telugu-MTG": "te_mtg",
    "UD_Afrikaans-AfriBooms": "af_afribooms",
}
N_TRAIN = 150
N_DEV = 120


def _load(ud_root: Path, treebank: str) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / treebank
    prefix = TREEBANKS[treebank]
    if not (folder / f"{prefix}-ud-train.conllu").exists():
        pytest.skip(f"{treebank} not found under {ud_root}")
    train = load_sentences(folder / f"{prefix}-ud-train.conllu")[:N_TRAIN]
    dev = load_sentences(folder / f"{prefix}-ud-dev.conllu")[:N_DEV]
    return train, dev


@pytest.fixture(scope="module", params=list(TREEBANKS))
def models(
    request: pytest.FixtureRequest, ud_root: Path
) -> tuple[list[Sentence], dict[str, TransitionParser]]:
    """Small models of the six members (three systems, both directions) and dev sentences."""
    train, dev = _load(ud_root, request.param)
    if request.param == "UD_Afrikaans-AfriBooms":  # lifting and SWAP are exercised
        assert sum(not is_projective(np.asarray(s.heads)) for s in train + dev) >= 10
    return dev, {name: make_member(name, epochs=2, n_bits=20).fit(train) for name in MEMBERS}


def assert_same_parses(got: list[Parse], expected: list[Parse]) -> None:
    assert len(got) == len(expected)
    for number, (a, b) in enumerate(zip(got, expected, strict=True)):
        assert a.heads.tolist() == b.heads.tolist(), number
        assert a.deprels == b.deprels, number
        assert a.arc_scores is not None and b.arc_scores is not None
        np.testing.assert_array_equal(a.arc_scores, b.arc_scores, err_msg=str(number))


@pytest.mark.parametrize("name", list(MEMBERS))
def test_batched_predict_equals_one_by_one(
    models: tuple[list[Sentence], dict[str, TransitionParser]], name: str
) -> None:
    dev, fitted = models
    parser = fitted[name]
    assert parser.system == MEMBERS[name][0]().system and parser.right_to_left == MEMBERS[name][1]
    assert_same_parses(parser.predict(dev), parser._predict_one_by_one(dev))


@pytest.mark.parametrize("name", list(MEMBERS))
def test_batch_composition_does_not_matter(
    models: tuple[list[Sentence], dict[str, TransitionParser]],
    name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dev, fitted = models
    parser = fitted[name]
    expected = parser.predict(dev)
    order = list(range(len(dev)))
    random.Random(7).shuffle(order)
    shuffled = parser.predict([dev[i] for i in order])
    assert_same_parses(shuffled, [expected[i] for i in order])
    alone = [parser.predict([sentence])[0] for sentence in dev[:20]]
    assert_same_parses(alone, expected[:20])
    monkeypatch.setattr(decoding_module, "BATCH_SIZE", 5)  # other batches, other neighbours
    assert_same_parses(parser.predict(dev[::-1]), expected[::-1])


def test_predict_of_nothing_is_empty(models: tuple[list[Sentence], dict[str, TransitionParser]]) -> None:
    _, fitted = models
    assert fitted["eager"].predict([]) == []


def test_training_with_dev_is_unchanged(ud_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dev-based epoch selection calls ``predict``: the weights are those the reference gives."""
    train, dev = _load(ud_root, "UD_Telugu-MTG")
    train, dev = train[:80], dev[:40]
    batched = make_member("hybrid", epochs=3, n_bits=18, random_state=2).fit(train, dev)
    monkeypatch.setattr(TransitionParser, "predict", TransitionParser._predict_one_by_one)
    reference = make_member("hybrid", epochs=3, n_bits=18, random_state=2).fit(train, dev)
    assert batched.history_ == reference.history_ and batched.epochs_ == reference.epochs_
    np.testing.assert_array_equal(batched.weights_, reference.weights_)
    np.testing.assert_array_equal(batched.rows_, reference.rows_)
