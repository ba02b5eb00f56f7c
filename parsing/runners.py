"""Runners: do a list of independent jobs and yield each one's result, here or in processes.

A round's members (:mod:`parsing.member_fit`) and a tagger's jackknife folds
(:mod:`parsing.tagger.folds`) are both lists of jobs that one function does; these build the
two local runners for any such function (the web app passes a runner of its own that spreads
the jobs over its queue's workers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


def sequential(work: Callable[[Job], Result]) -> Callable[[Sequence[Job]], Iterator[Result]]:
    """A runner doing the jobs one after another in this process, in order."""
    def run(jobs: Sequence[Job]) -> Iterator[Result]:
        for job in jobs:
            yield work(job)
    return run


def in_processes(work: Callable[[Job], Result],
                 processes: int) -> Callable[[Sequence[Job]], Iterator[Result]]:
    """A runner doing up to ``processes`` jobs at once in local processes (``work`` and the
    jobs must pickle); results come in the order of the jobs."""
    def run(jobs: Sequence[Job]) -> Iterator[Result]:
        with ProcessPoolExecutor(max_workers=processes) as pool:
            for future in [pool.submit(work, job) for job in jobs]:
                yield future.result()
    return run
