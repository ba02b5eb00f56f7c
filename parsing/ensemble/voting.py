"""Arc voting with maximum-spanning-tree reparsing (Sagae & Lavie 2006; Green 2013 §3.1.1).

Every member adds its weight to each arc it proposes; the tree is the maximum spanning tree
of that vote matrix over the proposed arcs (digest 003 §2.1: Green's *incomplete graph*,
Chu-Liu-Edmonds, single root by default; Eisner when projective output is asked). Member
weights follow Green's schemes (:data:`~parsing.ensemble.base.WEIGHTINGS`): uniform, dev
accuracy, accuracy**k and rank votes, learned on tuning data, or given explicitly. Each
word's label is the weighted vote among the members that chose its winning head; with
``labels="tuned"`` that label vote has weights of its own (each member's tuning label accuracy
at its right heads, to a power chosen on tuning LAS), so a member that labels better than it
attaches -- the neural member beside eight feature-based ones -- is heard on labels.

Conventions (see :mod:`parsing`): ``member_heads`` has shape ``(M, n+1)`` with column 0 equal
to ``-1``; ``votes[dep, head]`` has shape ``(n+1, n+1)``, row 0 and the diagonal ``-inf``, as
is every arc no member proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.base import BaseParser
from parsing.ensemble.base import (
    Ensemble,
    FloatArray,
    MemberParses,
    member_accuracy,
    reparse,
    scheme_weights,
    stack_heads,
    tie_break,
    token_weights,
    vote_labels,
)
from parsing.members import MEMBERS
from parsing.scorer.metrics import evaluate, universal
from parsing.types import Parse, Scores, Sentence

DEFAULT_MEMBERS: tuple[str, ...] = tuple(MEMBERS)
"""Every registered member (:data:`parsing.members.MEMBERS`)."""


def vote_matrix(member_heads: ArrayLike, weights: ArrayLike) -> Scores:
    """Summed member weights of every proposed arc.

    Args:
        member_heads: shape ``(M, n+1)``; heads outside ``0..n`` or equal to the word itself
            are ignored.
        weights: shape ``(M,)``, or ``(M, n+1)`` for a weight per member and dependent.

    Returns:
        votes, shape ``(n+1, n+1)``: ``votes[d, h]`` is the total weight of the members whose
        head of ``d`` is ``h`` (plus :func:`~parsing.ensemble.base.tie_break`); ``-inf`` where
        no member proposed the arc, on row 0 and on the diagonal.

    Examples:
        >>> votes = vote_matrix([[-1, 2, 0], [-1, 2, 0], [-1, 0, 1]], [1.0, 1.0, 1.0])
        >>> np.round(votes, 3).tolist()
        [[-inf, -inf, -inf], [1.0, -inf, 2.0], [2.0, 1.0, -inf]]
    """
    heads = np.asarray(member_heads, dtype=np.intp)
    if heads.ndim != 2:
        raise ValueError(f"member_heads must have shape (M, n+1), got {heads.shape}")
    n_members, size = heads.shape
    weight = token_weights(weights, n_members, size) + tie_break(n_members)[:, None]
    deps = np.broadcast_to(np.arange(size), heads.shape)
    valid = (heads >= 0) & (heads < size) & (heads != deps) & (deps > 0)
    votes = np.zeros((size, size))
    np.add.at(votes, (deps[valid], heads[valid]), weight[valid])
    proposed = np.zeros((size, size), dtype=bool)
    proposed[deps[valid], heads[valid]] = True
    votes[~proposed] = -np.inf
    return votes


def vote_share(member_heads: ArrayLike, weights: ArrayLike, heads: ArrayLike) -> FloatArray:
    """The fraction of the member weight behind each word's chosen head, shape ``(n+1,)``.

    ``share[0]`` is ``nan``; a word whose members all have weight 0 gets share 0.

    Examples:
        >>> vote_share([[-1, 0, 1], [-1, 2, 0]], [3.0, 1.0], [-1, 0, 1]).tolist()
        [nan, 0.75, 0.75]
    """
    member = np.asarray(member_heads, dtype=np.intp)
    chosen = np.asarray(heads, dtype=np.intp)
    weight = token_weights(weights, member.shape[0], member.shape[1])
    behind = (weight * (member == chosen[None, :])).sum(axis=0)
    total = weight.sum(axis=0)
    share: FloatArray = np.divide(behind, total, out=np.zeros_like(behind), where=total > 0)
    share[0] = np.nan
    return share


def ensemble_vote_weights(
    ensemble: object, combined: Sequence[str], names: Sequence[str]
) -> dict[str, float]:
    """Each member's weight in vote shares: the fitted voting ensemble's own (``weights_`` over
    the members it combines, in order), 1 for every member otherwise."""
    learned = getattr(ensemble, "weights_", None)
    weights = {name: 1.0 for name in names}
    if learned is not None and np.ndim(learned) == 1 and len(learned) == len(combined):
        weights.update({name: float(w) for name, w in zip(combined, learned, strict=True) if name in weights})
    return weights


LABEL_WEIGHTINGS: tuple[str, ...] = ("heads", "tuned")
"""How :class:`ArcVoting` weighs the label vote (its ``labels`` argument)."""


def ensemble_label_weights(ensemble: object) -> FloatArray | None:
    """The label vote's own weights of a fitted voting ensemble, ``(M,)`` over the members it
    combines, or ``None`` when it labels with its head weights (``labels="heads"``, no k kept,
    or a model saved before label weights existed): callers then vote labels as heads."""
    weights = getattr(ensemble, "label_weights_", None)
    if weights is None or getattr(ensemble, "label_exponent_", None) is None:
        return None
    return np.asarray(weights, dtype=np.float64)


def combine_votes(
    parses: Sequence[Parse], weights: ArrayLike, *, projective: bool = False, single_root: bool = True,
    label_weights: ArrayLike | None = None,
) -> Parse:
    """Reparse one sentence from its member parses by weighted arc voting.

    Args:
        parses: one parse per member.
        weights: shape ``(M,)`` or ``(M, n+1)``.
        projective, single_root: constraints on the output tree.
        label_weights: the label vote's weights, shape ``(M,)`` (default: ``weights``).

    Returns:
        The tree (always well formed), labels by :func:`~parsing.ensemble.base.vote_labels`,
        ``arc_scores`` the vote share of each chosen arc, ``extras["votes"]`` the matrix.

    Examples:
        >>> a = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> b = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> combine_votes([a, a, b], [1.0, 1.0, 1.0]).heads.tolist()
        [-1, 2, 0]
    """
    member_heads = stack_heads(parses)
    votes = vote_matrix(member_heads, weights)
    heads = reparse(votes, projective=projective, single_root=single_root)
    return Parse(
        heads=heads,
        deprels=vote_labels(heads, parses, weights if label_weights is None else label_weights),
        arc_scores=vote_share(member_heads, weights, heads),
        extras={"votes": votes},
    )


TUNED_EXPONENTS: tuple[float, ...] = (0.0, 1.0, 3.0, 10.0, 30.0, 100.0)
"""Candidate k of UAS**k for ``weighting="tuned"``: from one vote each (k = 0) to the best
member outweighing all the others together (k = 100: a member 5 UAS points below the best
weighs 0.005 of it)."""


def best_exponent(tuning: Sequence[Sentence], parses: MemberParses, accuracies: ArrayLike,
                  exponents: Sequence[float]) -> float:
    """The k whose UAS**k votes give the best LAS on ``tuning`` (ties: the smaller k).

    Args:
        tuning: gold sentences; ``parses[member][sentence]`` the members' parses of them.
        accuracies: the members' tuning UAS, shape ``(M,)``.
    """
    if not exponents:
        raise ValueError("weighting='tuned' needs at least one exponent")

    def las(exponent: float) -> float:
        weights = scheme_weights(accuracies, "power", exponent=exponent)
        trees = [combine_votes([member[i] for member in parses], weights) for i in range(len(tuning))]
        return float(evaluate(tuning, trees).las.f1)  # CoNLL 2018 conventions, as everywhere

    scored = [(las(k), -k) for k in sorted(exponents)]
    return -max(scored)[1]


def member_label_accuracy(gold: Sequence[Sentence], parses: MemberParses) -> FloatArray:
    """Each member's label accuracy (universal part) on the tuning words whose head it got
    right, shape ``(M,)``; 0 for a member with no right head.

    Examples:
        >>> gold = [Sentence.from_words(["a", "b"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> good = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> half = Parse(np.array([-1, 2, 1]), ["", "obj", "root"])
        >>> member_label_accuracy(gold, [[good], [half]]).tolist()
        [1.0, 0.0]
    """
    if not gold:
        raise ValueError("no tuning sentences to measure label accuracy on")
    accuracies = []
    for member in parses:
        right = total = 0
        for sentence, parse in zip(gold, member, strict=True):
            for dep in range(1, len(sentence.heads)):
                if int(parse.heads[dep]) == int(sentence.heads[dep]):
                    total += 1
                    right += universal(parse.deprels[dep]) == universal(sentence.deprels[dep])
        accuracies.append(right / total if total else 0.0)
    return np.array(accuracies, dtype=np.float64)


def best_label_exponent(tuning: Sequence[Sentence], parses: MemberParses, trees: Sequence[Parse],
                        label_accuracies: ArrayLike, head_weights: ArrayLike,
                        exponents: Sequence[float]) -> float | None:
    """The k whose label-accuracy**k label votes give the best LAS on ``tuning`` over the
    trees' heads ``trees``, or ``None`` when the head weights label as well (ties: ``None``,
    then the smaller k)."""
    def las(weights: ArrayLike) -> float:
        labelled = [Parse(tree.heads, vote_labels(tree.heads, [member[i] for member in parses], weights))
                    for i, tree in enumerate(trees)]
        return float(evaluate(tuning, labelled).las.f1)

    best, chosen = las(head_weights), None
    for k in sorted(exponents):
        score = las(scheme_weights(label_accuracies, "power", exponent=k))
        if score > best:
            best, chosen = score, k
    return chosen


class ArcVoting(Ensemble):
    """Weighted arc voting + MST reparsing over the members' trees.

    Args:
        members: parser instances (cloned) or member names.
        weighting: ``"uniform"``, ``"accuracy"`` (tuning UAS), ``"power"`` (UAS**exponent)
            or ``"rank"`` (best of M gets M votes).
        exponent: k of the ``"power"`` scheme (Green found 10 best for English; re-tune).
        weights: explicit member weights, shape ``(M,)``; override ``weighting``.
        exponents: with ``weighting="tuned"``, the candidate k of UAS**k; the one whose
            combined tuning trees have the best LAS is kept (ties: the smaller k). With
            predicted tags one vote per member lets many correlated, weaker voters outvote
            the strong ones, and no fixed k suits every treebank.
        labels: ``"heads"``: labels voted with the head weights; ``"tuned"``: with weights of
            their own, label accuracy**k (:func:`member_label_accuracy`), k among ``exponents``
            by tuning LAS, or the head weights when none labels better.
        projective, single_root, tuning_folds, random_state: see
            :class:`~parsing.ensemble.base.Ensemble`.

    Attributes:
        weights_: the member weights used, shape ``(M,)``.
        label_weights_: the label vote's weights, shape ``(M,)`` (``weights_`` unless tuned).
        accuracies_: the members' tuning UAS, or ``None`` when nothing was tuned.
        label_accuracies_: the members' tuning label accuracy with ``labels="tuned"``, else ``None``.
        exponent_: the k kept by ``"tuned"`` (else ``exponent``).
        label_exponent_: the k of the label weights, ``None`` when they are the head weights.
    """

    name = "vote"
    description = "arc voting + maximum spanning tree reparsing (Sagae & Lavie 2006; Green 2013)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = DEFAULT_MEMBERS,
        *,
        weighting: str = "uniform",
        exponent: float = 10.0,
        weights: Sequence[float] | None = None,
        exponents: Sequence[float] = TUNED_EXPONENTS,
        labels: str = "heads",
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        if labels not in LABEL_WEIGHTINGS:
            raise ValueError(f"labels must be one of {', '.join(LABEL_WEIGHTINGS)}, not {labels!r}")
        self.members = members
        self.weighting = weighting
        self.exponent = exponent
        self.weights = weights
        self.exponents = exponents
        self.labels = labels
        self.projective = projective
        self.single_root = single_root
        self.tuning_folds = tuning_folds
        self.random_state = random_state

    @property
    def needs_tuning(self) -> bool:
        return (self.weights is None and self.weighting != "uniform") or self.labels == "tuned"

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Member weights: explicit, uniform, or from the members' UAS on ``tuning``."""
        n_members = len(self.members_)
        self.accuracies_: NDArray[np.float64] | None = None
        self.exponent_ = self.exponent
        if self.weights is not None:
            weights = np.asarray(self.weights, dtype=np.float64)
        elif self.weighting == "uniform":
            weights = np.ones(n_members)
        elif self.weighting == "tuned":
            self.accuracies_ = member_accuracy(tuning, parses)
            self.exponent_ = best_exponent(tuning, parses, self.accuracies_, self.exponents)
            weights = scheme_weights(self.accuracies_, "power", exponent=self.exponent_)
        else:
            self.accuracies_ = member_accuracy(tuning, parses)
            weights = scheme_weights(self.accuracies_, self.weighting, exponent=self.exponent)
        self.weights_ = token_weights(weights, n_members, 1)[:, 0].copy()
        self.label_weights_, self.label_accuracies_, self.label_exponent_ = self.weights_, None, None
        if self.labels == "tuned":
            trees = [combine_votes([member[i] for member in parses], self.weights_,
                                   projective=self.projective, single_root=self.single_root)
                     for i in range(len(tuning))]
            self.label_accuracies_ = member_label_accuracy(tuning, parses)
            self.label_exponent_ = best_label_exponent(tuning, parses, trees, self.label_accuracies_,
                                                       self.weights_, self.exponents)
            if self.label_exponent_ is not None:
                self.label_weights_ = scheme_weights(self.label_accuracies_, "power",
                                                     exponent=self.label_exponent_)
        return self

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """Weighted arc voting over ``parses`` (see :func:`combine_votes`)."""
        return combine_votes(parses, self.weights_, projective=self.projective,
                             single_root=self.single_root, label_weights=ensemble_label_weights(self))
