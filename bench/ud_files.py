"""Where the benchmarks find the shared UD treebanks, and a treebank folder's split files."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UD = Path(os.environ.get("ARCVOTE_UD_ROOT") or REPO.parent / "shared" / "ud")
"""``ARCVOTE_UD_ROOT``, else ``../shared/ud`` beside the repository."""


def split_files(treebank: Path) -> tuple[Path, Path | None, Path]:
    """(train, dev or None, test) of a UD treebank folder."""
    train = next(treebank.glob("*-ud-train.conllu"))
    dev = next(treebank.glob("*-ud-dev.conllu"), None)
    test = next(treebank.glob("*-ud-test.conllu"))
    return train, dev, test
