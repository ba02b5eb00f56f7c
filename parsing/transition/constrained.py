"""Which transitions keep the forced arcs buildable: the guide of constrained transition parsing.

Arc-eager and arc-hybrid are arc-decomposable (Goldberg & Nivre 2013): a set of arcs that a
projective tree can hold is reachable from a configuration exactly when each arc is, and each
move's dynamic-oracle cost counts the arcs it makes unreachable. Given the forced heads alone
(``-1`` on free words) as the "gold" tree, the cost counts only forced arcs, so the moves of
zero cost are exactly those that keep every forced arc buildable; the parser chooses its best
move among them.

Arc-standard with SWAP has only a static oracle (it needs the whole tree to order the words)
and no arc-decomposable cost. What it needs instead is a feasibility check over the forced
arcs, which is enough because SWAP can bring any two words together: an arc move is allowed
only when it does not give a constrained word another head than its forced one, and does not
remove a word (arc-standard removes the dependent) whose forced dependents have not been
attached yet. SHIFT and SWAP are always allowed. The check is local, not an oracle: SWAP
moves a word back only once (``s1`` must precede ``s0``), so a greedy path can still strand
a forced arc (on 24 short Wolof dev sentences with a 40-sentence model, the guided parse alone
kept every forced arc in 49 of 72 random gold constraint sets; arc-eager 71/72, arc-hybrid
72/72). The stranded cases fall back to the repair below, which is the tree the static
oracle would build for the member's tree completed around the forced arcs.

Forced labels restrict the arc moves attaching a labelled word to that label (when the model
knows it). When no allowed move is valid (forced arcs a projective system cannot build, e.g.
non-projective ones the pseudo-projective members would need lifted), every valid move is
allowed again; the parser's caller repairs the final tree
(:func:`parsing.constraints.finish_parse`).

Positions are the parser's own: for a right-to-left member the constraints are reversed first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.constraints import Constraints
from parsing.transition.state import NONE, Action, State, TransitionSystem


@dataclass(frozen=True, slots=True)
class ConstraintGuide:
    """The forced arcs of one sentence in the parser's positions, and the class mask they allow.

    Attributes:
        forced_heads: shape ``(n+1,)``, the forced head of each word or ``-1``.
        forced_label_ids: shape ``(n+1,)``, the forced label id (0-based, as the parser's
            labelled classes) of each word or ``-1``.
        class_actions: the action of every labelled class, shape ``(n_classes,)``.
        class_labels: the label id of every labelled class (``-1`` for SHIFT/REDUCE/SWAP).
        dynamic: the system has an arc-decomposable cost (arc-eager, arc-hybrid).
        involved: shape ``(n+1,)``, the words of a forced arc (its dependent or its head).
    """

    forced_heads: NDArray[np.intp]
    forced_label_ids: NDArray[np.intp]
    class_actions: NDArray[np.intp]
    class_labels: NDArray[np.intp]
    dynamic: bool
    involved: NDArray[np.bool_]

    @classmethod
    def build(cls, constraints: Constraints, n: int, label_index: dict[str, int],
              class_actions: NDArray[np.intp], class_labels: NDArray[np.intp], *, dynamic: bool
              ) -> ConstraintGuide:
        """The guide of ``constraints`` (already in the parser's positions) for ``n`` words;
        ``label_index`` maps label strings to 1-based ids (the parser's label vocabulary)."""
        label_ids = np.full(n + 1, -1, dtype=np.intp)
        for dep, label in constraints.labels.items():
            label_ids[dep] = label_index.get(label, 0) - 1
        heads = constraints.as_array(n)
        involved = (heads >= 0) | (label_ids >= 0)
        involved[heads[heads >= 0]] = True
        return cls(heads, label_ids, class_actions, class_labels, dynamic, involved)

    def quiet(self, state: State) -> bool:
        """True when no move can lose a forced arc or label here, so every valid class is allowed.

        Every move of arc-eager and arc-hybrid loses only arcs of the stack's top ``s0`` or the
        buffer's front ``b0`` (their dynamic-oracle costs count arcs with one end there), and an
        arc move of arc-standard-swap removes ``s0`` or ``s1``, whose forced head and forced
        dependents are all the check reads: with neither word in a forced arc, nothing is lost.
        """
        stack = state.stack
        top = stack[-1] if stack else -1
        other = state.b(0) if self.dynamic else (stack[-2] if len(stack) > 1 else -1)
        return not ((top >= 0 and self.involved[top]) or (other >= 0 and self.involved[other]))

    def allowed(self, system: TransitionSystem, state: State, valid: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """``valid`` (the labelled-class mask) restricted to classes keeping the forced arcs;
        ``valid`` itself when none of its classes does (module docstring)."""
        if self.quiet(state):
            return valid
        keep = valid.copy()
        for action in system.moves:
            of_action = self.class_actions == int(action)
            if not keep[of_action].any():
                continue
            if not self._keeps_arcs(system, state, action):
                keep[of_action] = False
                continue
            dependent = system.dependent(state, action)
            if dependent >= 0 and self.forced_label_ids[dependent] >= 0:
                keep[of_action & (self.class_labels != self.forced_label_ids[dependent])] = False
        return keep if keep.any() else valid

    def _keeps_arcs(self, system: TransitionSystem, state: State, action: Action) -> bool:
        if self.dynamic:
            return system.cost(state, action, self.forced_heads) == 0
        if action not in (Action.LEFT_ARC, Action.RIGHT_ARC):
            return True
        stack = state.stack
        dependent, head = (stack[-2], stack[-1]) if action == Action.LEFT_ARC else (stack[-1], stack[-2])
        if self.forced_heads[dependent] not in (NONE, head):
            return False
        pending = (self.forced_heads == dependent) & (state.heads == NONE)
        return not bool(pending.any())
