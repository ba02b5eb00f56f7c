"""Library-wide guarantees: no web imports, shared helpers behave."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from parsing.features import Vocabulary, bucket_distance, hash_columns
from parsing.learn import AveragedPerceptron
from parsing.persist import ModelFormatError, load_model, save_model


def test_importing_parsing_loads_no_web_module() -> None:
    code = (
        "import sys, pkgutil, importlib, parsing\n"
        "for m in pkgutil.walk_packages(parsing.__path__, 'parsing.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = {'flask', 'sqlalchemy', 'app', 'werkzeug'} & {n.split('.')[0] for n in sys.modules}\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _library_modules() -> list[str]:
    import parsing

    return sorted(m.name for m in pkgutil.walk_packages(parsing.__path__, "parsing.")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("module", _library_modules())
def test_docstring_examples(module: str) -> None:
    """Every example in the library's docstrings runs and gives what it shows."""
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_hash_columns_is_stable_across_processes() -> None:
    code = "import numpy as np; from parsing.features import hash_columns as h; " \
           "print(h(7, np.array([1, 2, 3]), n_bits=22).tolist())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONHASHSEED": seed, "PATH": ""}, check=True).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert outputs.pop().strip() == str(hash_columns(7, np.array([1, 2, 3]), n_bits=22).tolist())


def test_hash_columns_spreads_and_broadcasts() -> None:
    ids = hash_columns(1, np.arange(1000)[:, None], np.arange(3)[None, :], n_bits=20)
    assert ids.shape == (1000, 3)
    assert ids.min() >= 0 and ids.max() < 2**20
    assert len(np.unique(ids)) > 2990  # collisions are rare
    first, second = (hash_columns(t, np.arange(5), n_bits=20) for t in (1, 2))
    assert not np.array_equal(first, second)


def test_vocabulary_orders_by_frequency_and_cuts_rare() -> None:
    vocab = Vocabulary.build(["b", "a", "a", "c"], min_count=1)
    assert vocab.index == {"a": 1, "b": 2, "c": 3}
    assert Vocabulary.build(["b", "a", "a"], min_count=2).ids(["a", "b"]).tolist() == [1, 0]


def test_bucket_distance_keeps_direction() -> None:
    assert bucket_distance(np.array([-30, -6, 0, 5, 10, 11])).tolist() == [-7, -6, 0, 5, 6, 7]


def test_averaged_perceptron_matches_explicit_average() -> None:
    rng = np.random.default_rng(0)
    model = AveragedPerceptron((6, 2))
    snapshots = []
    for _ in range(20):
        rows = rng.integers(0, 6, size=4)
        cols = rng.integers(0, 2, size=4)
        model.update((rows, cols), rng.normal(size=4))
        snapshots.append(model.weights.copy())
        model.tick()
    assert np.allclose(model.averaged(), np.mean(snapshots, axis=0))


def test_persist_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "m" / "model.bin"
    save_model(Vocabulary({"a": 1, "b": 2}), path)
    assert load_model(path, Vocabulary).index == {"a": 1, "b": 2}
    with pytest.raises(ModelFormatError, match="expected list"):
        load_model(path, list)
    (tmp_path / "junk").write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="not an arcvote model"):
        load_model(tmp_path / "junk")
