"""Voters from outside a fitted ensemble: another parser's trees (an uploaded parse, a plugin)
joining the arc vote of a voting ensemble (Green 2013 combined converted constituency parsers
this way).

An extra voter *abstains* on a sentence it has no tree for: the vote of that sentence is over
the members and the extra voters that do have one, so it is exactly the members' vote when
every extra voter abstains. Its weight follows the ensemble's weighting scheme
(:func:`extra_voter_weight`); a weight of ``None`` means "an average member": on each word the
mean of the members' weights of that word (so per-UPOS weights stay per UPOS).

Conventions (see :mod:`parsing`): a parse's ``heads`` has shape ``(n+1,)`` with
``heads[0] == -1``; member weights have shape ``(M,)`` or ``(M, n+1)``; the voters' weights
returned by :func:`voters` have shape ``(V, n+1)``, members first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from parsing.ensemble.base import FloatArray, scheme_weights, token_weights
from parsing.ensemble.voting import combine_votes
from parsing.types import Parse, Sentence


def extra_voter_weight(
    weighting: str, accuracy: float | None, member_accuracies: ArrayLike | None = None, *,
    exponent: float = 10.0,
) -> float | None:
    """The weight of an extra voter whose tuning UAS (a fraction) is ``accuracy``.

    ``uniform``: 1. The weighted schemes score it like a member: ``accuracy`` its UAS,
    ``power`` UAS ** ``exponent`` (``tuned`` too, with the k the ensemble tuned), ``rank`` the
    (average) rank it takes among the members' ``member_accuracies`` and itself (the members
    keep their own ranks). Without an accuracy
    (no tuning split, or no tree of it there), or for a scheme not listed: None, an average
    member's weight.

    Examples:
        >>> extra_voter_weight("uniform", None)
        1.0
        >>> extra_voter_weight("accuracy", 0.8)
        0.8
        >>> extra_voter_weight("power", 0.5, exponent=2)
        0.25
        >>> extra_voter_weight("tuned", 0.5, exponent=3)
        0.125
        >>> extra_voter_weight("rank", 0.9, [0.7, 0.95, 0.8])
        3.0
        >>> extra_voter_weight("accuracy", None) is None
        True
    """
    if weighting == "uniform":
        return 1.0
    weighting = "power" if weighting == "tuned" else weighting
    if accuracy is None or weighting not in ("accuracy", "power", "rank"):
        return None
    if weighting == "rank":
        others = [] if member_accuracies is None else list(np.asarray(member_accuracies, dtype=np.float64))
        return float(rankdata([*others, accuracy], method="average")[-1])
    return float(scheme_weights([accuracy], weighting, exponent=exponent)[0])


def voters(
    parses: Sequence[Parse], weights: ArrayLike, extra: Sequence[Parse | None],
    extra_weights: Sequence[float | None],
) -> tuple[list[Parse], FloatArray]:
    """The members' parses of one sentence followed by the extra voters' that have one, and
    every voter's weight per position, shape ``(V, n+1)``.

    Args:
        parses: one parse per member (``M`` of them).
        weights: the members' weights, shape ``(M,)`` or ``(M, n+1)``.
        extra: one entry per extra voter: its parse of the sentence, or None (it abstains).
        extra_weights: one per extra voter: a weight, or None for an average member's.

    Raises:
        ValueError: ``extra`` and ``extra_weights`` differ in length, a negative weight, or an
            extra parse of another length than the members'.

    Examples:
        >>> a = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> kept, w = voters([a, a], [1.0, 3.0], [None, a], [None, None])
        >>> len(kept), w.tolist()
        (3, [[1.0, 1.0, 1.0], [3.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    """
    if len(extra) != len(extra_weights):
        raise ValueError(f"{len(extra)} extra parses for {len(extra_weights)} weights")
    if not parses:
        raise ValueError("no member parses to vote with")
    size = len(parses[0].heads)
    member = token_weights(weights, len(parses), size)
    average = member.mean(axis=0)
    rows, kept = [member], list(parses)
    for parse, weight in zip(extra, extra_weights, strict=True):
        if parse is None:
            continue
        if len(parse.heads) != size:
            raise ValueError(f"an extra voter's parse has {len(parse.heads) - 1} words, "
                             f"the members' {size - 1}")
        if weight is not None and (weight < 0 or not np.isfinite(weight)):
            raise ValueError(f"an extra voter's weight must be finite and non-negative, not {weight}")
        rows.append((average if weight is None else np.full(size, float(weight)))[None, :])
        kept.append(parse)
    return kept, np.vstack(rows)


def combine_with_voters(
    parses: Sequence[Parse], weights: ArrayLike, extra: Sequence[Parse | None],
    extra_weights: Sequence[float | None], *, projective: bool = False, single_root: bool = True,
) -> Parse:
    """Weighted arc voting + MST over the members' and the present extra voters' parses of one
    sentence (:func:`voters`, :func:`~parsing.ensemble.voting.combine_votes`); with every extra
    voter abstaining, the members' own vote. Labels are voted with the head weights; the app
    (``app/services/external_votes.py``) passes an ensemble's tuned label weights to
    :func:`~parsing.ensemble.voting.combine_votes` itself, a voter labelling as an average member.

    Examples:
        >>> a = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> b = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> combine_with_voters([a, b], [1.0, 1.0], [b, b], [1.0, None]).heads.tolist()
        [-1, 0, 1]
        >>> combine_with_voters([a, b], [2.0, 1.0], [None], [5.0]).heads.tolist()
        [-1, 2, 0]
    """
    kept, matrix = voters(parses, weights, extra, extra_weights)
    return combine_votes(kept, matrix, projective=projective, single_root=single_root)


def member_vote_weights(ensemble: object, sentence: Sentence) -> FloatArray:
    """The weights a fitted voting ensemble gives its members on ``sentence``: per UPOS
    (``token_weights``, shape ``(M, n+1)``) or per member (``weights_``, shape ``(M,)``).

    Raises:
        ValueError: the ensemble does not vote with member weights.
    """
    per_tag = getattr(ensemble, "token_weights", None)
    if callable(per_tag):
        weights: FloatArray = np.asarray(per_tag(sentence.upos), dtype=np.float64)
        return weights
    learned = getattr(ensemble, "weights_", None)
    if learned is None or np.ndim(learned) != 1:
        raise ValueError(f"{type(ensemble).__name__} does not vote with member weights")
    return np.asarray(learned, dtype=np.float64)
