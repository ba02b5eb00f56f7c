"""What the ``biaffine`` member's tests share: a tiny network's settings and short real sentences."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.types import Sentence
from tests.parsing.conftest import UD_ROOT

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"
WELSH = UD_ROOT / "UD_Welsh-CCG" / "cy_ccg-ud-train.conllu"

TINY = {"word_dim": 24, "char_dim": 12, "char_hidden": 16, "hidden": 48, "layers": 1, "arc_dim": 48,
        "label_dim": 24, "dropout": 0.0, "word_dropout": 0.0, "batch_size": 8, "learning_rate": 5e-3}
"""A network small enough to overfit a few dozen sentences in seconds."""


def short_sentences(treebank: str, read: int, count: int, longest: int = 9) -> list[Sentence]:
    """The first ``count`` sentences of at most ``longest`` words among the first ``read`` of
    ``treebank``'s train file (``AFRIKAANS`` or ``WELSH``); the test is skipped without it."""
    path = {"af": AFRIKAANS, "cy": WELSH}[treebank]
    if not path.is_file():
        pytest.skip(f"{path.parent.name} not found under {UD_ROOT}")
    return [s for s in load_sentences(path)[:read] if len(s) <= longest][:count]


def import_without_torch(modules: str, member: str) -> str:
    """What a Python process without PyTorch prints when it imports ``modules`` (comma-separated)
    and then builds ``member``: the member's ImportError message."""
    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ImportError('no torch here')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            f"import {modules}\n"
            "from parsing.members import build_member\n"
            f"try:\n    build_member({member!r})\nexcept ImportError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[2])
    return result.stdout


def assert_seeded(parser_class: Any, settings: dict[str, Any], train: list[Sentence],
                  dev: list[Sentence]) -> None:
    """Two fits with one seed give the same weights (``weights_``), a fit with another seed others."""
    first = parser_class(**settings, random_state=5).fit(train, dev)
    second = parser_class(**settings, random_state=5).fit(train, dev)
    other = parser_class(**settings, random_state=6).fit(train, dev)
    assert first.weights_.keys() == second.weights_.keys()
    assert all(np.array_equal(first.weights_[k], second.weights_[k]) for k in first.weights_)
    assert not all(np.array_equal(first.weights_[k], other.weights_[k]) for k in first.weights_)


def saved_without_pickle(parser: Any, path: Path) -> Any:
    """Save ``parser`` to ``path``, check the file is an npz of plain arrays naming its class, and
    load it back (its network not yet rebuilt)."""
    parser.save(path)
    with zipfile.ZipFile(path) as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(bytes(data["header"]).decode("utf-8"))
        assert header["class"] == type(parser).__name__
        assert all(data[name].dtype.kind != "O" for name in data.files)
    loaded = type(parser).load(path)
    assert "network_cache" not in vars(loaded)
    return loaded


def assert_keeps_forced_arcs(parser: Any, sentences: list[Sentence], label: str) -> None:
    """Two random arcs per sentence of three words or more (arcs of a random tree over its words,
    so non-projective ones too), the first with ``label``: every parse under them is a tree with
    one ROOT child that keeps them; a self-loop is refused naming its sentence."""
    from parsing.constraints import Constraints
    from parsing.trees import is_tree

    rng = np.random.default_rng(0)
    chosen = [s for s in sentences if len(s) >= 3]
    constraints = []
    for sentence in chosen:
        order = rng.permutation(np.arange(1, len(sentence) + 1))
        heads = np.zeros(len(sentence) + 1, dtype=int)
        for i in range(1, len(order)):
            heads[order[i]] = order[rng.integers(0, i)]
        words = rng.choice(np.arange(1, len(sentence) + 1), size=2, replace=False)
        constraints.append(Constraints({int(w): int(heads[w]) for w in words}, {int(words[0]): label}))
    parses = parser.predict_constrained(chosen, constraints)
    for parse, forced in zip(parses, constraints, strict=True):
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads[1:] == 0) == 1
        assert forced.satisfied_by(parse.heads, parse.deprels)
    with pytest.raises(ValueError, match="sentence 0"):
        parser.predict_constrained(chosen[:1], [Constraints({1: 1})])


def assert_anneals(parser_class: Any, settings: dict[str, Any], train: list[Sentence], dev: list[Sentence],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``anneal=3`` once the first phase ends, by its epoch limit (2) or by patience (1): a fresh
    optimizer at a tenth of the rate, at most three more dev scores, the best epoch of either
    phase kept, and the first phase as with ``anneal=0``."""
    import torch

    rates: list[float] = []
    adam = torch.optim.Adam

    def recording(parameters: Any, lr: float, **options: Any) -> torch.optim.Adam:
        rates.append(lr)
        return adam(parameters, lr=lr, **options)

    monkeypatch.setattr(torch.optim, "Adam", recording)
    for max_epochs, patience, stop in ((2, 5, {"max_epochs", "epochs"}), (30, 1, {"patience"})):
        limits = {**settings, "max_epochs": max_epochs, "patience": patience, "random_state": 1}
        rates.clear()
        plain = parser_class(**limits, anneal=0).fit(train, dev)
        first = len(plain.history_["dev_las"])
        assert plain.history_["stopped"] in stop and plain.history_["annealed_after"] == 0 and first < 27
        annealed = parser_class(**limits, anneal=3).fit(train, dev)
        rate = annealed.learning_rate
        assert rates == [pytest.approx(rate)] * 2 + [pytest.approx(rate / 10)]
        history = annealed.history_
        assert history["annealed_after"] == first and history["dev_las"][:first] == plain.history_["dev_las"]
        assert first < len(history["dev_las"]) <= first + 3
        assert history["best_epoch"] == int(np.argmax(history["dev_las"])) + 1
    with pytest.raises(ValueError, match="anneal is a number of epochs"):
        parser_class(**settings, anneal=-1).fit(train, dev)
