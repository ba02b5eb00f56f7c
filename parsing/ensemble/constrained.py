"""The ensemble under constraints: force the human arcs onto a combined tree.

The members parse under the constraints first (``predict_constrained``), so their trees
already agree with the forced arcs; any combination method then combines them. A combined
tree can still miss a forced arc (a combiner that scores arcs, not trees, or a tie), so
:func:`force_combined` decodes once more over the members' vote matrix with every forced
row fixed (:func:`parsing.constraints.force_onto_votes`) and the combined tree's own arcs
strongly preferred: the result equals the combined tree wherever that agrees with the forced
arcs, and is always a tree with one ROOT child containing them. Labels: forced where given,
the combined tree's where its head stands, voted by the members that chose the head elsewhere.

Partial annotation (:func:`parsing.semi.partial.partial_tree`) is the same step with the
annotator's arcs as the constraints.

The human arcs also say which members to trust in this sentence: a member whose own
(unconstrained) parse had the head the human set or confirmed is likelier right on the free
words too. :func:`sentence_weights` scales each member's vote weight by its smoothed
agreement with the human arcs, ``(prior + agreed) / (2 prior + k)`` over the ``k`` human
arcs, and :func:`vote_forced` combines the constrained members' trees by that weighted vote
(``ModelBundle.parse_constrained`` with ``adapt``, the default). Only when the human arcs
read like a review (:func:`reads_like_a_review`): arcs an annotator fixed are a sample of the
ensemble's errors, on which a minority member is right by selection; weighting members by
them alone gives that member the free words too. Measured on UD Wolof dev (graph1+eager+hybrid,
gold tags, 1,879 wrong arcs): an annotator reading left to right and confirming the words
it passes needs 1,553 edits with adapted weights, 1,573 without; one who fixes the
lowest-share wrong arc first and confirms nothing 1,706 with them, 1,678 without.

Conventions (see :mod:`parsing`): index 0 is ROOT, ``heads[0] == -1``, ``scores[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from parsing.constraints import Constraints, decode_forced, force_onto_votes, forced_labels
from parsing.decoders.first_order import last_resort
from parsing.ensemble.base import FloatArray, stack_heads, token_weights, vote_labels
from parsing.ensemble.voting import vote_matrix, vote_share
from parsing.types import Parse

__all__ = ["ADAPT_PRIOR", "force_combined", "reads_like_a_review", "sentence_weights", "vote_forced"]

ADAPT_PRIOR = 1.0
"""Pseudo-counts of :func:`sentence_weights`: one agreement and one disagreement."""


def force_combined(combined: Parse, member_parses: Sequence[Parse], weights: ArrayLike,
                   constraints: Constraints, label_weights: ArrayLike | None = None) -> Parse:
    """``combined`` with the forced arcs and labels (module docstring).

    Args:
        combined: the ensemble's tree of the sentence.
        member_parses: the members' (constrained) parses of it, ``M`` parses.
        weights: member weights of the votes, shape ``(M,)`` or ``(M, n+1)``.
        constraints: the forced arcs and labels.
        label_weights: the label vote's weights (the ensemble's own, ``(M,)``; default ``weights``).

    Returns:
        A parse whose ``arc_scores`` are the vote shares of its arcs and ``extras["votes"]``
        the vote matrix; ``combined`` itself (labels forced) when it holds every forced arc.

    Examples:
        >>> a = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> force_combined(a, [a, a], [1.0, 1.0], Constraints({2: 1, 1: 0})).heads.tolist()
        [-1, 0, 1]
    """
    member_heads = stack_heads(member_parses)
    votes = vote_matrix(member_heads, weights)
    if constraints.satisfied_by(combined.heads) and np.count_nonzero(combined.heads[1:] == 0) == 1:
        heads = combined.heads.copy()
    else:
        heads = force_onto_votes(votes, combined.heads, constraints)
    voted = vote_labels(heads, member_parses, weights if label_weights is None else label_weights)
    labels = forced_labels(heads, combined, voted, constraints)
    return Parse(heads=heads, deprels=labels, arc_scores=vote_share(member_heads, weights, heads),
                 upos=combined.upos, extras={**combined.extras, "votes": votes, "constrained": True})


def reads_like_a_review(unconstrained: Parse, constraints: Constraints) -> bool:
    """True when the ensemble's own tree had at least half of the forced arcs (and at least
    one): the human read and confirmed arcs, not only fixed the ensemble's errors.

    Examples:
        >>> tree = Parse(np.array([-1, 0, 1, 1]), ["", "root", "obj", "obl"])
        >>> reads_like_a_review(tree, Constraints({1: 0, 2: 3}))   # one confirmed, one fixed
        True
        >>> reads_like_a_review(tree, Constraints({2: 3}))         # a fix alone
        False
    """
    agreed = sum(int(unconstrained.heads[d]) == h for d, h in constraints.heads.items())
    return agreed > 0 and 2 * agreed >= len(constraints)


def sentence_weights(weights: ArrayLike, unconstrained: Sequence[Parse], constraints: Constraints,
                     prior: float = ADAPT_PRIOR) -> FloatArray:
    """Member weights for one sentence, adapted to the human arcs (module docstring).

    Args:
        weights: the members' vote weights, shape ``(M,)``.
        unconstrained: each member's own parse of the sentence, before any constraint.
        constraints: the human arcs.
        prior: pseudo-counts of agreement and of disagreement (``> 0``).

    Returns:
        shape ``(M,)``: ``weights[m] * (prior + agreed[m]) / (2 prior + k)``; ``weights``
        scaled by one half when there is no human arc.

    Examples:
        >>> a = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> b = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> sentence_weights([1.0, 1.0], [a, b], Constraints({2: 1})).tolist()
        [0.6666666666666666, 0.3333333333333333]
    """
    if prior <= 0:
        raise ValueError(f"the prior must be positive, got {prior}")
    base = np.asarray(weights, dtype=np.float64)
    agreed = np.array([sum(int(parse.heads[d]) == h for d, h in constraints.heads.items())
                       for parse in unconstrained], dtype=np.float64)
    adapted: FloatArray = base * (prior + agreed) / (2 * prior + len(constraints))
    return adapted


def vote_forced(member_parses: Sequence[Parse], weights: ArrayLike, constraints: Constraints,
                label_weights: ArrayLike | None = None) -> Parse:
    """The weighted arc vote over the members' (constrained) parses, decoded with the forced
    arcs (Chu-Liu-Edmonds, one ROOT child); labels voted by the members behind each head
    (with ``label_weights`` when given), forced where given.

    Examples:
        >>> a = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> b = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> tree = vote_forced([a, b, b], [3.0, 1.0, 1.0], Constraints({}))
        >>> tree.heads.tolist(), tree.deprels
        ([-1, 0, 1], ['', 'root', 'obj'])
    """
    member_heads = stack_heads(member_parses)
    token_weights(weights, len(member_parses), member_heads.shape[1])  # validates
    votes = vote_matrix(member_heads, weights)
    heads = decode_forced(last_resort(votes), constraints)
    labels = vote_labels(heads, member_parses, weights if label_weights is None else label_weights)
    for dep, label in constraints.labels.items():
        labels[dep] = label
    return Parse(heads=heads, deprels=labels, arc_scores=vote_share(member_heads, weights, heads),
                 extras={"votes": votes, "constrained": True})
