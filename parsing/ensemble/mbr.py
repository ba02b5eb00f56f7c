"""Minimum Bayes risk selection over the members' trees (Titov 2008 ch. 8; digest 002 §2.12).

The members' outputs define a distribution over trees: member ``p`` with weight ``w_p``
puts mass ``w_p`` on its tree, or spreads it over its k-best list in proportion to the
list's probabilities (``Parse.extras["kbest"] = [(heads, deprels, probability), ...]``,
e.g. from the neural member). Under arc (Hamming) loss the expected loss of a tree ``y`` is
``sum_y' P(y') |{d : y[d] != y'[d]}|``:

* ``search="candidates"`` (MBR *reranking*, eq. 8.2): pick the candidate tree (a member's
  1-best or k-best tree that satisfies the output constraints) with the least expected loss;
  its own labels are kept.
* ``search="all"`` (MBR *prediction*, eq. 8.1): the minimum over every tree is the maximum
  spanning tree of the arc marginals ``w(e) = sum_y' P(y') [e in y']``, i.e. arc voting with
  the k-best mass; labels by weighted vote of the trees that chose each winning head.

``labelled=True`` makes a word count as wrong when its head *or* label differs.

Conventions (see :mod:`parsing`): heads arrays have shape ``(n+1,)`` (candidates ``(C, n+1)``)
with column 0 equal to ``-1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.base import BaseParser
from parsing.decoders.first_order import is_projective, is_tree
from parsing.ensemble.base import FloatArray, reparse, stack_heads, token_weights, vote_labels
from parsing.ensemble.voting import DEFAULT_MEMBERS, ArcVoting, vote_matrix
from parsing.types import Parse, Sentence


def tree_distribution(parses: Sequence[Parse], weights: ArrayLike, *, use_kbest: bool = True
                      ) -> tuple[list[Parse], FloatArray]:
    """The trees the members propose and their probabilities (summing to 1).

    Args:
        parses: one parse per member.
        weights: member weights, shape ``(M,)``.
        use_kbest: spread a member's weight over ``extras["kbest"]`` when it has one.

    Returns:
        ``(trees, probabilities)``; ``probabilities`` has shape ``(T,)``.
    """
    member_weight = token_weights(weights, len(parses), 1)[:, 0]
    if member_weight.sum() <= 0:
        member_weight = np.ones(len(parses))
    trees: list[Parse] = []
    mass: list[float] = []
    for parse, weight in zip(parses, member_weight.tolist(), strict=True):
        kbest = parse.extras.get("kbest") if use_kbest else None
        if isinstance(kbest, list) and kbest:
            probs = np.array([float(item[2]) for item in kbest])
            probs = probs / probs.sum() if probs.sum() > 0 else np.full(len(kbest), 1 / len(kbest))
            for (heads, deprels, _), prob in zip(kbest, probs.tolist(), strict=True):
                trees.append(Parse(np.asarray(heads, dtype=np.intp), list(deprels)))
                mass.append(weight * prob)
        else:
            trees.append(parse)
            mass.append(weight)
    total = np.array(mass)
    return trees, total / total.sum()


def expected_loss(
    candidates: ArrayLike,
    support: ArrayLike,
    probabilities: ArrayLike,
    *,
    candidate_labels: Sequence[Sequence[str]] | None = None,
    support_labels: Sequence[Sequence[str]] | None = None,
) -> FloatArray:
    """Expected number of wrong words of each candidate under the support distribution.

    Args:
        candidates: shape ``(C, n+1)``.
        support: shape ``(T, n+1)``, the trees carrying probability.
        probabilities: shape ``(T,)``.
        candidate_labels, support_labels: labels (``C`` and ``T`` lists of ``n+1``); when
            both are given a word is wrong if its head or its label differs.

    Returns:
        shape ``(C,)``.

    Examples:
        >>> expected_loss([[-1, 0, 1], [-1, 2, 0]], [[-1, 0, 1], [-1, 2, 0]], [0.75, 0.25]).tolist()
        [0.5, 1.5]
    """
    cand = np.asarray(candidates, dtype=np.intp)[:, None, 1:]
    sup = np.asarray(support, dtype=np.intp)[None, :, 1:]
    wrong = cand != sup  # (C, T, n)
    if candidate_labels is not None and support_labels is not None:
        cand_l = np.array([list(row)[1:] for row in candidate_labels], dtype=np.str_)[:, None, :]
        sup_l = np.array([list(row)[1:] for row in support_labels], dtype=np.str_)[None, :, :]
        wrong = wrong | (cand_l != sup_l)
    loss: FloatArray = wrong.sum(axis=2) @ np.asarray(probabilities, dtype=np.float64)
    return loss


def _allowed(heads: NDArray[np.intp], *, projective: bool, single_root: bool) -> bool:
    if not is_tree(heads):
        return False
    if single_root and int((heads[1:] == 0).sum()) != 1:
        return False
    return not projective or is_projective(heads)


def mbr_parse(
    parses: Sequence[Parse],
    weights: ArrayLike,
    *,
    search: str = "candidates",
    labelled: bool = False,
    use_kbest: bool = True,
    projective: bool = False,
    single_root: bool = True,
) -> Parse:
    """The minimum-expected-loss tree of one sentence (see the module docstring).

    With ``search="candidates"`` and no candidate satisfying the constraints (members
    that output cycles, several roots, or non-projective trees when ``projective``), falls
    back to ``search="all"``, which always gives a tree.

    Returns:
        The parse; ``arc_scores`` are the marginals of the chosen arcs,
        ``extras["expected_loss"]`` its expected loss, ``extras["candidate"]`` the index of
        the chosen tree in :func:`tree_distribution`'s list (``None`` for ``"all"``).
    """
    if search not in ("candidates", "all"):
        raise ValueError(f"search must be 'candidates' or 'all', not {search!r}")
    trees, probs = tree_distribution(parses, weights, use_kbest=use_kbest)
    support = stack_heads(trees)
    labels = [tree.deprels for tree in trees]
    marginals = vote_matrix(support, probs)
    chosen: int | None = None
    if search == "candidates":
        ok = [i for i, tree in enumerate(trees)
              if _allowed(tree.heads, projective=projective, single_root=single_root)]
        if ok:
            loss = expected_loss(support[ok], support, probs,
                                 candidate_labels=[labels[i] for i in ok] if labelled else None,
                                 support_labels=labels if labelled else None)
            chosen = ok[int(np.argmin(loss))]
    if chosen is not None:
        heads, deprels = support[chosen].copy(), list(labels[chosen])
    else:
        heads = reparse(marginals, projective=projective, single_root=single_root)
        deprels = vote_labels(heads, trees, probs)
    final = expected_loss(heads[None, :], support, probs,
                          candidate_labels=[deprels] if labelled else None,
                          support_labels=labels if labelled else None)
    share = np.where(np.isfinite(marginals[np.arange(len(heads)), np.maximum(heads, 0)]),
                     marginals[np.arange(len(heads)), np.maximum(heads, 0)], 0.0)
    share[0] = np.nan
    return Parse(heads=heads, deprels=deprels, arc_scores=np.clip(share, 0.0, 1.0),
                 extras={"expected_loss": float(final[0]), "candidate": chosen})


class MinimumBayesRisk(ArcVoting):
    """MBR selection over the members' (k-best) trees, member weights as in :class:`ArcVoting`.

    Args:
        members, weighting, exponent, weights: as :class:`~parsing.ensemble.voting.ArcVoting`
            (the weights scale each member's probability mass).
        search: ``"candidates"`` (reranking) or ``"all"`` (MST over arc marginals).
        labelled: count label errors in the loss.
        use_kbest: use members' ``extras["kbest"]`` lists when present.
        projective, single_root, tuning_folds, random_state: see
            :class:`~parsing.ensemble.base.Ensemble`.
    """

    name = "mbr"
    description = "minimum Bayes risk selection over the members' trees (Titov 2008)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = DEFAULT_MEMBERS,
        *,
        weighting: str = "uniform",
        exponent: float = 10.0,
        weights: Sequence[float] | None = None,
        search: str = "candidates",
        labelled: bool = False,
        use_kbest: bool = True,
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        super().__init__(members, weighting=weighting, exponent=exponent, weights=weights,
                         projective=projective, single_root=single_root,
                         tuning_folds=tuning_folds, random_state=random_state)
        self.search = search
        self.labelled = labelled
        self.use_kbest = use_kbest

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """:func:`mbr_parse` of ``parses`` with the learned member weights."""
        return mbr_parse(parses, self.weights_, search=self.search, labelled=self.labelled,
                         use_kbest=self.use_kbest, projective=self.projective,
                         single_root=self.single_root)
