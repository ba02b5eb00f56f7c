"""Fixtures shared by every test package (keep generic; app fixtures live in tests/app)."""

from __future__ import annotations

from pathlib import Path

import pytest

UD_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "ud"
"""Real UD treebanks beside the repository (``../shared/ud``); never copied into it."""


@pytest.fixture(scope="session")
def ud_dir() -> Path:
    """The ``../shared/ud`` folder; tests using it are skipped (with the reason) if absent."""
    if not UD_DIR.is_dir():
        pytest.skip(f"UD treebanks not found at {UD_DIR.resolve()} (expected ../shared/ud)")
    return UD_DIR
