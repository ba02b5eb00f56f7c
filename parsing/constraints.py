"""Constrained parsing: arcs a human has fixed, which every member and the ensemble must keep.

One home for constraints (issue 12, interactive re-parsing): a frozen :class:`Constraints`
holds forced arcs ``{dependent: head}`` and optional forced labels ``{dependent: label}``;
:meth:`Constraints.validate` checks them against a sentence (indices in range, no
self-loop, the forced arcs form a forest, at most one forced ROOT child), so a tree with
exactly one ROOT child containing them always exists.

Helpers every member uses:

* :func:`force_scores`: graph decoders (Chu-Liu-Edmonds, Eisner, second-order Eisner and
  rearrangement) take ``-inf`` as a forbidden arc, so the row of a constrained word is set
  to ``-inf`` except at its forced head; the decoders then never choose another head.
* :func:`repair_heads`: the fallback of members that decode approximately (greedy
  transition systems, beam search, pseudo-projective lifting): the best tree containing the
  forced arcs that keeps as many of the member's own arcs as possible (Chu-Liu-Edmonds over
  the member's arcs, each worth ``1 + confidence``, with forced rows).
* :func:`finish_parse`: repair if needed, then write the forced labels.
* :func:`force_onto_votes`: the ensemble's step (and :func:`parsing.semi.partial.partial_tree`'s):
  members' vote matrix, the combined tree's arcs strongly preferred, forced rows, reparse.

Conventions (see :mod:`parsing`): index 0 is ROOT, ``heads[0] == -1``, ``scores[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from parsing.decoders.first_order import chu_liu_edmonds, last_resort, mst
from parsing.trees import find_cycle
from parsing.types import Heads, Parse, Scores

__all__ = [
    "Constraints",
    "finish_parse",
    "force_onto_votes",
    "force_scores",
    "forced_labels",
    "keep_previous_labels",
    "decode_forced",
    "repair_heads",
    "validate_all",
]

_PREFERRED = 1000.0
"""Bonus of the combined tree's own arc in :func:`force_onto_votes`: above any vote total."""


@dataclass(frozen=True, slots=True)
class Constraints:
    """Forced arcs of one sentence.

    Attributes:
        heads: dependent -> head (``0`` is ROOT); words ``1..n``.
        labels: dependent -> label, for some of the constrained dependents (a label without
            a forced head is allowed too: only the label is then forced).

    Examples:
        >>> c = Constraints({2: 0, 1: 2}, {1: "nsubj"})
        >>> c.validate(3); c.as_array(3).tolist()
        [-1, 2, 0, -1]
    """

    heads: Mapping[int, int] = field(default_factory=dict)
    labels: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "heads", MappingProxyType({int(d): int(h) for d, h in self.heads.items()}))
        object.__setattr__(self, "labels", MappingProxyType({int(d): str(x) for d, x in self.labels.items()}))

    def __len__(self) -> int:
        return len(self.heads)

    def __reduce__(self) -> tuple[type[Constraints], tuple[dict[int, int], dict[int, str]]]:
        """Pickle as plain dicts (a mapping proxy does not pickle), e.g. for worker processes."""
        return (Constraints, (dict(self.heads), dict(self.labels)))

    @classmethod
    def from_tree(cls, heads: ArrayLike, deprels: Sequence[str] | None, words: ArrayLike) -> Constraints:
        """The arcs (and labels, when ``deprels`` is given) of ``heads`` for the given words."""
        array = np.asarray(heads)
        chosen = [int(w) for w in np.asarray(words).reshape(-1)]
        labels = {w: deprels[w] for w in chosen} if deprels is not None else {}
        return cls({w: int(array[w]) for w in chosen}, labels)

    def validate(self, n: int) -> None:
        """Check the constraints against an ``n``-word sentence.

        Raises:
            ValueError: a word or head out of range, a self-loop, a cycle among the forced
                arcs, more than one forced ROOT child, or a label on an unknown word.
        """
        for dep, head in self.heads.items():
            if not 1 <= dep <= n:
                raise ValueError(f"constrained word {dep} is not a word of this {n}-word sentence")
            if not 0 <= head <= n:
                raise ValueError(f"head {head} of word {dep} is outside 0..{n}")
            if head == dep:
                raise ValueError(f"word {dep} cannot be its own head")
        for dep in self.labels:
            if not 1 <= dep <= n:
                raise ValueError(f"labelled word {dep} is not a word of this {n}-word sentence")
        roots = sorted(dep for dep, head in self.heads.items() if head == 0)
        if len(roots) > 1:
            raise ValueError(f"at most one word may be forced under ROOT, got {roots}")
        cycle = find_cycle(self.as_array(n))
        if cycle is not None:
            raise ValueError(f"the forced arcs form a cycle through words {cycle}")

    def as_array(self, n: int) -> Heads:
        """Forced heads as an array of shape ``(n+1,)``; ``-1`` for free words (and ROOT)."""
        array = np.full(n + 1, -1, dtype=np.intp)
        for dep, head in self.heads.items():
            array[dep] = head
        return array

    def reversed(self, n: int) -> Constraints:
        """The same constraints on the reversed sentence (word ``d`` becomes ``n+1-d``), for the
        right-to-left members."""
        def flip(i: int) -> int:
            return n + 1 - i if i > 0 else i
        return Constraints({flip(d): flip(h) for d, h in self.heads.items()},
                           {flip(d): label for d, label in self.labels.items()})

    def within(self, other: Constraints) -> bool:
        """True when every forced arc and label of these constraints is also forced, the same,
        by ``other`` (``other`` allows only trees these allow: the editor's next edit).

        Examples:
            >>> Constraints({1: 2}).within(Constraints({1: 2, 3: 2}, {1: "nsubj"}))
            True
            >>> Constraints({1: 2}, {1: "obj"}).within(Constraints({1: 2}, {1: "nsubj"}))
            False
        """
        return (all(other.heads.get(dep) == head for dep, head in self.heads.items())
                and all(other.labels.get(dep) == label for dep, label in self.labels.items()))

    def satisfied_by(self, heads: ArrayLike, deprels: Sequence[str] | None = None) -> bool:
        """True when ``heads`` (and ``deprels``, when given) contain every forced arc (label)."""
        array = np.asarray(heads)
        if any(int(array[d]) != h for d, h in self.heads.items()):
            return False
        return deprels is None or all(deprels[d] == label for d, label in self.labels.items())


def validate_all(sentence_lengths: Sequence[int], constraints: Sequence[Constraints]) -> None:
    """:meth:`Constraints.validate` for each sentence (``ValueError`` naming the sentence)."""
    if len(sentence_lengths) != len(constraints):
        raise ValueError(f"{len(constraints)} constraint sets for {len(sentence_lengths)} sentences")
    for index, (n, forced) in enumerate(zip(sentence_lengths, constraints, strict=True)):
        try:
            forced.validate(n)
        except ValueError as error:
            raise ValueError(f"sentence {index}: {error}") from None


def force_scores(scores: ArrayLike, constraints: Constraints) -> Scores:
    """A copy of ``scores`` (shape ``(n+1, n+1)``, ``[dep, head]``) in which every constrained
    word's row is ``-inf`` except at its forced head (which keeps its score, ``0`` if it was
    ``-inf``); a decoder that treats ``-inf`` as forbidden then keeps the forced arcs.

    Examples:
        >>> s = np.zeros((3, 3)); force_scores(s, Constraints({1: 2}))[1].tolist()
        [-inf, -inf, 0.0]
    """
    forced = np.array(scores, dtype=np.float64, copy=True)
    for dep, head in constraints.heads.items():
        keep = forced[dep, head] if np.isfinite(forced[dep, head]) else 0.0
        forced[dep, :] = -np.inf
        forced[dep, head] = keep
    return forced


def decode_forced(scores: ArrayLike, constraints: Constraints, *, projective: bool = False) -> Heads:
    """Best single-rooted tree under ``scores`` containing every forced arc.

    With ``projective`` Eisner is tried first; when the forced arcs admit no projective tree
    (they may come from a non-projective gold tree) Chu-Liu-Edmonds decodes instead.
    """
    forced = force_scores(scores, constraints)
    if projective:
        try:
            return mst(forced, projective=True)
        except ValueError:
            pass
    return chu_liu_edmonds(forced)


def repair_heads(heads: ArrayLike, constraints: Constraints,
                 confidence: ArrayLike | None = None) -> Heads:
    """The tree containing the forced arcs that keeps most of ``heads`` (shape ``(n+1,)``).

    Each own arc is worth ``1 + confidence[d]`` (confidence in ``[0, 1]``, 0 when ``None``
    or NaN), every other arc 0, the forced rows only their forced head (Chu-Liu-Edmonds with
    one ROOT child). When ``heads`` already is a single-rooted tree containing the
    constraints it comes back unchanged.
    """
    array = np.asarray(heads, dtype=np.intp)
    size = array.shape[0]
    bonus = np.ones(size) if confidence is None else 1.0 + np.nan_to_num(
        np.clip(np.asarray(confidence, dtype=np.float64), 0.0, 1.0), nan=0.0)
    scores = np.zeros((size, size))
    words = np.arange(1, size)
    own = array[1:]
    ok = (own >= 0) & (own < size)
    scores[words[ok], own[ok]] = bonus[1:][ok]
    return decode_forced(scores, constraints)


def finish_parse(parse: Parse, constraints: Constraints) -> Parse:
    """``parse`` with the forced arcs (repaired in if missing, see :func:`repair_heads`) and
    the forced labels. A word whose head changed in the repair keeps its label unless forced;
    its ``arc_scores`` entry becomes 0 (the member did not choose that arc)."""
    heads = parse.heads
    arc_scores = parse.arc_scores
    if not constraints.satisfied_by(heads) or np.count_nonzero(heads[1:] == 0) != 1:
        heads = repair_heads(heads, constraints, parse.arc_scores)
        if arc_scores is not None:
            arc_scores = np.where(heads == parse.heads, arc_scores, 0.0)
            arc_scores[0] = np.nan
    deprels = list(parse.deprels)
    for dep, label in constraints.labels.items():
        deprels[dep] = label
    return replace(parse, heads=heads, deprels=deprels, arc_scores=arc_scores,
                   extras={**parse.extras, "constrained": True})


def force_onto_votes(votes: ArrayLike, preferred: ArrayLike, constraints: Constraints) -> Heads:
    """Reparse a vote matrix with the forced arcs, the ``preferred`` tree's arcs strongly preferred.

    Args:
        votes: the members' vote matrix, shape ``(n+1, n+1)`` (``-inf``: nobody proposed it).
        preferred: heads of the combined tree, shape ``(n+1,)``; each of its arcs (on free
            words) gets a bonus above any vote total, so the result equals it wherever it
            agrees with the forced arcs.
        constraints: the forced arcs.

    Returns:
        heads, shape ``(n+1,)``: a single-rooted tree containing every forced arc; arcs
        nobody proposed are used only where no tree of proposed arcs exists.
    """
    matrix = last_resort(votes)
    size = matrix.shape[0]
    tree = np.asarray(preferred, dtype=np.intp)
    for dep in range(1, size):
        if dep not in constraints.heads and 0 <= tree[dep] < size:
            matrix[dep, tree[dep]] += _PREFERRED
    return decode_forced(matrix, constraints)


def forced_labels(heads: Heads, preferred: Parse, fallback: Sequence[str],
                  constraints: Constraints) -> list[str]:
    """Labels of a forced tree: forced labels where given, the preferred parse's label where
    the head is unchanged, ``fallback`` (e.g. voted labels) elsewhere, except that a word newly
    attached to ROOT takes the label of the preferred parse's root word (``root`` in UD): the
    votes for a word no member attached to ROOT name a dependent's relation.

    Examples:
        >>> preferred = Parse(np.array([-1, 0, 1, 1]), ["", "root", "nmod", "obj"])
        >>> forced_labels(np.array([-1, 3, 1, 0]), preferred, ["", "nsubj", "nmod", "nmod"],
        ...               Constraints({1: 3}))
        ['', 'nsubj', 'nmod', 'root']
    """
    root_words = np.flatnonzero(preferred.heads[1:] == 0) + 1
    root_label = preferred.deprels[int(root_words[0])] if root_words.size else None
    labels = [""]
    for dep in range(1, len(heads)):
        if dep in constraints.labels:
            labels.append(constraints.labels[dep])
        elif heads[dep] == preferred.heads[dep]:
            labels.append(preferred.deprels[dep])
        elif heads[dep] == 0 and root_label is not None:
            labels.append(root_label)
        else:
            labels.append(fallback[dep])
    return labels


def keep_previous_labels(parse: Parse, previous: Parse, constraints: Constraints) -> Parse:
    """``parse`` with ``previous``'s label on every free word whose head did not change and
    whose neighbourhood did not either.

    Re-parsing around a human's arcs should change what follows from them, not relabel arcs
    far from them (label churn an annotator would have to check again). A word's label does
    follow from the arcs around it (the labeller reads the head's head and the siblings; the
    members vote labels by the trees around them), so a free word takes the new label when its
    own head, its head's arc, or the arc of another dependent of its head (before or after)
    moved, or was forced to something ``previous`` did not have; otherwise it keeps its
    previous label. Label changes alone do not spread (two free siblings cannot justify each
    other's new label).
    """
    size = len(parse.heads)
    moved = {d for d in range(1, size) if parse.heads[d] != previous.heads[d]}
    moved |= {d for d, h in constraints.heads.items() if previous.heads[d] != h}
    moved |= {d for d, label in constraints.labels.items() if previous.deprels[d] != label}
    around: dict[int, set[int]] = {}
    for d in moved:
        for head in (int(parse.heads[d]), int(previous.heads[d])):
            around.setdefault(head, set()).add(d)

    def keeps(d: int) -> bool:
        head = int(parse.heads[d])
        if d in constraints.labels or d in moved or head in moved:
            return False
        return not around.get(head, set()) - {d}

    deprels = [previous.deprels[d] if d and keeps(d) else label for d, label in enumerate(parse.deprels)]
    return replace(parse, deprels=deprels)
