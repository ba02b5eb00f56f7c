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

Conventions (see :mod:`parsing`): index 0 is ROOT, ``heads[0] == -1``, ``scores[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from parsing.constraints import Constraints, force_onto_votes, forced_labels
from parsing.ensemble.base import stack_heads, vote_labels
from parsing.ensemble.voting import vote_matrix, vote_share
from parsing.types import Parse

__all__ = ["force_combined"]


def force_combined(combined: Parse, member_parses: Sequence[Parse], weights: ArrayLike,
                   constraints: Constraints) -> Parse:
    """``combined`` with the forced arcs and labels (module docstring).

    Args:
        combined: the ensemble's tree of the sentence.
        member_parses: the members' (constrained) parses of it, ``M`` parses.
        weights: member weights of the votes, shape ``(M,)`` or ``(M, n+1)``.
        constraints: the forced arcs and labels.

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
    labels = forced_labels(heads, combined, vote_labels(heads, member_parses, weights), constraints)
    return Parse(heads=heads, deprels=labels, arc_scores=vote_share(member_heads, weights, heads),
                 upos=combined.upos, extras={**combined.extras, "votes": votes, "constrained": True})
