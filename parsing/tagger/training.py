"""The tagger of a predicted-tags model, and the training tags its members learn from.

Members trained with predicted tags must learn from tags as wrong as the ones they will meet,
so their training sentences are *jackknifed* (:func:`parsing.jackknife.jackknife_tags`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parsing.jackknife import jackknife_tags
from parsing.tagger.model import Tagger
from parsing.tagger.view import parser_view
from parsing.types import Sentence


def train_tagger(train: Sequence[Sentence], dev: Sequence[Sentence] | None, *, random_state: int = 0,
                 params: Mapping[str, Any] | None = None
                 ) -> tuple[Tagger, list[list[Sentence]], list[Sentence] | None]:
    """Fit the tagger (``params``: :class:`~parsing.tagger.model.Tagger` hyperparameters, plus
    ``jackknife_seeds``); return it, jackknife-tagged train and tagged dev, both as parsers see
    them with predicted tags (:func:`parsing.tagger.view.parser_view`: no gold lemma, XPOS or FEATS).

    Train comes back once per jackknife seed (``jackknife_seeds``, default 1): seed ``k`` assigns
    the sentences to folds differently, so its training tags carry different errors, and members
    trained on different seeds disagree where the tags were doubtful (diversity against shared
    tag errors). Shape: ``(tagger, [train view] * jackknife_seeds, tagged dev or None)``.

    Raises:
        ValueError: ``jackknife_seeds`` below 1.
    """
    settings = dict(params or {})
    seeds = int(settings.pop("jackknife_seeds", 1))
    if seeds < 1:
        raise ValueError(f"tagger.jackknife_seeds must be at least 1, not {seeds}")

    def make_tagger() -> Tagger:
        return Tagger(**{"random_state": random_state, **settings})

    tagger = make_tagger().fit(train, dev)
    views = [parser_view(jackknife_tags(train, make_tagger, folds=10, random_state=random_state + k),
                         tagger.predicted_columns) for k in range(seeds)]
    tagged_dev = tagger.tag_for_parsing(dev) if dev else None
    return tagger, views, tagged_dev
