"""Jackknifing: predictions for every training item from a model that never saw it.

Parsers trained on gold tags meet predicted tags at test time; training them on
*jackknifed* tags (each fold tagged by a tagger trained on the other folds) removes that
mismatch. :func:`jackknife` is generic (any ``fit_predict``), so stacking can reuse it;
:func:`jackknife_tags` is the tagging wrapper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from parsing.types import Sentence

Item = TypeVar("Item")
Prediction = TypeVar("Prediction")


class SentenceTagger(Protocol):
    """What :func:`jackknife_tags` needs from a tagger (e.g. :class:`parsing.tagger.Tagger`)."""

    def fit(self, sentences: Sequence[Sentence],
            dev: Sequence[Sentence] | None = None) -> SentenceTagger: ...

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]: ...


def fold_assignment(n_items: int, folds: int, random_state: int | None = 0) -> NDArray[np.intp]:
    """A seeded, balanced fold number in ``0..folds-1`` for each of ``n_items`` items.

    Raises:
        ValueError: fewer than 2 folds, or more folds than items.

    Examples:
        >>> sorted(fold_assignment(5, 2).tolist())
        [0, 0, 0, 1, 1]
    """
    if folds < 2:
        raise ValueError(f"folds must be at least 2, not {folds}")
    if folds > n_items:
        raise ValueError(f"cannot split {n_items} items into {folds} folds")
    order = np.random.default_rng(random_state).permutation(n_items)
    assignment = np.empty(n_items, dtype=np.intp)
    assignment[order] = np.arange(n_items) % folds
    return assignment


def jackknife(
    items: Sequence[Item],
    fit_predict: Callable[[list[Item], list[Item]], Sequence[Prediction]],
    *,
    folds: int = 10,
    random_state: int | None = 0,
) -> list[Prediction]:
    """Predict every item with a model fitted on the other folds only.

    Args:
        items: the data (not modified, not reordered).
        fit_predict: ``fit_predict(train, held_out)`` fits a fresh model on ``train`` and
            returns one prediction per item of ``held_out``, in order.
        folds: number of folds (``>= 2``, ``<= len(items)``).
        random_state: seed of the random, balanced assignment of items to folds.

    Returns:
        One prediction per item, in the order of ``items``.

    Raises:
        ValueError: bad ``folds``, or ``fit_predict`` returned the wrong number of predictions.

    Examples:
        >>> jackknife([1, 2, 3, 4], lambda train, held: [x in train for x in held], folds=2)
        [False, False, False, False]
    """
    assignment = fold_assignment(len(items), folds, random_state)
    predictions: list[Prediction | None] = [None] * len(items)
    for fold in range(folds):
        held_out: list[int] = np.flatnonzero(assignment == fold).tolist()
        train = [items[i] for i in np.flatnonzero(assignment != fold).tolist()]
        predicted = list(fit_predict(train, [items[i] for i in held_out]))
        if len(predicted) != len(held_out):
            raise ValueError(f"fit_predict returned {len(predicted)} predictions for "
                             f"{len(held_out)} items (fold {fold})")
        for i, prediction in zip(held_out, predicted, strict=True):
            predictions[i] = prediction
    return predictions  # type: ignore[return-value]  # every slot is filled above


def jackknife_tags(
    sentences: Sequence[Sentence],
    make_tagger: Callable[[], SentenceTagger],
    *,
    folds: int = 10,
    random_state: int | None = 0,
) -> list[Sentence]:
    """Copies of ``sentences`` whose tags were predicted by taggers that never saw them.

    Args:
        sentences: gold-tagged training sentences (not modified).
        make_tagger: returns a fresh, unfitted tagger, e.g. ``lambda: Tagger(max_iter=10)``.
        folds: number of folds.
        random_state: seed of the fold assignment.

    Returns:
        One tagged copy per sentence, in input order; only the tagger's columns change.
    """
    return jackknife(
        sentences,
        lambda train, held_out: make_tagger().fit(train).tag(held_out),
        folds=folds,
        random_state=random_state,
    )
