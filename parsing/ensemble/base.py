"""The shared base of every ensemble: members, tuning data, member weights, reparsing.

An ensemble is a meta-estimator (style guide practice 17): its ``members`` hyperparameter
holds parser instances (cloned, sklearn-style, before fitting) or member names
(:func:`parsing.members.build_member`). :meth:`Ensemble.fit` fits the members, gets the
tuning data (the dev split when given, else jackknifed held-out folds of train; never the
test split) and fits the combination on the members' parses of it. The combination itself
is :meth:`Ensemble.combine` on one sentence's member parses, so several methods can be
compared over ONE set of fitted members (:meth:`Ensemble.from_fitted`) without retraining.

Conventions (see :mod:`parsing`): index 0 is ROOT. ``member_heads`` is an integer array of
shape ``(M, n+1)`` (one row per member, ``member_heads[:, 0] == -1``); weights have shape
``(M,)`` or, per dependent, ``(M, n+1)``; vote and score matrices are ``[dep, head]`` of
shape ``(n+1, n+1)`` with row 0 and the diagonal ``-inf``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata
from sklearn.base import clone

from parsing.base import BaseParser
from parsing.decoders.first_order import last_resort, mst
from parsing.types import Heads, Parse, Scores, Sentence

FloatArray = NDArray[np.float64]
MemberParses = Sequence[Sequence[Parse]]
"""Member parses of a corpus: ``parses[member][sentence]`` (what ``predict`` returns, per member)."""

Weighting = Literal["uniform", "accuracy", "power", "rank"]
WEIGHTINGS: tuple[str, ...] = ("uniform", "accuracy", "power", "rank")
"""Weighting schemes of Green (2013) §3.1.1.2 (digest 003 §2.1): uniform (+1), dev UAS,
UAS**k ("exponential", k = ``exponent``) and rank ("plural") votes."""


# --------------------------------------------------------------------------- pure helpers


def stack_heads(parses: Sequence[Parse]) -> NDArray[np.intp]:
    """Members' heads of one sentence as an array of shape ``(M, n+1)``.

    Raises:
        ValueError: no parses, or parses of different lengths.
    """
    if not parses:
        raise ValueError("an ensemble needs at least one member parse")
    sizes = {len(parse.heads) for parse in parses}
    if len(sizes) != 1:
        raise ValueError(f"member parses have different lengths {sorted(sizes)}")
    return np.stack([np.asarray(parse.heads, dtype=np.intp) for parse in parses])


def member_accuracy(gold: Sequence[Sentence], parses: MemberParses) -> FloatArray:
    """Unlabelled attachment score (a fraction) of every member on ``gold``, shape ``(M,)``.

    Examples:
        >>> gold = [Sentence.from_words(["a", "b"], heads=[2, 0])]
        >>> right, wrong = Parse(np.array([-1, 2, 0]), []), Parse(np.array([-1, 0, 1]), [])
        >>> member_accuracy(gold, [[right], [wrong]]).tolist()
        [1.0, 0.0]
    """
    if not gold:
        raise ValueError("no tuning sentences to measure member accuracy on")
    gold_heads = np.concatenate([s.heads[1:] for s in gold])
    return np.array([
        float(np.mean(np.concatenate([p.heads[1:] for p in member]) == gold_heads))
        for member in parses
    ])  # fmt: skip


def scheme_weights(accuracies: ArrayLike, scheme: str, *, exponent: float = 10.0) -> FloatArray:
    """Member weights from tuning accuracies under one of :data:`WEIGHTINGS`.

    ``uniform``: 1 each; ``accuracy``: UAS_p; ``power``: UAS_p ** exponent (Green's
    UAS^X, X = 10 best for English); ``rank``: the best of M members gets M votes, the worst
    1 (tied accuracies share the average rank).

    Examples:
        >>> scheme_weights([0.92, 0.86, 0.88], "rank").tolist()
        [3.0, 1.0, 2.0]
        >>> scheme_weights([0.5, 1.0], "power", exponent=2).tolist()
        [0.25, 1.0]
    """
    acc = np.asarray(accuracies, dtype=np.float64)
    if scheme == "uniform":
        return np.ones_like(acc)
    if scheme == "accuracy":
        return acc.copy()
    if scheme == "power":
        return np.asarray(acc**exponent, dtype=np.float64)
    if scheme == "rank":
        return np.asarray(rankdata(acc, method="average"), dtype=np.float64)
    raise ValueError(f"unknown weighting {scheme!r}; known: {', '.join(WEIGHTINGS)}")


def token_weights(weights: ArrayLike, n_members: int, size: int) -> FloatArray:
    """Weights broadcast to one per member and position, shape ``(M, n+1)``."""
    array = np.asarray(weights, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.shape[0] != n_members:
        raise ValueError(f"{array.shape[0]} weights for {n_members} members")
    if np.any(array < 0) or not np.all(np.isfinite(array)):
        raise ValueError("member weights must be finite and non-negative")
    return np.broadcast_to(array, (n_members, size)).astype(np.float64)


def reparse(scores: ArrayLike, *, projective: bool = False, single_root: bool = True) -> Heads:
    """Maximum spanning tree over a vote or score matrix in which ``-inf`` marks an arc no
    member proposed (Green's *incomplete graph*, digest 003 §2.1).

    Absent arcs stay usable as a last resort, at a cost larger than any possible total of
    the finite entries, so the tree uses as few of them as it can (none whenever a tree of
    proposed arcs satisfies ``projective``/``single_root``) yet always exists.

    Args:
        scores: shape ``(n+1, n+1)``, ``scores[dep, head]``.
        projective: decode with Eisner instead of Chu-Liu-Edmonds.
        single_root: exactly one word attaches to ROOT.

    Returns:
        heads, shape ``(n+1,)``, ``heads[0] == -1``.

    Examples:
        >>> votes = np.full((3, 3), -np.inf); votes[1, 0] = votes[2, 0] = 2.0
        >>> reparse(votes).tolist()  # single root forces one unproposed arc
        [-1, 0, 1]
    """
    return mst(last_resort(scores), projective=projective, single_root=single_root)



def vote_labels(heads: ArrayLike, parses: Sequence[Parse], weights: ArrayLike) -> list[str]:
    """Every word's label by weighted vote among the members that chose its winning head.

    When no member chose the winning head, all members vote (with their labels for that
    word). Ties go to the label first proposed in member order.

    Args:
        heads: the ensemble's heads, shape ``(n+1,)``.
        parses: the members' parses of the sentence.
        weights: shape ``(M,)`` or ``(M, n+1)``.

    Examples:
        >>> a = Parse(np.array([-1, 0]), ["", "root"]); b = Parse(np.array([-1, 0]), ["", "dep"])
        >>> vote_labels([-1, 0], [a, b], [1.0, 2.0])
        ['', 'dep']
    """
    chosen = np.asarray(heads, dtype=np.intp)
    member_heads = stack_heads(parses)
    weight = token_weights(weights, len(parses), chosen.shape[0])
    labels = [""]
    for dep in range(1, chosen.shape[0]):
        voters = np.flatnonzero(member_heads[:, dep] == chosen[dep])
        if voters.size == 0:
            voters = np.arange(len(parses))
        tally: dict[str, float] = {}
        for member in voters.tolist():
            label = parses[member].deprels[dep]
            tally[label] = tally.get(label, 0.0) + float(weight[member, dep]) + 1e-9
        labels.append(max(tally, key=lambda key: tally[key]))  # first maximum = member order
    return labels


def tie_break(n_members: int) -> FloatArray:
    """Tiny per-member bonuses, shape ``(M,)``: earlier members win exact ties.

    Green leaves ties unspecified (digest 003 §2.1); this breaks them deterministically in
    member order, far below any difference of weights that matters (``1e-6`` per vote).
    """
    return 1e-6 * (n_members - np.arange(n_members)) / max(n_members, 1)


# --------------------------------------------------------------------------- the estimator


class Ensemble(BaseParser):
    """Base of the ensemble parsers: fits members and delegates to :meth:`combine`.

    Subclasses define ``__init__`` with all their hyperparameters (sklearn's ``get_params``
    reads the signature), :meth:`fit_combiner` and :meth:`combine`.

    Args (hyperparameters shared by every subclass):
        members: parser instances (cloned before fitting) or member names.
        projective: decode with Eisner (projective output) instead of Chu-Liu-Edmonds.
        single_root: exactly one word attaches to ROOT (UD's rule).
        tuning_folds: folds of train that give the tuning data when ``fit`` has no dev.
        random_state: seed of the folds and of any randomness in the combination.
    """

    members: Sequence[BaseParser | str]
    projective: bool
    single_root: bool
    tuning_folds: int
    random_state: int | None

    @property
    def needs_tuning(self) -> bool:
        """Whether :meth:`fit_combiner` learns anything (else ``fit`` skips the tuning data)."""
        return True

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_fitted(
        cls,
        members: Sequence[BaseParser],
        tuning: Sequence[Sentence] | None = None,
        tuning_parses: MemberParses | None = None,
        **params: Any,
    ) -> Self:
        """An ensemble over already-fitted members, its combination fitted on ``tuning``.

        Args:
            members: fitted parsers (kept, not cloned; ``sklearn.base.clone`` of the result
                gives unfitted copies as usual).
            tuning: gold tuning sentences (dev, never test); may be omitted when the
                method learns nothing (e.g. uniform voting).
            tuning_parses: the members' parses of ``tuning`` (``[member][sentence]``),
                to avoid parsing it again; computed when omitted.
            params: the other hyperparameters of ``cls``.
        """
        ensemble = cls(members=list(members), **params)
        ensemble.members_ = list(members)
        if tuning is not None:
            parses = tuning_parses if tuning_parses is not None else ensemble.member_predict(tuning)
            ensemble.fit_combiner(tuning, parses)
        elif ensemble.needs_tuning:
            raise ValueError(f"{cls.__name__} learns from tuning data; pass tuning sentences")
        else:
            ensemble.fit_combiner([], [[] for _ in members])
        return ensemble

    def _new_members(self) -> list[BaseParser]:
        from parsing.members import build_member, member_seed

        built: list[BaseParser] = []
        for member in self.members:
            if isinstance(member, str):
                seed = None if self.random_state is None else member_seed(member, self.random_state)
                built.append(build_member(member, random_state=seed))
            else:
                built.append(clone(member))
        if not built:
            raise ValueError("an ensemble needs at least one member")
        return built

    # ------------------------------------------------------------------ fitting
    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Fit the members on ``sentences`` and the combination on tuning data."""
        self.members_ = [member.fit(sentences, dev) for member in self._new_members()]
        if not self.needs_tuning:
            return self.fit_combiner([], [[] for _ in self.members_])
        tuning, parses = self.tuning_data(sentences, dev)
        return self.fit_combiner(tuning, parses)

    def tuning_data(
        self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None
    ) -> tuple[list[Sentence], list[list[Parse]]]:
        """Gold tuning sentences and the members' parses of them.

        The dev split when there is one (parsed by the fitted members); otherwise every
        training sentence parsed by copies of the members fitted on the other
        ``tuning_folds`` folds (:func:`parsing.jackknife.jackknife`).
        """
        if dev:
            return list(dev), self.member_predict(dev)
        return list(sentences), self.jackknife_parses(sentences)

    def jackknife_parses(self, sentences: Sequence[Sentence]) -> list[list[Parse]]:
        """Every member's parses of ``sentences``, each fold parsed by a copy that never saw it."""
        from parsing.jackknife import jackknife

        def fit_predict(train: list[Sentence], held_out: list[Sentence]) -> list[list[Parse]]:
            fitted = [member.fit(train) for member in self._new_members()]
            per_member = [member.predict(held_out) for member in fitted]
            return [[parses[i] for parses in per_member] for i in range(len(held_out))]

        by_sentence = jackknife(list(sentences), fit_predict, folds=self.tuning_folds,
                                random_state=self.random_state)
        return [[row[m] for row in by_sentence] for m in range(len(self.members))]

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Learn the combination from gold ``tuning`` and the members' ``parses`` of it."""
        return self

    # ------------------------------------------------------------------ prediction
    def member_predict(self, sentences: Sequence[Sentence]) -> list[list[Parse]]:
        """Every fitted member's parses, ``[member][sentence]``."""
        return [member.predict(sentences) for member in self.members_]

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse with every member, then combine each sentence's member parses."""
        return self.combine_all(sentences, self.member_predict(sentences))

    def combine_all(self, sentences: Sequence[Sentence], parses: MemberParses) -> list[Parse]:
        """:meth:`combine` every sentence; ``parses[member][sentence]`` as ``predict`` gives."""
        return [
            self.combine([member[i] for member in parses], sentence)
            for i, sentence in enumerate(sentences)
        ]

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """The ensemble's parse of ``sentence`` from its members' parses (one per member)."""
        raise NotImplementedError

    def decode(self, scores: Scores) -> Heads:
        """:func:`reparse` with this ensemble's ``projective`` and ``single_root``."""
        return reparse(scores, projective=self.projective, single_root=self.single_root)
