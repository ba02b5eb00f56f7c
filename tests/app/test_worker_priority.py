"""A job worker runs below the web process's CPU priority, so a round's training leaves the cores
to annotators' saves on a shared machine (issue #31's load test)."""

from __future__ import annotations

import subprocess
import sys

from app.jobs.worker import DEFAULT_NICE


def niceness_after(argument: int) -> int:
    """The niceness a fresh process reports after ``lower_priority(argument)`` (its own, not ours)."""
    code = f"from app.jobs.worker import lower_priority; print(lower_priority({argument}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def test_a_worker_lowers_its_priority_and_zero_leaves_it() -> None:
    base = niceness_after(0)
    assert niceness_after(DEFAULT_NICE) == min(19, base + DEFAULT_NICE) > base
    assert DEFAULT_NICE > 0
