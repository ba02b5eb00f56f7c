"""Shared fixtures for the parsing library's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

UD_ROOT = Path(os.environ.get("ARCVOTE_UD_ROOT") or Path(__file__).resolve().parents[3] / "shared" / "ud")
"""``../shared/ud`` beside the repository, or ``$ARCVOTE_UD_ROOT`` (a git worktree elsewhere)."""


@pytest.fixture(scope="session")
def ud_root() -> Path:
    """The read-only UD treebanks beside the repository (``../shared/ud``)."""
    if not UD_ROOT.is_dir():
        pytest.skip(f"UD treebanks not found at {UD_ROOT} (../shared/ud beside the repo)")
    return UD_ROOT
