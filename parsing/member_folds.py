"""Training tags from the self-tagging member's own folds (issue #33), when it tags for the others.

When a round's tag source is a self-tagging member (:mod:`parsing.tag_source`), the other members
parse its UPOS but, by default, train on the tagger's jackknifed UPOS: tags of another kind
(another error profile, usually more errors) than they meet in use. With the tagger setting
``member_folds = k`` (``k >= 2``) the round jackknifes the member instead: ``k`` copies of it,
each trained on the gold trees of the other folds, tag their held-out fold, and the other members
train on those UPOS (where the member is sure enough, as the round's threshold says; every other
column stays the tagger's). Ten neural fits do not fit a round
on two cores, hence few folds, and ``member_fold_seconds`` caps each fold's training time (a
smaller, faster tagger for the folds).

Cost: the member is then trained before the others (the choice needs it), the ``k`` folds after
it, and the other members last; ``bench/member_folds_report.py`` gives what each choice costs in
time and LAS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parsing.jackknife import fold_assignment
from parsing.member_fit import MemberJob
from parsing.types import Parse, Sentence

FOLD_DIR = "member-folds"
"""Folder of a model directory where the fold models live while the round trains (removed after)."""


def check_member_folds(value: object) -> int:
    """``value`` when it is a valid ``member_folds`` setting: 0 (off) or an integer >= 2.

    Raises:
        ValueError: anything else.

    Examples:
        >>> check_member_folds(3), check_member_folds(0)
        (3, 0)
    """
    if isinstance(value, bool) or not isinstance(value, int) or value == 1 or value < 0:
        raise ValueError(f"tagger.member_folds is 0 (off) or a number of folds >= 2, not {value!r}")
    return value


def check_fold_seconds(value: object) -> float:
    """``value`` when it is a valid ``member_fold_seconds`` setting: a positive number.

    Raises:
        ValueError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"tagger.member_fold_seconds is a positive number of seconds, not {value!r}")
    return float(value)


def fold_jobs(name: str, gold_train: Sequence[Sentence], dev: Sequence[Sentence] | None, out_dir: Path, *,
              folds: int, random_state: int, params: Mapping[str, Any],
              fold_seconds: float | None = None) -> tuple[list[MemberJob], list[list[int]]]:
    """The jobs fitting ``folds`` copies of member ``name``, each on the gold trees outside its fold.

    Returns:
        ``(jobs, held_out)``: job ``f`` saves at ``out_dir/FOLD_DIR/NAME-f.model``;
        ``held_out[f]`` lists the indices into ``gold_train`` of fold ``f``'s sentences.

    Raises:
        ValueError: fewer than 2 folds, or more folds than sentences.
    """
    assignment = fold_assignment(len(gold_train), folds, random_state)
    settings = dict(params)
    if fold_seconds is not None:
        settings["max_seconds"] = fold_seconds
    jobs, held_out = [], []
    for fold in range(folds):
        kept = np.flatnonzero(assignment != fold).tolist()
        held_out.append(np.flatnonzero(assignment == fold).tolist())
        jobs.append(MemberJob(name, [gold_train[i] for i in kept], dev,
                              out_dir / FOLD_DIR / f"{name}-{fold}.model", random_state, settings))
    return jobs, held_out


def jackknifed_parses(n_sentences: int, held_out: Sequence[Sequence[int]],
                     fold_parses: Sequence[Sequence[Parse]]) -> list[Parse]:
    """Each training sentence's parse by the fold model that held it out, in training order.

    ``fold_parses[f]`` are fold ``f``'s model's parses of its held-out sentences, in the order of
    ``held_out[f]``.

    Raises:
        ValueError: the folds do not cover every sentence exactly once, or a fold's parse count
            differs from its sentence count.

    Examples:
        >>> p = lambda tag: Parse(np.array([-1, 0]), ["", "root"], extras={"upos": ["<ROOT>", tag]})
        >>> [q.extras["upos"][1] for q in jackknifed_parses(3, [[0, 2], [1]], [[p("A"), p("C")], [p("B")]])]
        ['A', 'B', 'C']
    """
    parses: list[Parse | None] = [None] * n_sentences
    for fold, (indices, found) in enumerate(zip(held_out, fold_parses, strict=True)):
        if len(indices) != len(found):
            raise ValueError(f"fold {fold}: {len(found)} parses for {len(indices)} sentences")
        for index, parse in zip(indices, found, strict=True):
            if parses[index] is not None:
                raise ValueError(f"sentence {index + 1} is in more than one fold")
            parses[index] = parse
    missing = [i + 1 for i, value in enumerate(parses) if value is None]
    if missing:
        raise ValueError(f"no fold tagged sentence {missing[0]} ({len(missing)} untagged)")
    return [parse for parse in parses if parse is not None]
