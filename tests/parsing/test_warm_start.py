"""Warm starts of the ensemble members: ``warm_start=True`` continues a fitted parser.

Small real data (UD Wolof, a few dozen sentences, one or two epochs, small hash spaces).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from parsing.base import BaseParser
from parsing.conllu_io import load_sentences
from parsing.members import build_member
from parsing.scorer.metrics import evaluate
from parsing.transition.training import widen_label_columns
from parsing.types import Sentence

SMALL: dict[str, dict[str, Any]] = {
    "graph1": {"max_iter": 2, "n_bits": 16},
    "graph2": {"max_iter": 2, "n_bits": 16},
    "eager": {"epochs": 2, "n_bits": 16},
    "swap": {"epochs": 2, "n_bits": 16},
    "hybrid-rtl": {"epochs": 2, "n_bits": 16},
    "neural": {"max_epochs": 2, "hidden": 32, "word_dim": 16, "beam_size": 2},
}
"""Members under test with settings small enough for a unit test (all three transition
systems, both directions, both graph orders, the network)."""

NEW_WORD = "zzwarmword"
NEW_LABEL = "dep:warmtest"


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> dict[str, list[Sentence]]:
    """``base`` (40 training sentences), ``more`` (``base`` and 20 new ones), ``dev`` (20)."""
    folder = ud_root / "UD_Wolof-WTB"
    train = load_sentences(folder / "wo_wtb-ud-train.conllu")[:60]
    return {"base": train[:40], "more": train, "dev": load_sentences(folder / "wo_wtb-ud-dev.conllu")[:20]}


def _small(name: str, **params: Any) -> BaseParser:
    return build_member(name, **{**SMALL[name], **params})


def _las(parser: BaseParser, sentences: list[Sentence]) -> float:
    return evaluate(sentences, parser.predict(sentences)).las.f1


def _head_agreement(a: BaseParser, b: BaseParser, sentences: list[Sentence]) -> float:
    same = total = 0
    for x, y in zip(a.predict(sentences), b.predict(sentences), strict=True):
        same += int(np.count_nonzero(x.heads[1:] == y.heads[1:]))
        total += len(x.heads) - 1
    return same / total


def _learned(parser: BaseParser) -> dict[str, np.ndarray]:
    """The arrays a fit learns (weights and, for transition parsers, the bucket map)."""
    if hasattr(parser, "params_"):
        return dict(parser.params_)
    arrays = {"weights": parser.weights_}
    if hasattr(parser, "rows_"):
        arrays["rows"] = parser.rows_
    return arrays


def _with_new_word_and_label(sentence: Sentence) -> Sentence:
    """The sentence with its first word's form replaced by an unseen one and the label of a
    non-root word by an unseen label."""
    forms = list(sentence.forms)
    forms[1] = NEW_WORD
    deprels = list(sentence.deprels)
    word = next(d for d in range(1, len(sentence) + 1) if sentence.heads[d] != 0)
    deprels[word] = NEW_LABEL
    return replace(sentence, forms=forms, deprels=deprels)


@pytest.mark.parametrize("name", list(SMALL))
def test_warm_start_is_a_parameter_that_clone_keeps(name: str) -> None:
    parser = build_member(name)
    assert parser.get_params()["warm_start"] is False
    assert parser.get_params()["warm_epochs"] >= 1
    assert clone(parser.set_params(warm_start=True, warm_epochs=3)).get_params()["warm_epochs"] == 3


@pytest.mark.parametrize("name", list(SMALL))
def test_cold_refit_is_a_fresh_fit(name: str, wolof: dict[str, list[Sentence]]) -> None:
    refitted = _small(name).fit(wolof["base"], wolof["dev"]).fit(wolof["more"], wolof["dev"])
    fresh = _small(name).fit(wolof["more"], wolof["dev"])
    expected = _learned(fresh)
    assert set(_learned(refitted)) == set(expected)
    for key, array in _learned(refitted).items():
        np.testing.assert_array_equal(array, expected[key], err_msg=key)


@pytest.mark.parametrize("name", list(SMALL))
def test_warm_fit_on_the_same_data_stays_close(name: str, wolof: dict[str, list[Sentence]]) -> None:
    cold = _small(name).fit(wolof["base"], wolof["dev"])
    before = _las(cold, wolof["dev"])
    warm = clone(cold).set_params(warm_start=True)
    warm.__dict__.update({k: v for k, v in cold.__dict__.items() if k.endswith("_")})
    warm.fit(wolof["base"], wolof["dev"])
    assert _learned(warm).keys() == _learned(cold).keys()
    assert _las(warm, wolof["dev"]) > before - 0.05
    assert _head_agreement(warm, cold, wolof["dev"]) > 0.75


@pytest.mark.parametrize("name", list(SMALL))
def test_warm_fit_learns_new_words_and_labels(name: str, wolof: dict[str, list[Sentence]]) -> None:
    parser = _small(name).fit(wolof["base"], wolof["dev"])
    cold_epochs = _epochs(parser)
    new = [_with_new_word_and_label(s) for s in wolof["more"][40:]]
    unseen = evaluate(new, parser.predict(new)).uas.f1
    parser.set_params(warm_start=True).fit([*wolof["base"], *new], wolof["dev"])
    assert _epochs(parser) == cold_epochs + parser.warm_epochs
    assert NEW_LABEL in _labels(parser)
    parses = parser.predict(new)
    assert [len(p.heads) for p in parses] == [len(s) + 1 for s in new]
    assert evaluate(new, parses).uas.f1 > unseen  # they are training sentences now


def test_new_labels_move_the_old_right_arc_columns_with_their_weights() -> None:
    fixed, old_n, new_n = 3, 4, 6
    rng = np.random.default_rng(0)
    old = rng.standard_normal((5, fixed + 2 * old_n))
    wide = widen_label_columns(old, fixed=fixed, old_n_labels=old_n, n_labels=new_n)
    assert wide.shape == (5, fixed + 2 * new_n)
    np.testing.assert_array_equal(wide[:, : fixed + old_n], old[:, : fixed + old_n])  # fixed, LEFT
    np.testing.assert_array_equal(wide[:, fixed + new_n : fixed + new_n + old_n], old[:, fixed + old_n :])
    assert not wide[:, fixed + old_n : fixed + new_n].any() and not wide[:, fixed + new_n + old_n :].any()


def test_transition_warm_fit_appends_new_labels_after_known_ones(wolof: dict[str, list[Sentence]]) -> None:
    parser = _small("eager").fit(wolof["base"])
    known = list(parser.labels_.index)
    new = [_with_new_word_and_label(s) for s in wolof["more"][40:]]
    parser.set_params(warm_start=True).fit([*wolof["base"], *new])
    assert list(parser.labels_.index)[: len(known)] == known
    assert parser.labels_.index[NEW_LABEL] == len(known) + 1
    assert parser.weights_.shape[1] == 3 + 2 * parser.n_labels_
    assert NEW_WORD in parser.vocabularies_[0].index


@pytest.mark.parametrize("name", ["graph1", "eager"])
def test_warm_fit_continues_the_perceptron_step_counter(name: str, wolof: dict[str, list[Sentence]]) -> None:
    parser = _small(name).fit(wolof["base"])
    steps = parser.n_steps_
    parser.set_params(warm_start=True).fit(wolof["more"])
    assert parser.n_steps_ > steps
    if name == "graph1":  # one tick per sentence and epoch
        assert parser.n_steps_ == steps + len(wolof["more"]) * parser.warm_epochs


def test_neural_warm_fit_resumes_adam(wolof: dict[str, list[Sentence]]) -> None:
    parser = _small("neural").fit(wolof["base"])
    steps, batches = parser.optimizer_.steps, -(-_configurations(wolof["more"]) // parser.batch_size)
    parser.set_params(warm_start=True, warm_epochs=1).fit(wolof["more"])
    assert parser.optimizer_.steps == steps + batches
    assert parser.optimizer_.first["word"].shape == parser.params_["word"].shape


def _configurations(sentences: list[Sentence]) -> int:
    """Arc-hybrid oracle configurations: ``2n`` per sentence of ``n`` words."""
    return sum(2 * len(s) for s in sentences)


@pytest.mark.parametrize("name", list(SMALL))
def test_save_load_then_warm_fit(name: str, wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    _small(name).fit(wolof["base"], wolof["dev"]).save(tmp_path / "member.model")
    loaded = BaseParser.load(tmp_path / "member.model", warm=True)
    assert all(hasattr(loaded, a) for a in getattr(type(loaded), "warm_attributes", ()))
    before = _las(loaded, wolof["dev"])
    loaded.set_params(warm_start=True).fit(wolof["more"], wolof["dev"])
    assert loaded.get_params()["warm_start"] is True
    assert _las(loaded, wolof["dev"]) > before - 0.05


@pytest.mark.parametrize("name", ["graph1", "hybrid-rtl", "neural"])
def test_a_parser_saved_before_warm_starts_loads_and_warm_fits(name: str, wolof: dict[str, list[Sentence]],
                                                               tmp_path: Path) -> None:
    parser = _small(name).fit(wolof["base"], wolof["dev"])
    for attribute in ("warm_start", "warm_epochs", "raw_weights_", "n_steps_", "optimizer_"):
        parser.__dict__.pop(attribute, None)  # as pickled by the previous version
    parser.save(tmp_path / "old.model")
    loaded = BaseParser.load(tmp_path / "old.model")
    assert loaded.get_params()["warm_start"] is False
    loaded.set_params(warm_start=True).fit(wolof["more"], wolof["dev"])
    assert len(loaded.predict(wolof["dev"][:3])) == 3


def _epochs(parser: BaseParser) -> int:
    for attribute in ("n_iter_", "epochs_", "n_epochs_"):
        if hasattr(parser, attribute):
            return int(getattr(parser, attribute))
    raise AssertionError("no epoch count")


def _labels(parser: BaseParser) -> set[str]:
    """Labels the parser can output: the labeller's (graph) or the action model's."""
    if hasattr(parser, "labeller_"):
        return set(parser.labeller_.classes_.tolist())
    labels = parser.labels_
    return set(labels.index) if hasattr(labels, "index") and isinstance(labels.index, dict) else set(labels)


def test_train_models_continues_the_members_of_an_earlier_model_directory(
        wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    from parsing.pipeline import load_models, read_manifest, train_models

    names = ["graph1", "eager"]
    params = {name: SMALL[name] for name in names}
    first, second, other = tmp_path / "1", tmp_path / "2", tmp_path / "3"
    train_models(wolof["base"], wolof["dev"], first, names=names, params=params, ensemble="vote-uniform")
    train_models(wolof["more"], wolof["dev"], second, names=names, params=params, ensemble="vote-uniform",
                 warm_from=first)
    manifest = read_manifest(second)
    assert manifest["warm_members"] == names and manifest["warm_from"] == str(first)
    assert all(parser.get_params()["warm_start"] for parser in load_models(second).parsers.values())
    with pytest.raises(FileNotFoundError):
        train_models(wolof["more"], None, other, names=names, params=params, warm_from=tmp_path / "none")
