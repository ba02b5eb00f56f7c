"""Tests of parsing.tagger.model: learning on a real treebank, storage, determinism, purity."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.tagger.features import batch_keys, sentence_keys
from parsing.tagger.model import Tagger
from parsing.tagger.storage import FORMAT_VERSION
from parsing.types import ROOT, Sentence

TOY = [
    Sentence.from_words(["the", "dog", "runs"], upos=["DET", "NOUN", "VERB"]),
    Sentence.from_words(["a", "cat", "sleeps"], upos=["DET", "NOUN", "VERB"]),
    Sentence.from_words(["the", "cats", "run", "."], upos=["DET", "NOUN", "VERB", "PUNCT"]),
]


@pytest.fixture(scope="module")
def tamil(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    """UD Tamil-TTB train and dev (small: 6k and 1.3k words)."""
    folder = ud_root / "UD_Tamil-TTB"
    return (load_sentences(folder / "ta_ttb-ud-train.conllu"),
            load_sentences(folder / "ta_ttb-ud-dev.conllu"))


@pytest.fixture(scope="module")
def fitted(tamil: tuple[list[Sentence], list[Sentence]]) -> Tagger:
    train, dev = tamil
    return Tagger(max_iter=8, predict_feats=True, random_state=1).fit(train, dev)


def accuracy(predicted: list[list[str]], gold: list[Sentence], column: str = "upos") -> float:
    pairs = [(p, g) for ps, s in zip(predicted, gold, strict=True)
             for p, g in zip(ps[1:], getattr(s, column)[1:], strict=True)]
    return float(sum(p == g for p, g in pairs) / len(pairs))


def most_frequent_tag_baseline(train: list[Sentence], dev: list[Sentence],
                               column: str = "upos") -> float:
    """Each word's most frequent training tag; the overall most frequent for unseen words."""
    by_word: dict[str, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for sentence in train:
        for form, tag in zip(sentence.forms[1:], getattr(sentence, column)[1:], strict=True):
            by_word.setdefault(form, Counter())[tag] += 1
            overall[tag] += 1
    default = overall.most_common(1)[0][0]
    predicted = [[ROOT] + [by_word[f].most_common(1)[0][0] if f in by_word else default
                           for f in s.forms[1:]] for s in dev]
    return accuracy(predicted, dev, column)


def test_learns_well_above_the_most_frequent_tag_baseline(
    fitted: Tagger, tamil: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = tamil
    baseline = most_frequent_tag_baseline(train, dev)
    ours = accuracy(fitted.predict(dev), dev)
    assert ours >= baseline + (1 - baseline) / 3, (ours, baseline)  # a third fewer errors
    assert fitted.dev_accuracy_["upos"] == pytest.approx(ours)


def test_feats_beat_the_most_frequent_feats_baseline(
    fitted: Tagger, tamil: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = tamil
    tagged = fitted.tag(dev)
    ours = accuracy([s.feats for s in tagged], dev, "feats")
    assert ours > most_frequent_tag_baseline(train, dev, "feats") + 0.05
    assert all(f == "_" or "=" in f for s in tagged for f in s.feats[1:])


def test_save_and_load_predict_identically(
    fitted: Tagger, tamil: tuple[list[Sentence], list[Sentence]], tmp_path: Path
) -> None:
    _, dev = tamil
    fitted.save(tmp_path / "tagger.npz")
    loaded = Tagger.load(tmp_path / "tagger.npz")
    assert loaded.get_params() == fitted.get_params()
    assert [(s.upos, s.feats) for s in loaded.tag(dev)] == \
        [(s.upos, s.feats) for s in fitted.tag(dev)]


def test_load_refuses_another_format_version(fitted: Tagger, tmp_path: Path) -> None:
    fitted.save(tmp_path / "tagger.npz")
    with np.load(tmp_path / "tagger.npz") as data:
        arrays = dict(data)
    arrays["header"] = np.array(str(arrays["header"]).replace(
        f'"format_version": {FORMAT_VERSION}', '"format_version": 999'))
    np.savez(tmp_path / "old.npz", **arrays)
    with pytest.raises(ValueError, match="format"):
        Tagger.load(tmp_path / "old.npz")


def test_seeded_training_is_deterministic(tamil: tuple[list[Sentence], list[Sentence]]) -> None:
    train = tamil[0][:150]
    first, second = (Tagger(max_iter=3, random_state=7).fit(train) for _ in range(2))
    np.testing.assert_array_equal(first.models_["upos"].weights, second.models_["upos"].weights)
    other = Tagger(max_iter=3, random_state=8).fit(train)
    assert not np.array_equal(first.models_["upos"].weights, other.models_["upos"].weights)


def test_fit_and_tag_do_not_mutate_their_input(
    tamil: tuple[list[Sentence], list[Sentence]]
) -> None:
    train = tamil[0][:100]
    blank = [Sentence.from_words(s.forms[1:]) for s in tamil[1][:20]]
    train_before, blank_before = copy.deepcopy(train), copy.deepcopy(blank)
    order = [id(s) for s in train]
    tagger = Tagger(max_iter=2, predict_feats=True).fit(train)
    tagged = tagger.tag(blank)
    assert [id(s) for s in train] == order
    for before, after in zip(train_before + blank_before, train + blank, strict=True):
        assert before.upos == after.upos and before.feats == after.feats
        assert before.forms == after.forms
        np.testing.assert_array_equal(before.heads, after.heads)
    assert all(s.upos is not b.upos for s, b in zip(tagged, blank, strict=True))


def test_tag_replaces_only_tag_columns() -> None:
    sentence = Sentence.from_words(["the", "dog"], heads=[2, 0], deprels=["det", "root"])
    tagged = Tagger(max_iter=2).fit(TOY).tag([sentence])[0]
    assert tagged.upos == [ROOT, "DET", "NOUN"]
    assert tagged.feats == sentence.feats and tagged.xpos == sentence.xpos
    assert tagged.heads.tolist() == [-1, 2, 0] and tagged.deprels == sentence.deprels


@pytest.mark.parametrize("decoder", ["greedy", "viterbi"])
def test_both_decoders_fit_the_toy_data_and_handle_empty_sentences(decoder: str) -> None:
    tagger = Tagger(max_iter=5, decoder=decoder, tag_dict_min_count=None).fit(TOY)  # type: ignore[arg-type]
    assert tagger.predict(TOY) == [s.upos for s in TOY]
    assert tagger.predict([Sentence.from_words([])]) == [[ROOT]]


def test_the_tag_dictionary_fixes_frequent_unambiguous_words() -> None:
    tagger = Tagger(max_iter=1, tag_dict_min_count=2).fit(TOY)
    assert tagger.tag_dict_ == {"the": "DET"}
    assert tagger.predict([Sentence.from_words(["the", "the"])]) == [[ROOT, "DET", "DET"]]


def test_xpos_is_predicted_when_asked() -> None:
    train = [Sentence.from_words(s.forms[1:], upos=s.upos[1:]) for s in TOY]
    for sentence in train:
        sentence.xpos[1:] = [tag.lower() for tag in sentence.upos[1:]]
    tagged = Tagger(max_iter=5, predict_xpos=True).fit(train).tag(train)
    assert [s.xpos for s in tagged] == [s.xpos for s in train]


def test_errors_are_explicit(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not fitted"):
        Tagger().predict(TOY)
    with pytest.raises(ValueError, match="at least one training word"):
        Tagger().fit([Sentence.from_words([])])
    with pytest.raises(ValueError, match="decoder"):
        Tagger(decoder="beam").fit(TOY)  # type: ignore[arg-type]


def test_feature_keys_are_stable_across_processes() -> None:
    """Keys must not depend on Python's per-process salted ``hash()``."""
    code = "from parsing.tagger.features import sentence_keys; print(sentence_keys(['Dog', 'runs']).sum())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert outputs == {f"{sentence_keys(['Dog', 'runs']).sum()}\n"}


def test_batched_feature_keys_equal_per_sentence_keys() -> None:
    sentences = [["A", "b-c"], [], ["x"], ["Dog", "runs", "fast", "."]]
    stacked = np.concatenate([sentence_keys(forms) for forms in sentences])
    np.testing.assert_array_equal(batch_keys(sentences), stacked)
    assert sentence_keys(["x"]).shape == (1, stacked.shape[1])
