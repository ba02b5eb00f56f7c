"""Storage of :mod:`parsing.tagger.model` models: one ``.npz`` file, arrays plus a JSON header.

No pickle: loading a model file cannot run code, so models uploaded by users are safe to
load. The header carries :data:`FORMAT_VERSION`, the caller's fields (the tagger's
parameters, tag dictionary, ...) and, per predicted column, what rebuilds its model.
Feature weights are stored for their non-zero rows only.

Conventions: position 0 (ROOT) is never tagged, so nothing here has a ROOT row. Row 0 of a
weight array is the unseen feature and stays zero; ``feature_keys`` has shape
``(n_features,)`` and every weight array ``n_features + 1`` rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from parsing.tagger.features import Keys
from parsing.tagger.sequence import FeatsModel, SequenceModel

FORMAT_VERSION = 1
"""Version of the file :meth:`Tagger.save` writes; :meth:`Tagger.load` refuses others."""


def write_model(path: str | Path, fields: Mapping[str, object], feature_keys: Keys,
                models: Mapping[str, SequenceModel | FeatsModel]) -> None:
    """Write ``feature_keys`` and ``models`` to ``path``, with ``fields`` in the header.

    The header is ``{"format_version": ..., **fields, "columns": {...}}``.

    Examples:
        >>> import tempfile
        >>> model = SequenceModel(["NOUN"], np.ones((2, 1)), np.zeros((2, 1)), np.zeros((2, 2, 1)))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     write_model(f"{folder}/m.npz", {"note": "x"}, np.array([7], dtype=np.uint64),
        ...                 {"upos": model})
        ...     header, keys, models = read_model(f"{folder}/m.npz")
        >>> header["note"], keys.tolist(), models["upos"].weights.tolist()
        ('x', [7], [[1.0], [1.0]])
    """
    header: dict[str, object] = {"format_version": FORMAT_VERSION, **fields, "columns": {}}
    arrays: dict[str, NDArray[np.generic]] = {"feature_keys": feature_keys}
    column_info: dict[str, object] = {}
    for name, model in models.items():
        used = np.flatnonzero(np.any(model.weights != 0, axis=1))
        arrays[f"{name}.rows"] = used
        arrays[f"{name}.weights"] = model.weights[used]
        if isinstance(model, SequenceModel):
            column_info[name] = {"labels": model.labels}
            arrays[f"{name}.bigram"] = model.bigram
            arrays[f"{name}.trigram"] = model.trigram
        else:
            column_info[name] = {"categories": model.categories, "values": model.values}
    header["columns"] = column_info
    arrays["header"] = np.array(json.dumps(header))
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]


def read_model(
    path: str | Path,
) -> tuple[dict[str, Any], Keys, dict[str, SequenceModel | FeatsModel]]:
    """Read what :func:`write_model` wrote: the header, the feature keys and the models.

    Raises:
        ValueError: the file was written by an incompatible version.
    """
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(str(data["header"]))
        if header.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{path}: tagger format {header.get('format_version')!r}, "
                             f"expected {FORMAT_VERSION}")
        feature_keys = data["feature_keys"]
        models: dict[str, SequenceModel | FeatsModel] = {}
        for name, info in header["columns"].items():
            weights = np.zeros((len(feature_keys) + 1, data[f"{name}.weights"].shape[1]))
            weights[data[f"{name}.rows"]] = data[f"{name}.weights"]
            if "labels" in info:
                models[name] = SequenceModel(
                    info["labels"], weights, data[f"{name}.bigram"], data[f"{name}.trigram"])
            else:
                models[name] = FeatsModel(info["categories"], info["values"], weights)
    return header, feature_keys, models
