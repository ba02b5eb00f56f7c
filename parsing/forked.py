"""Members parsing side by side in forked processes (``--jobs N``).

Each worker process is forked with the loaded members and the sentences already in memory
(nothing is pickled on the way in); only the parses travel back.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

from parsing.base import BaseParser
from parsing.types import Parse, Sentence

__all__ = ["can_fork", "parse_forked"]

_FORKED: tuple[Mapping[str, BaseParser], Sequence[Sentence]] | None = None
"""The members and sentences forked workers parse (set only while :func:`parse_forked` runs)."""


def can_fork() -> bool:
    """Whether this platform can fork worker processes."""
    return "fork" in multiprocessing.get_all_start_methods()


def _parse_in_child(name: str) -> tuple[str, list[Parse]]:
    assert _FORKED is not None, "only called in workers forked by parse_forked"
    parsers, prepared = _FORKED
    return name, parsers[name].predict(prepared)


def parse_forked(parsers: Mapping[str, BaseParser], prepared: Sequence[Sentence], names: Sequence[str],
                 jobs: int) -> dict[str, list[Parse]]:
    """Each named member's parses of ``prepared``, members spread over ``jobs`` forked processes."""
    global _FORKED
    _FORKED = (parsers, prepared)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(jobs, len(names)), mp_context=context) as pool:
            parsed = dict(pool.map(_parse_in_child, names))
    finally:
        _FORKED = None
    return {name: parsed[name] for name in names}
