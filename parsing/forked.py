"""Members parsing side by side in forked processes (``--jobs N``).

Each worker process is forked with the loaded members and the sentences already in memory
(nothing is pickled on the way in); only the parses travel back. :class:`ParserPool` keeps its
forked processes for many calls (a round pre-annotating its pool batch by batch): the members
are forked once, each call's sentences travel in and the parses back.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType

from parsing.base import BaseParser
from parsing.types import Parse, Sentence

__all__ = ["ParserPool", "can_fork", "may_have_children", "parse_forked"]

_FORKED: tuple[Mapping[str, BaseParser], Sequence[Sentence]] | None = None
"""The members and sentences forked workers parse (set only while :func:`parse_forked` runs)."""


def can_fork() -> bool:
    """Whether this platform can fork worker processes."""
    return "fork" in multiprocessing.get_all_start_methods()


def may_have_children() -> bool:
    """Whether this process may start worker processes: the platform forks and it is not a
    daemonic multiprocessing process (a job queue's process worker is one; its children would
    be orphaned when it is stopped, so multiprocessing refuses them)."""
    return can_fork() and not multiprocessing.current_process().daemon


def slowest_first(parsers: Mapping[str, BaseParser], names: Sequence[str]) -> list[str]:
    """``names`` by falling :attr:`~parsing.base.BaseParser.parse_cost` (ties keep their order):
    handing the slow members out first lets the processes finish together.

    Examples:
        >>> from parsing.members import build_member
        >>> names = ["eager", "graph1", "hybrid", "graph2"]
        >>> slowest_first({name: build_member(name) for name in names}, names)
        ['graph2', 'graph1', 'eager', 'hybrid']
    """
    return sorted(names, key=lambda name: -parsers[name].parse_cost)


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
            parsed = dict(pool.map(_parse_in_child, slowest_first(parsers, names)))
    finally:
        _FORKED = None
    return {name: parsed[name] for name in names}


_POOLED: Mapping[str, BaseParser] | None = None
"""The members of a :class:`ParserPool`, in each of its forked processes."""


def _install(parsers: Mapping[str, BaseParser]) -> None:
    global _POOLED
    _POOLED = parsers


def _parse_pooled(name: str, sentences: Sequence[Sentence]) -> list[Parse]:
    assert _POOLED is not None, "only called in processes forked by ParserPool"
    return _POOLED[name].predict(sentences)


class ParserPool:
    """``processes`` forked processes holding ``parsers``, for many :meth:`parse` calls.

    Use it as a context manager (the processes end on exit). The members are forked with the
    process (copy-on-write, never pickled); sentences and parses are pickled per call.

    Raises:
        ValueError: fewer than 2 processes, or a process that may not fork children
            (:func:`may_have_children`).
    """

    def __init__(self, parsers: Mapping[str, BaseParser], processes: int) -> None:
        if processes < 2:
            raise ValueError(f"a parser pool needs at least 2 processes, not {processes}")
        if not may_have_children():
            raise ValueError("this process cannot fork worker processes (a platform without fork, "
                             "or a daemonic process such as a queue's process worker)")
        self.parsers = parsers
        self.processes = processes
        context = multiprocessing.get_context("fork")
        self._executor = ProcessPoolExecutor(max_workers=processes, mp_context=context,
                                             initializer=_install, initargs=(parsers,))

    def parse(self, prepared: Sequence[Sentence], names: Sequence[str]) -> dict[str, list[Parse]]:
        """Each named member's parses of ``prepared`` (sentences as the members see them)."""
        unknown = [name for name in names if name not in self.parsers]
        if unknown:
            raise ValueError(f"the pool has no parser {', '.join(unknown)}")
        sentences = list(prepared)
        futures = {name: self._executor.submit(_parse_pooled, name, sentences)
                   for name in slowest_first(self.parsers, names)}
        return {name: future.result() for name, future in futures.items()}

    def close(self) -> None:
        """End the processes (waiting for any parse under way)."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ParserPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
