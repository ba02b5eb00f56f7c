"""The tagger's training as separate pieces of work, so they can run anywhere at once.

A predicted-tags model needs a tagger fitted on all of train (tuned on dev) and, for each
jackknife seed, ten taggers fitted on nine folds each that tag the tenth
(:func:`parsing.jackknife.fold_assignment`). Each of those fits is a :class:`TagFoldJob`;
:func:`run_tag_fold` does one. A *fold runner* (``FoldRunner``) takes the jobs and yields
``(job name, tagged held-out sentences)`` as they finish, in any order: :func:`in_order` one
after another here (the default), :func:`pool_runner` in local processes, and a caller may
pass its own (the web app's job queue spreads them over its workers, :mod:`app.jobs.fanout`).
Whichever runs them, the training tags come out the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parsing.jackknife import fold_assignment
from parsing.runners import in_processes, sequential
from parsing.tagger.model import Tagger
from parsing.types import Sentence

FULL = "full"
"""The name of the job fitting the tagger that is kept (on all of train, tuned on dev)."""

TaggedFold = tuple[str, list[Sentence]]
"""``(job name, its held-out sentences as parsers see them with predicted tags)``."""


@dataclass(frozen=True)
class TagFoldJob:
    """Fit a tagger on ``train`` (tuned on ``dev``), save it at ``save_to`` when given, and tag
    ``held_out`` for parsing (:meth:`~parsing.tagger.model.Tagger.tag_for_parsing`)."""

    name: str
    train: Sequence[Sentence]
    held_out: Sequence[Sentence]
    params: Mapping[str, Any] = field(default_factory=dict)
    """:class:`~parsing.tagger.model.Tagger` hyperparameters (``random_state`` included)."""
    dev: Sequence[Sentence] | None = None
    save_to: Path | None = None


FoldRunner = Callable[[Sequence[TagFoldJob]], Iterator[TaggedFold]]
"""Runs every job and yields each one's :data:`TaggedFold` as it finishes."""


def run_tag_fold(job: TagFoldJob) -> TaggedFold:
    """Fit, save (when asked) and tag one job's held-out sentences."""
    tagger = Tagger(**job.params).fit(job.train, job.dev)
    if job.save_to is not None:
        tagger.save(job.save_to)
    return job.name, tagger.tag_for_parsing(job.held_out)


def fold_name(seed: int, fold: int) -> str:
    """The name of fold ``fold`` of jackknife seed ``seed`` (``"seed0-fold3"``)."""
    return f"seed{seed}-fold{fold}"


def tagger_jobs(train: Sequence[Sentence], dev: Sequence[Sentence] | None, *, params: Mapping[str, Any],
                seeds: int, folds: int, random_state: int, save_to: Path) -> list[TagFoldJob]:
    """The :data:`FULL` job (saved at ``save_to``, tags ``dev``), then ``folds`` jobs per seed;
    seed ``k`` assigns sentences to folds with ``random_state + k``. Shape: ``1 + seeds * folds``."""
    jobs = [TagFoldJob(FULL, list(train), list(dev or []), params, dev, save_to)]
    for seed in range(seeds):
        assignment = fold_assignment(len(train), folds, random_state + seed)
        for fold in range(folds):
            jobs.append(TagFoldJob(
                fold_name(seed, fold),
                [train[i] for i in np.flatnonzero(assignment != fold).tolist()],
                [train[i] for i in np.flatnonzero(assignment == fold).tolist()], params))
    return jobs


def assemble_views(train: Sequence[Sentence], tagged: Mapping[str, list[Sentence]], *, seeds: int,
                   folds: int, random_state: int) -> list[list[Sentence]]:
    """Put each seed's tagged folds back in the order of ``train``: ``[train view] * seeds``.

    Raises:
        ValueError: a fold is missing or tagged the wrong number of sentences.
    """
    views: list[list[Sentence]] = []
    for seed in range(seeds):
        assignment = fold_assignment(len(train), folds, random_state + seed)
        view: list[Sentence | None] = [None] * len(train)
        for fold in range(folds):
            positions = np.flatnonzero(assignment == fold).tolist()
            sentences = tagged.get(fold_name(seed, fold))
            if sentences is None or len(sentences) != len(positions):
                got = "nothing" if sentences is None else f"{len(sentences)} sentences"
                raise ValueError(f"{fold_name(seed, fold)} tagged {got}, not {len(positions)}")
            for position, sentence in zip(positions, sentences, strict=True):
                view[position] = sentence
        views.append(view)  # type: ignore[arg-type]  # every position is filled above
    return views


in_order: FoldRunner = sequential(run_tag_fold)
"""The default runner: one job after another in this process."""


def pool_runner(processes: int) -> FoldRunner:
    """A runner doing up to ``processes`` jobs at once in local processes."""
    return in_processes(run_tag_fold, processes)
