"""Saving and loading trained models (parsers, labellers, ensembles) as arrays plus JSON.

No pickle: loading a model file cannot run code, so any worker may load models from a
shared directory, and a file someone tampered with can at worst fail to load.

File format (:data:`FORMAT_VERSION`): one numpy ``.npz`` archive per model, written with
``np.savez_compressed`` and read with ``np.load(..., allow_pickle=False)``. Its ``header``
entry is UTF-8 JSON (as ``uint8``)::

    {"magic": "arcvote-model", "version": 2, "class": "ArcLabeller", "state": STATE}

``STATE`` is the model's attributes (hyperparameters and fitted state), each value encoded by
:mod:`parsing.codec` (JSON for scalars, strings, lists and string-keyed dicts; arrays stored
beside the header under generated names, all-but-empty float arrays as index + value pairs;
nested objects of :data:`~parsing.codec.ALLOWED` classes only). Classes are looked up in that
fixed allow-list: a name in a file is never imported unless the list holds it.

Warm-start state (the raw perceptron weights, the optimiser's moments: a class's
``warm_attributes`` names) is saved, but :func:`load_model` reads it only with
``warm=True``, so a model loaded to parse does not hold it in memory.

Files of the earlier pickled format (version 1) are refused with a message to retrain.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from parsing.codec import ModelFormatError, decode_object, encode_object

FORMAT_VERSION = 2
"""Version of the files :func:`save_model` writes; :func:`load_model` reads only this one."""
_MAGIC = "arcvote-model"
_PICKLE_START = b"\x80"
_ZIP_START = b"PK"

__all__ = ["FORMAT_VERSION", "ModelFormatError", "load_model", "read_header", "save_model"]


def save_model(model: object, path: str | Path) -> None:
    """Write ``model`` (an instance of an allowed class) to ``path`` (parent folders are created).

    The file appears whole or not at all (written beside it, then renamed).

    Raises:
        ModelFormatError: the model holds a value or class the format cannot store.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    encoded = encode_object(model, arrays, where=type(model).__name__)
    header = {"magic": _MAGIC, "version": FORMAT_VERSION, "class": encoded["$object"],
              "state": encoded["state"]}
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]
    temporary.replace(path)


def read_header(path: str | Path) -> dict[str, Any]:
    """The JSON header of a model file (format checked), without reading its arrays.

    Raises:
        ModelFormatError: not a model file of this format (a pickled one: retrain it).
    """
    with _open(path) as data:
        return _header(path, data)


def load_model(path: str | Path, expected: type[Any] | None = None, *, warm: bool = False) -> Any:
    """Read a model written by :func:`save_model`, checking its format (and its class).

    Args:
        expected: the model must be an instance of this class.
        warm: also read the warm-start state (to continue training the model).

    Raises:
        ModelFormatError: not an arcvote model of this format, a pickled model of an earlier
            version, a class outside the allow-list, or not an ``expected``.
    """
    with _open(path) as data:
        header = _header(path, data)
        model = decode_object({"$object": header["class"], "state": header["state"]}, data,
                              where=str(path), warm=warm)
    if expected is not None and not isinstance(model, expected):
        raise ModelFormatError(f"{path}: holds a {type(model).__name__}, expected {expected.__name__}")
    return model


def _open(path: str | Path) -> Any:
    """``np.load`` of ``path`` without pickle, after checking it is a zip archive."""
    with Path(path).open("rb") as handle:
        start = handle.read(2)
    if start[:1] == _PICKLE_START:
        raise ModelFormatError(
            f"{path}: a pickled model of an earlier arcvote version; pickled models are no longer "
            "loaded (loading one could run code): train the model again")
    if start != _ZIP_START:
        raise ModelFormatError(f"{path}: not an arcvote model file")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as error:
        raise ModelFormatError(f"{path}: not a readable arcvote model file ({error})") from error


def _header(path: str | Path, data: Any) -> dict[str, Any]:
    try:
        header = json.loads(bytes(data["header"]).decode("utf-8"))
    except (KeyError, ValueError, UnicodeDecodeError) as error:
        raise ModelFormatError(f"{path}: not an arcvote model file (no readable header)") from error
    if not isinstance(header, dict) or header.get("magic") != _MAGIC:
        raise ModelFormatError(f"{path}: not an arcvote model file")
    if header.get("version") != FORMAT_VERSION:
        raise ModelFormatError(f"{path}: model format {header.get('version')!r}, this version reads "
                               f"{FORMAT_VERSION}: train the model again")
    if not isinstance(header.get("class"), str) or not isinstance(header.get("state"), dict):
        raise ModelFormatError(f"{path}: malformed header")
    return header
