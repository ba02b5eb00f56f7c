"""The tagger of a predicted-tags model, and the training tags its members learn from.

Members trained with predicted tags must learn from tags as wrong as the ones they will meet,
so their training sentences are *jackknifed*: each fold tagged by a tagger fitted on the other
folds (:mod:`parsing.tagger.folds`, whose fits a fold runner may spread over processes or
workers).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parsing.tagger.folds import FULL, FoldRunner, assemble_views, in_order, tagger_jobs
from parsing.tagger.model import Tagger
from parsing.types import Sentence

FOLDS = 10


def train_tagger(train: Sequence[Sentence], dev: Sequence[Sentence] | None, *, random_state: int = 0,
                 params: Mapping[str, Any] | None = None, fold_runner: FoldRunner | None = None,
                 save_to: Path | None = None,
                 ) -> tuple[Tagger, list[list[Sentence]], list[Sentence] | None]:
    """Fit the tagger (``params``: :class:`~parsing.tagger.model.Tagger` hyperparameters, plus
    ``jackknife_seeds``); return it, jackknife-tagged train and tagged dev, both as parsers see
    them with predicted tags (:func:`parsing.tagger.view.parser_view`: no gold lemma, XPOS or FEATS).

    Train comes back once per jackknife seed (``jackknife_seeds``, default 1): seed ``k`` assigns
    the sentences to folds differently, so its training tags carry different errors, and members
    trained on different seeds disagree where the tags were doubtful (diversity against shared
    tag errors). Shape: ``(tagger, [train view] * jackknife_seeds, tagged dev or None)``.

    ``fold_runner`` runs the ``1 + 10 * jackknife_seeds`` fits (:mod:`parsing.tagger.folds`;
    default: one after another here); ``save_to`` is where the kept tagger is written (default:
    a temporary file).

    Raises:
        ValueError: ``jackknife_seeds`` below 1.
    """
    settings = dict(params or {})
    seeds = int(settings.pop("jackknife_seeds", 1))
    if seeds < 1:
        raise ValueError(f"tagger.jackknife_seeds must be at least 1, not {seeds}")
    settings = {"random_state": random_state, **settings}
    with tempfile.TemporaryDirectory(prefix="tagger-") as scratch:
        path = save_to or Path(scratch) / "tagger"
        jobs = tagger_jobs(train, dev, params=settings, seeds=seeds, folds=FOLDS,
                           random_state=random_state, save_to=path)
        tagged = dict((fold_runner or in_order)(jobs))
        tagger = Tagger.load(path)
    views = assemble_views(train, tagged, seeds=seeds, folds=FOLDS, random_state=random_state)
    return tagger, views, tagged[FULL] if dev else None
