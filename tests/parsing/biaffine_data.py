"""What the ``biaffine`` member's tests share: a tiny network's settings and short real sentences."""

from __future__ import annotations

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
