"""Fixtures of the benchmark scripts' tests: the scripts' folder on the import path, the Telugu files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsing.conftest import UD_ROOT

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """``bench/`` on ``sys.path``, as when a script runs (they import their neighbours by name)."""
    monkeypatch.syspath_prepend(str(BENCH))
    return BENCH


@pytest.fixture
def telugu() -> Path:
    """The shared UD_Telugu-MTG folder; the test is skipped without it."""
    folder = UD_ROOT / "UD_Telugu-MTG"
    if not folder.is_dir():
        pytest.skip(f"UD_Telugu-MTG not found under {UD_ROOT}")
    return folder
