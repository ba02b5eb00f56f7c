"""The tagger's fits as separate jobs (:mod:`parsing.tagger.folds`): whichever runner does them,
in whatever order, the training tags are the jackknifed tags of one process."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from parsing.conllu_io import load_sentences
from parsing.jackknife import jackknife_tags
from parsing.tagger.folds import (
    FULL,
    TagFoldJob,
    TaggedFold,
    assemble_views,
    fold_name,
    pool_runner,
    run_tag_fold,
    tagger_jobs,
)
from parsing.tagger.model import Tagger
from parsing.tagger.training import train_tagger
from parsing.tagger.view import parser_view
from parsing.types import Sentence

PARAMS = {"max_iter": 2}


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> list[Sentence]:
    return load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:70]


def upos(views: Sequence[Sequence[Sentence]]) -> list[list[list[str]]]:
    return [[list(s.upos) for s in view] for view in views]


def backwards(jobs: Sequence[TagFoldJob]) -> Iterator[TaggedFold]:
    """A runner finishing the jobs last to first, as a queue's workers may."""
    for job in reversed(jobs):
        yield run_tag_fold(job)


def test_jobs_hold_each_sentence_out_once_per_seed_and_never_train_on_it(
        wolof: list[Sentence], tmp_path: Path) -> None:
    jobs = tagger_jobs(wolof[:60], wolof[60:], params=PARAMS, seeds=2, folds=10, random_state=3,
                       save_to=tmp_path / "tagger")
    assert len(jobs) == 1 + 2 * 10
    full, *folds = jobs
    assert full.name == FULL and full.save_to == tmp_path / "tagger" and full.held_out == wolof[60:]
    assert all(job.save_to is None and job.dev is None for job in folds)
    for seed in range(2):
        held = [job for job in folds if job.name.startswith(f"seed{seed}-")]
        assert sorted(id(s) for job in held for s in job.held_out) == sorted(id(s) for s in wolof[:60])
        for job in held:
            assert not {id(s) for s in job.train} & {id(s) for s in job.held_out}
            assert len(job.train) + len(job.held_out) == 60


def test_any_runner_in_any_order_gives_the_tags_of_one_process(wolof: list[Sentence]) -> None:
    train, dev = wolof[:60], wolof[60:]
    params = {**PARAMS, "jackknife_seeds": 2}
    tagger, views, tagged_dev = train_tagger(train, dev, params=params)
    _, reversed_views, reversed_dev = train_tagger(train, dev, params=params, fold_runner=backwards)
    _, pooled_views, _ = train_tagger(train, dev, params=params, fold_runner=pool_runner(2))
    assert upos(views) == upos(reversed_views) == upos(pooled_views)
    assert tagged_dev is not None and reversed_dev is not None
    assert upos([tagged_dev]) == upos([reversed_dev]) == upos([tagger.tag_for_parsing(dev)])
    for seed, view in enumerate(views):  # what one process's jackknife gives
        expected = jackknife_tags(train, lambda: Tagger(**PARAMS), folds=10, random_state=seed)
        assert upos([view]) == upos([parser_view(expected, tagger.predicted_columns)])
    assert [s.heads.tolist() for s in views[0]] == [s.heads.tolist() for s in train]


def test_the_kept_tagger_is_saved_where_asked(wolof: list[Sentence], tmp_path: Path) -> None:
    tagger, _, _ = train_tagger(wolof[:40], wolof[40:50], params=PARAMS, save_to=tmp_path / "tagger")
    assert upos([Tagger.load(tmp_path / "tagger").tag(wolof[50:])]) == upos([tagger.tag(wolof[50:])])


def test_a_missing_or_short_fold_is_refused(wolof: list[Sentence], tmp_path: Path) -> None:
    train = wolof[:30]
    jobs = tagger_jobs(train, None, params=PARAMS, seeds=1, folds=10, random_state=0,
                       save_to=tmp_path / "tagger")
    tagged = {job.name: list(job.held_out) for job in jobs}
    assert len(assemble_views(train, tagged, seeds=1, folds=10, random_state=0)[0]) == 30
    missing = {name: held for name, held in tagged.items() if name != fold_name(0, 4)}
    with pytest.raises(ValueError, match="seed0-fold4 tagged nothing, not 3"):
        assemble_views(train, missing, seeds=1, folds=10, random_state=0)
    short = {**tagged, fold_name(0, 2): tagged[fold_name(0, 2)][:1]}
    with pytest.raises(ValueError, match="seed0-fold2 tagged 1 sentences, not 3"):
        assemble_views(train, short, seeds=1, folds=10, random_state=0)
