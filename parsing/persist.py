"""Saving and loading trained models (taggers, parsers, ensembles).

A model is pickled with a small header naming the format version and the object's class,
so loading a file written by an incompatible version fails with a clear message instead of
an obscure attribute error. Only load model files you or your team produced: unpickling
runs code.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
_MAGIC = "arcvote-model"


class ModelFormatError(ValueError):
    """The file is not an arcvote model, or was written by an incompatible version."""


def save_model(model: object, path: str | Path) -> None:
    """Write ``model`` to ``path`` (parent folders are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"magic": _MAGIC, "version": FORMAT_VERSION, "class": type(model).__qualname__}
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("wb") as handle:
        pickle.dump(header, handle, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
    temporary.replace(path)


def load_model(path: str | Path, expected: type[Any] | None = None) -> Any:
    """Read a model written by :func:`save_model`, checking its header (and class)."""
    with Path(path).open("rb") as handle:
        try:
            header = pickle.load(handle)
        except Exception as error:
            raise ModelFormatError(f"{path}: not an arcvote model file") from error
        if not isinstance(header, dict) or header.get("magic") != _MAGIC:
            raise ModelFormatError(f"{path}: not an arcvote model file")
        if header.get("version") != FORMAT_VERSION:
            raise ModelFormatError(
                f"{path}: model format {header.get('version')}, this version reads {FORMAT_VERSION}"
            )
        model = pickle.load(handle)
    if expected is not None and not isinstance(model, expected):
        raise ModelFormatError(f"{path}: holds a {type(model).__name__}, expected {expected.__name__}")
    return model
