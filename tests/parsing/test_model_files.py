"""Model files without pickle (:mod:`parsing.persist`): every member, the labeller and every
ensemble method survive a save and load with identical parses; foreign files are refused.

Small real data (UD Wolof: 80 training sentences, 25 to parse; few epochs, small hash spaces).
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.base import BaseParser
from parsing.conllu_io import load_sentences
from parsing.ensemble.base import Ensemble
from parsing.ensemble.registry import METHODS, fit_ensemble, load_ensemble, save_ensemble
from parsing.labeller import ArcLabeller
from parsing.member_fit import warm_member
from parsing.members import MEMBERS, build_member
from parsing.persist import ModelFormatError, load_model, read_header, save_model
from parsing.types import Parse, Sentence

FAST: dict[str, dict[str, Any]] = {
    "graph1": {"max_iter": 2, "n_bits": 16},
    "graph2": {"max_iter": 2, "n_bits": 16},
    **{name: {"epochs": 2, "n_bits": 16} for name in ("eager", "eager-rtl", "swap", "swap-rtl",
                                                      "hybrid", "hybrid-rtl")},
    "neural": {"max_epochs": 2, "hidden": 32, "word_dim": 16, "beam_size": 2},
}


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> dict[str, list[Sentence]]:
    folder = ud_root / "UD_Wolof-WTB"
    return {"train": load_sentences(folder / "wo_wtb-ud-train.conllu")[:80],
            "dev": load_sentences(folder / "wo_wtb-ud-dev.conllu")[:25]}


@pytest.fixture(scope="module")
def fitted(wolof: dict[str, list[Sentence]]) -> dict[str, BaseParser]:
    return {name: build_member(name, **FAST[name]).fit(wolof["train"], wolof["dev"]) for name in MEMBERS}


def _same(first: list[Parse], second: list[Parse]) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        assert a.heads.tolist() == b.heads.tolist()
        assert a.deprels == b.deprels
        np.testing.assert_array_equal(a.arc_scores, b.arc_scores)


@pytest.mark.parametrize("name", list(MEMBERS))
def test_every_member_round_trips_with_identical_parses(
        name: str, fitted: dict[str, BaseParser], wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    parser = fitted[name]
    path = tmp_path / f"{name}.model"
    parser.save(path)
    assert read_header(path)["class"] == type(parser).__name__
    with zipfile.ZipFile(path) as archive:  # arrays and JSON only: nothing numpy would unpickle
        assert all(entry.endswith(".npy") for entry in archive.namelist())
    loaded = type(parser).load(path)
    _same(parser.predict(wolof["dev"]), loaded.predict(wolof["dev"]))
    assert loaded.get_params() == parser.get_params()
    for attribute in getattr(type(parser), "warm_attributes", ()):  # read only for warm starts
        assert hasattr(parser, attribute) and not hasattr(loaded, attribute)
        assert hasattr(load_model(path, BaseParser, warm=True), attribute)


@pytest.mark.parametrize("name", ["eager", "swap-rtl", "hybrid"])
def test_compact_transition_tables_parse_exactly_as_the_dense_ones(
        name: str, fitted: dict[str, BaseParser], wolof: dict[str, list[Sentence]]) -> None:
    from sklearn.base import clone

    compact = fitted[name]
    dense = clone(compact)
    dense.__dict__.update(compact.__dict__)
    dense.rows_, dense.weights_ = compact.rows_.dense(), compact.weights_.dense()  # type: ignore[attr-defined]
    assert isinstance(dense.weights_, np.ndarray) and dense.weights_.dtype == np.float32  # type: ignore[attr-defined]
    _same(dense.predict(wolof["dev"]), compact.predict(wolof["dev"]))
    one_by_one = [compact._parse(s) for s in wolof["dev"][:8]]  # type: ignore[attr-defined]
    _same([dense._parse(s) for s in wolof["dev"][:8]], one_by_one)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["graph1", "hybrid", "neural"])
def test_a_warm_start_from_a_file_continues_like_one_from_memory(
        name: str, fitted: dict[str, BaseParser], wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    path = tmp_path / f"{name}.model"
    fitted[name].save(path)
    from_file = warm_member(path)
    assert from_file is not None
    in_memory = load_model(path, BaseParser, warm=True).set_params(warm_start=True)
    more = wolof["train"] + wolof["dev"][:10]
    _same(from_file.fit(more).predict(wolof["dev"]), in_memory.fit(more).predict(wolof["dev"]))


def test_the_labeller_round_trips(wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    labeller = ArcLabeller().fit(wolof["train"])
    save_model(labeller, tmp_path / "labeller.model")
    loaded = load_model(tmp_path / "labeller.model", ArcLabeller)
    after = loaded.predict_proba(wolof["dev"])
    for one, again in zip(labeller.predict_proba(wolof["dev"]), after, strict=True):
        np.testing.assert_array_equal(one, again)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_ensemble_method_round_trips(
        method: str, fitted: dict[str, BaseParser], wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    members = {name: fitted[name] for name in ("graph1", "graph2", "eager", "hybrid", "neural")}
    params = {"max_iter": 2, "n_bits": 16} if method == "stack" else None
    ensemble, names = fit_ensemble(method, members, wolof["train"], wolof["dev"][:12], params=params)
    save_ensemble(ensemble, names, tmp_path / "ensemble.model")
    loaded = load_ensemble(tmp_path / "ensemble.model", members)
    assert isinstance(loaded, Ensemble) and type(loaded) is type(ensemble)
    parses = [members[name].predict(wolof["dev"]) for name in names]
    _same(ensemble.combine_all(wolof["dev"], parses), loaded.combine_all(wolof["dev"], parses))


def test_the_meta_classifier_stores_the_linear_svm_as_arrays(
        fitted: dict[str, BaseParser], wolof: dict[str, list[Sentence]], tmp_path: Path) -> None:
    members = {name: fitted[name] for name in ("graph1", "eager", "hybrid")}
    ensemble, names = fit_ensemble("meta-svm", members, wolof["train"], wolof["dev"][:12])
    save_ensemble(ensemble, names, tmp_path / "meta.model")
    state = read_header(tmp_path / "meta.model")["state"]
    assert state["classifier_"]["$object"] == "LinearSVC"
    assert {"coef_", "intercept_", "classes_"} <= set(state["classifier_"]["state"])


def test_a_pickled_model_is_refused_with_a_message_to_retrain(tmp_path: Path) -> None:
    path = tmp_path / "old.model"
    with path.open("wb") as handle:  # the version-1 layout: a pickled header, then the model
        pickle.dump({"magic": "arcvote-model", "version": 1, "class": "ArcLabeller"}, handle)
        pickle.dump(ArcLabeller(), handle)
    with pytest.raises(ModelFormatError, match="pickled model .* train the model again"):
        load_model(path)
    (tmp_path / "junk").write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="not an arcvote model"):
        load_model(tmp_path / "junk")


def _npz(path: Path, header: dict[str, Any], **arrays: Any) -> None:
    raw = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with path.open("wb") as handle:
        np.savez(handle, header=raw, **arrays)


def test_an_unknown_class_or_an_object_array_is_refused(tmp_path: Path) -> None:
    header = {"magic": "arcvote-model", "version": 2, "class": "Popen", "state": {}}
    _npz(tmp_path / "popen.model", header)
    with pytest.raises(ModelFormatError, match="class 'Popen' is not one a model file may hold"):
        load_model(tmp_path / "popen.model")
    nested = {**header, "class": "Vocabulary", "state": {"index": {"$object": "os.system", "state": {}}}}
    _npz(tmp_path / "nested.model", nested)
    with pytest.raises(ModelFormatError, match="'os.system' is not one"):
        load_model(tmp_path / "nested.model")
    hidden = {**header, "class": "Vocabulary", "state": {"index": {"$array": "a0"}}}
    _npz(tmp_path / "object.model", hidden, a0=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ModelFormatError, match="cannot be read without pickle"):
        load_model(tmp_path / "object.model")
    with pytest.raises(ModelFormatError, match="expected ArcLabeller"):
        save_model(build_member("graph1"), tmp_path / "g.model")
        load_model(tmp_path / "g.model", ArcLabeller)


def test_values_the_format_cannot_hold_are_refused_on_save(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match="cannot be saved"):
        save_model({"w": 1}, tmp_path / "dict.model")
    labeller = ArcLabeller()
    labeller.callback_ = print
    with pytest.raises(ModelFormatError, match="callback_"):
        save_model(labeller, tmp_path / "labeller.model")
    assert not (tmp_path / "labeller.model").exists()


def test_a_warm_start_from_a_pickled_model_trains_cold(tmp_path: Path) -> None:
    path = tmp_path / "old.model"
    with path.open("wb") as handle:
        pickle.dump({"magic": "arcvote-model", "version": 1, "class": "FirstOrderParser"}, handle)
        pickle.dump(build_member("graph1"), handle)
    assert warm_member(path) is None


def test_the_command_line_refuses_an_old_pickled_model_directory(
        tmp_path: Path, ud_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parsing.cli import main

    model = tmp_path / "old"
    (model / "parsers").mkdir(parents=True)
    manifest = {"tags": "gold", "parsers": ["graph1"]}
    (model / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with (model / "parsers" / "graph1.model").open("wb") as handle:
        pickle.dump({"magic": "arcvote-model", "version": 1, "class": "FirstOrderParser"}, handle)
        pickle.dump(build_member("graph1"), handle)
    dev = ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu"
    status = main(["parse", "--model", str(model), "--input", str(dev),
                   "--output", str(tmp_path / "out.conllu"), "--ensemble", "none"])
    assert status == 2 and "train the model again" in capsys.readouterr().err
