"""Fitting the members of a model directory one by one, wherever they run.

:class:`MemberJob` says what to fit (member name, trees, output path, settings, a model to
continue); :func:`fit_member` fits and saves one. A *member runner* (``MemberRunner``) takes the
jobs of a round and yields ``(name, seconds, continued)`` as members finish, in any order:
:func:`train_models <parsing.pipeline.train_models>` runs them one after another by default,
:func:`pool_runner` in local processes, and a caller may pass its own (the web app's job queue
spreads them over worker processes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parsing.base import BaseParser
from parsing.members import build_member, member_seed
from parsing.persist import ModelFormatError, load_model
from parsing.runners import in_processes, sequential
from parsing.types import Sentence

Fitted = tuple[str, float, bool]
"""``(member name, training seconds, continued from a warm model)``."""


@dataclass(frozen=True)
class MemberJob:
    """One member to fit on ``train`` (tuned on ``dev``) and save at ``path``."""

    name: str
    train: Sequence[Sentence]
    dev: Sequence[Sentence] | None
    path: Path
    random_state: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    warm: Path | None = None
    """A saved model of the same member to continue from (:func:`warm_member`)."""


MemberRunner = Callable[[Sequence[MemberJob]], Iterator[Fitted]]
"""Fits every job and yields each one's :data:`Fitted` as it finishes."""


def warm_member(path: Path | None) -> BaseParser | None:
    """The fitted member saved at ``path``, set to continue training (``warm_start=True``), or
    None when there is no such file, the file is of an earlier format (a pickled model) or the
    member cannot continue (it is then trained cold)."""
    if path is None or not path.is_file():
        return None
    try:
        parser: BaseParser = load_model(path, BaseParser, warm=True)
    except ModelFormatError:
        return None
    if "warm_start" not in parser.get_params():
        return None
    parser.set_params(warm_start=True)
    return parser


def fit_member(job: MemberJob) -> Fitted:
    """Fit one member (continuing ``job.warm`` when it can) and save it."""
    started = time.perf_counter()
    parser = warm_member(job.warm)
    continued = parser is not None
    if parser is None:
        seed = member_seed(job.name, job.random_state)
        parser = build_member(job.name, **{"random_state": seed, **job.params})
    parser.fit(job.train, job.dev)
    parser.save(job.path)
    return job.name, time.perf_counter() - started, continued


in_order: MemberRunner = sequential(fit_member)
"""The default runner: fit the members one after another in this process."""


def pool_runner(processes: int) -> MemberRunner:
    """A runner fitting up to ``processes`` members at once in local processes."""
    return in_processes(fit_member, processes)
