"""Stable pre-annotation across rounds: keep a previous tree's arc unless the new round is surer.

A round that adds one corrected tree to a few hundred retrains every member, and the
perceptron members, trained in another order on slightly other data, flip many arcs whose
votes were close: the ensemble tree of most pool sentences changes, mostly between two
readings the members were never sure of. An annotator who sees most pre-annotations change
after one correction stops trusting them (issue #30, item 4).

:func:`keep_previous` keeps a word's previous arc unless the new round's members back the new
one by more than ``margin`` of their vote weight:

    keep d's previous head  iff  share(previous head of d) + margin >= share(new head of d)

where ``share`` is the weighted fraction of members proposing the arc
(:func:`parsing.ensemble.voting.vote_share`). The chosen arcs are then made a tree by
Chu-Liu-Edmonds over ``2 * chosen + votes`` (the chosen arcs first, the votes to settle the
rest when the choices form a cycle or a second ROOT child). A kept arc keeps its previous
label under the same rule among the members that chose that head. ``margin = 0`` keeps an arc
only on a tie; ``margin >= 1`` keeps every previous arc the tree allows.

Conventions (see :mod:`parsing`): index 0 is ROOT, ``heads[0] == -1``; ``member_heads`` has
shape ``(M, n+1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.decoders.first_order import chu_liu_edmonds
from parsing.ensemble.base import FloatArray, stack_heads, token_weights
from parsing.ensemble.voting import vote_share
from parsing.types import Heads, Parse

__all__ = ["DEFAULT_MARGIN", "DEFAULT_PREVIOUS_WEIGHT", "keep_previous", "label_share", "with_previous_votes"]

DEFAULT_MARGIN = 0.34
"""The margin rounds use, with :data:`DEFAULT_PREVIOUS_WEIGHT`: chosen on dev sentences
(``bench/churn.py``; the user guide gives the churn and the LAS it costs)."""

DEFAULT_PREVIOUS_WEIGHT = 0.4
"""The share of the vote rounds give the previous round's members (:func:`with_previous_votes`)."""

_UNPROPOSED = -10.0
"""Score of an arc no member proposed in the tree repair: used only where nothing else makes a tree."""

_CHOSEN = 2.0
"""Bonus of a chosen arc in the tree repair: above any vote total (votes are shares, ≤ 1)."""


def label_share(parses: Sequence[Parse], weights: ArrayLike, dep: int, head: int, label: str) -> float:
    """The weighted fraction, among the members whose head of ``dep`` is ``head``, that label it
    ``label`` (0 when none chose that head)."""
    weight = token_weights(weights, len(parses), len(parses[0].heads))[:, dep]
    chose = np.array([int(p.heads[dep]) == head for p in parses])
    total = float(weight[chose].sum())
    if total <= 0:
        return 0.0
    agree = np.array([chose[m] and parses[m].deprels[dep] == label for m in range(len(parses))])
    return float(weight[agree].sum()) / total


def with_previous_votes(parses: Sequence[Parse], weights: ArrayLike, previous: Sequence[Parse],
                        previous_weights: ArrayLike, share: float) -> tuple[list[Parse], FloatArray]:
    """The voters and weights that decide :func:`keep_previous`: this round's members at
    ``1 - share`` of the vote and the previous round's (``previous``, their parses of the same
    sentence) at ``share``. Averaging two rounds' votes is a larger ensemble, so it also damps
    the arcs that flip only because the members were retrained.

    Args:
        weights: shape ``(M,)`` or ``(M, n+1)``; previous_weights: ``(P,)`` or ``(P, n+1)``.

    Returns:
        ``M + P`` parses and their weights, shape ``(M + P, n+1)``; this round's alone when
        ``previous`` is empty or ``share`` is 0.
    """
    size = len(parses[0].heads)
    now = token_weights(weights, len(parses), size)
    if not previous or share <= 0:
        return list(parses), now
    before = token_weights(previous_weights, len(previous), size)
    now = (1 - share) * now / np.maximum(now.sum(axis=0), 1e-12)  # each word's vote sums to 1 - share
    before = share * before / np.maximum(before.sum(axis=0), 1e-12)
    return [*parses, *previous], np.vstack([now, before])


def keep_previous(
    parses: Sequence[Parse],
    weights: ArrayLike,
    new: Parse,
    previous_heads: ArrayLike,
    previous_deprels: Sequence[str],
    margin: float = DEFAULT_MARGIN,
) -> Parse:
    """``new`` (this round's ensemble tree) with ``previous``'s arcs wherever this round's
    members do not back the new arc by more than ``margin`` (module docstring).

    Args:
        parses: this round's member parses of the sentence, ``M`` of them.
        weights: member weights, shape ``(M,)`` or ``(M, n+1)``.
        new: this round's ensemble parse.
        previous_heads: the previous ensemble tree's heads, shape ``(n+1,)`` (``-1`` for unknown
            words, which take the new arc).
        previous_deprels: its labels, ``n+1`` of them.
        margin: the vote weight (a fraction of all) the new arc must lead by.

    Returns:
        A parse with a single-rooted tree; ``arc_scores`` are the members' vote shares of it;
        ``new.upos`` and ``new.extras`` are kept. ``new`` itself when nothing is kept.

    Examples:
        >>> a = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> b = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> keep_previous([a, b], [1.0, 1.0], a, [-1, 0, 1], ["", "root", "obj"], 0.1).heads.tolist()
        [-1, 0, 1]
    """
    old = np.asarray(previous_heads, dtype=np.intp)
    size = len(new.heads)
    if old.shape != (size,) or len(previous_deprels) != size or margin < 0:
        return new
    member_heads = stack_heads(parses)
    new_share = vote_share(member_heads, weights, new.heads)
    old_share = vote_share(member_heads, weights, np.where(old >= 0, old, new.heads))
    keep = (old >= 0) & (old_share + margin >= new_share)
    keep[0] = False
    if not keep[1:].any():
        return new
    chosen = np.where(keep, old, new.heads)
    heads = _as_tree(chosen, member_heads, weights)
    deprels = [_label(parses, weights, new, old, previous_deprels, d, int(heads[d]), margin)
               if d else "" for d in range(size)]
    if np.array_equal(heads, new.heads) and deprels == list(new.deprels):
        return new
    shares = vote_share(member_heads, weights, heads)
    return replace(new, heads=heads, deprels=deprels, arc_scores=shares)


def _as_tree(chosen: Heads, member_heads: NDArray[np.intp], weights: ArrayLike) -> Heads:
    """``chosen`` if it is a single-rooted tree, else the best tree over ``2 * chosen + shares``."""
    size = chosen.shape[0]
    weight = token_weights(weights, member_heads.shape[0], size)
    total = np.maximum(weight.sum(axis=0), 1e-12)
    scores = np.full((size, size), _UNPROPOSED)  # every arc allowed, so a tree always exists
    for m in range(member_heads.shape[0]):
        for d in range(1, size):
            h = int(member_heads[m, d])
            if 0 <= h < size and h != d:
                base = scores[d, h] if scores[d, h] > _UNPROPOSED else 0.0
                scores[d, h] = base + float(weight[m, d]) / float(total[d])
    words = np.arange(1, size)
    proposed = scores[words, chosen[1:]]
    scores[words, chosen[1:]] = np.where(proposed > _UNPROPOSED, proposed, 0.0) + _CHOSEN
    return chu_liu_edmonds(scores, single_root=True)


def _label(parses: Sequence[Parse], weights: ArrayLike, new: Parse, old: Heads,
           previous_deprels: Sequence[str], dep: int, head: int, margin: float) -> str:
    """``dep``'s label at ``head``: the previous one where the arc is the previous arc and the
    members choosing it do not back another label by more than ``margin``, else the new tree's
    label where the new tree has this arc, else the members' weighted vote."""
    candidates: list[str] = []
    if int(new.heads[dep]) == head:
        candidates.append(new.deprels[dep])
    candidates += [p.deprels[dep] for p in parses if int(p.heads[dep]) == head]
    best = max(candidates, key=lambda label: label_share(parses, weights, dep, head, label)) if candidates \
        else previous_deprels[dep]
    if int(new.heads[dep]) == head and label_share(parses, weights, dep, head, new.deprels[dep]) >= \
            label_share(parses, weights, dep, head, best):
        best = new.deprels[dep]
    if int(old[dep]) == head and label_share(parses, weights, dep, head, previous_deprels[dep]) + margin >= \
            label_share(parses, weights, dep, head, best):
        return previous_deprels[dep]
    return best
