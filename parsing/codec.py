"""Model state as JSON plus named arrays: the encoding :mod:`parsing.persist` writes.

A value is encoded as:

- ``None``, ``bool``, ``int``, ``float``, ``str`` (numpy scalars become these): itself;
- a list: a JSON list of encoded values; a tuple: ``{"$tuple": [...]}``;
- a dict with string keys: ``{"$dict": {key: value}}``;
- a numpy array of numbers, booleans or strings: ``{"$array": NAME}``, the array stored under
  ``NAME``; a float array with under a third of its entries non-zero (hashed weight tables,
  most of whose buckets training never touched) is stored as ``NAME.index`` (flat positions,
  ``int32``) and ``NAME.values``: ``{"$sparse": NAME, "shape": [...], "dtype": "float32"}``,
  and read back dense and identical;
- an object of a class named in :data:`ALLOWED`: ``{"$object": NAME, "state": {attribute:
  value}}``, its dataclass fields (those its constructor takes: derived ones are rebuilt) or
  its ``__dict__`` (caches, attributes ending in ``_cache``, are left out).

Anything else (object arrays, functions, other classes) cannot be saved. Decoding looks class
names up in :data:`ALLOWED` only and rebuilds objects without calling their ``__init__``
(dataclasses through their constructor).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

Arrays = dict[str, np.ndarray[Any, Any]]

ALLOWED: dict[str, str] = {
    "FirstOrderParser": "parsing.graph.first_order",
    "SecondOrderParser": "parsing.graph.second_order",
    "TransitionParser": "parsing.transition.parser",
    "ArcEagerParser": "parsing.transition.parser",
    "ArcSwapParser": "parsing.transition.parser",
    "ArcHybridParser": "parsing.transition.parser",
    "SparseRows": "parsing.transition.compact",
    "BucketRows": "parsing.transition.compact",
    "NeuralTransitionParser": "parsing.neural.parser",
    "ActionSpace": "parsing.neural.search",
    "ISBNParser": "parsing.isbn.parser",
    "BiaffineParser": "parsing.biaffine.member",
    "LSTMTransitionParser": "parsing.lstm_transition.member",
    "ISBNEncoder": "parsing.isbn.encoding",
    "Adam": "parsing.neural.network",
    "ArcLabeller": "parsing.labeller",
    "TokenEncoder": "parsing.graph.templates",
    "Vocabulary": "parsing.features",
    "ClusterLexicon": "parsing.clusters.lexicon",
    "MetaTable": "parsing.meta.table",
    "ArcVoting": "parsing.ensemble.voting",
    "FuzzyPosVoting": "parsing.ensemble.fuzzy",
    "ScoreSum": "parsing.ensemble.score_sum",
    "MetaClassifier": "parsing.ensemble.meta_classifier",
    "MinimumBayesRisk": "parsing.ensemble.mbr",
    "Stacking": "parsing.ensemble.stacking",
    "Reranker": "parsing.rerank.reranker",
    "RerankedNeuralParser": "parsing.rerank.member",
    "RerankedISBNParser": "parsing.rerank.member",
    "StackedParser": "parsing.ensemble.stacking",
    "ArcDetector": "parsing.detect.model",
    "TreebankCounts": "parsing.detect.counts",
    "BoostedTrees": "parsing.detect.boosting",
    "LinearSVC": "sklearn.svm",
    "SVC": "sklearn.svm",
}
"""The classes a model file may hold: class name → the module defining it."""

SPARSE_BELOW = 1 / 3
"""A float array with fewer non-zero entries than this share is stored as index + value."""


class ModelFormatError(ValueError):
    """The file is not an arcvote model, was written by an incompatible version, or holds
    something the format does not allow."""


def allowed_class(name: str, where: str) -> type[Any]:
    """The class ``name`` of :data:`ALLOWED`, imported from its fixed module.

    Raises:
        ModelFormatError: ``name`` is not in the allow-list.
    """
    module = ALLOWED.get(name)
    if module is None:
        raise ModelFormatError(f"{where}: class {name!r} is not one a model file may hold")
    cls: type[Any] = getattr(importlib.import_module(module), name)
    return cls


def encode_object(obj: object, arrays: Arrays, *, where: str) -> dict[str, Any]:
    """``{"$object": class name, "state": {...}}`` for ``obj``; its arrays go into ``arrays``.

    Raises:
        ModelFormatError: ``obj``'s class (or a value inside it) cannot be stored.
    """
    name = type(obj).__name__
    if ALLOWED.get(name) is None or allowed_class(name, where) is not type(obj):
        raise ModelFormatError(f"{where}: a {type(obj).__qualname__} cannot be saved in a model file")
    if dataclasses.is_dataclass(obj):
        attributes = {field.name: getattr(obj, field.name) for field in dataclasses.fields(obj) if field.init}
    else:
        attributes = {key: value for key, value in vars(obj).items() if not key.endswith("_cache")}
    state = {key: encode_value(value, arrays, where=f"{where}.{key}") for key, value in attributes.items()}
    return {"$object": name, "state": state}


def encode_value(value: Any, arrays: Arrays, *, where: str) -> Any:
    """The JSON form of ``value`` (module docstring); arrays are added to ``arrays``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return value.item()
    if isinstance(value, list):
        return [encode_value(item, arrays, where=f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(item, arrays, where=f"{where}[{i}]") for i, item in enumerate(value)]}
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise ModelFormatError(f"{where}: a dict with keys other than strings cannot be saved")
        return {"$dict": {key: encode_value(item, arrays, where=f"{where}[{key!r}]")
                          for key, item in value.items()}}
    if isinstance(value, np.ndarray):
        return _encode_array(value, arrays, where=where)
    return encode_object(value, arrays, where=where)


def _encode_array(array: np.ndarray[Any, Any], arrays: Arrays, *, where: str) -> dict[str, Any]:
    if array.dtype.kind not in "biufcSU":
        raise ModelFormatError(f"{where}: an array of {array.dtype} cannot be saved")
    name = f"a{len(arrays)}"
    if array.dtype.kind == "f" and array.size > 64 and np.count_nonzero(array) < SPARSE_BELOW * array.size:
        flat = array.reshape(-1)
        index = np.flatnonzero(flat)
        arrays[f"{name}.index"] = index.astype(np.int32 if array.size < 2**31 else np.int64)
        arrays[f"{name}.values"] = flat[index]
        return {"$sparse": name, "shape": list(array.shape), "dtype": array.dtype.str}
    arrays[name] = array
    return {"$array": name}


def decode_object(encoded: Mapping[str, Any], data: Mapping[str, Any], *, where: str,
                  warm: bool = True) -> Any:
    """The object :func:`encode_object` encoded; ``data`` maps array names to arrays.

    Attributes named by the class's ``warm_attributes`` are skipped unless ``warm``.

    Raises:
        ModelFormatError: an unknown class, a missing array, or a malformed value.
    """
    cls = allowed_class(str(encoded.get("$object")), where)
    state = encoded.get("state")
    if not isinstance(state, dict):
        raise ModelFormatError(f"{where}: malformed object state")
    skipped = () if warm else tuple(getattr(cls, "warm_attributes", ()))
    values = {key: decode_value(value, data, where=f"{where}.{key}")
              for key, value in state.items() if key not in skipped}
    if dataclasses.is_dataclass(cls):
        try:
            return cls(**values)
        except TypeError as error:
            raise ModelFormatError(f"{where}: {error}") from error
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def decode_value(value: Any, data: Mapping[str, Any], *, where: str) -> Any:
    """The value :func:`encode_value` encoded."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [decode_value(item, data, where=f"{where}[{i}]") for i, item in enumerate(value)]
    if not isinstance(value, dict) or len(value) == 0:
        raise ModelFormatError(f"{where}: malformed value")
    if "$object" in value:
        return decode_object(value, data, where=where)
    if "$tuple" in value:
        items = enumerate(value["$tuple"])
        return tuple(decode_value(item, data, where=f"{where}[{i}]") for i, item in items)
    if "$dict" in value:
        entries = value["$dict"].items()
        return {str(key): decode_value(item, data, where=f"{where}[{key!r}]") for key, item in entries}
    if "$array" in value:
        return _read(data, str(value["$array"]), where)
    if "$sparse" in value:
        name = str(value["$sparse"])
        dense = np.zeros(tuple(int(n) for n in value["shape"]), dtype=np.dtype(str(value["dtype"])))
        dense.reshape(-1)[_read(data, f"{name}.index", where)] = _read(data, f"{name}.values", where)
        return dense
    raise ModelFormatError(f"{where}: malformed value")


def _read(data: Mapping[str, Any], name: str, where: str) -> np.ndarray[Any, Any]:
    try:
        array: np.ndarray[Any, Any] = data[name]
    except KeyError:
        raise ModelFormatError(f"{where}: the file has no array {name!r}") from None
    except ValueError as error:  # an object array: numpy refuses it without pickle
        raise ModelFormatError(f"{where}: array {name!r} cannot be read without pickle") from error
    return array
