"""Stacking: a first-order graph parser guided by the members' trees (Martins et al. 2008).

Level 0 is the members (any parsers); level 1 is :class:`StackedParser`, the first-order
graph parser (:class:`parsing.graph.first_order.FirstOrderParser`, McDonald et al. 2005) whose
arc features are extended with *stacked* features read from every level-0 tree (digest 004
§2.5-2.7, Table 1), cumulative presets (Table 2):

* ``A`` PredEdge: whether the candidate arc is in the level-0 tree, with its label, the
  two words' UPOS and the distance;
* ``B`` + Sibling: UPOS and label of the previous and next predicted siblings (children of
  the candidate head nearest to the modifier on the head side / beyond it);
* ``C`` + GrandParents: UPOS of the candidate head's predicted head, the label of the head's
  predicted arc, and the bucketed distance and direction between them;
* ``D`` + PredHead: UPOS and label of the modifier's predicted head (only when PredEdge = 0);
* ``E`` + AllChildren: the sequence of UPOS (and of labels) of the candidate head's
  predicted children, in sentence order, conjoined with the UPOS of head and modifier.

Training (digest 004 §2.4): the level-0 trees of the training data come from L-fold
jackknifing (:func:`parsing.jackknife.jackknife`, ``tuning_folds``; Martins used L = 2), so
level 1 learns how far to trust level-0 output it has not memorised; the members are then
fitted on all the data for test time. Labels come from the level-1 parser's own labeller.

``FirstOrderParser`` has no hook for extra arc features (its training loop calls
:func:`parsing.graph.templates.arc_features` directly), so :class:`StackedParser` subclasses
it and runs its own perceptron/MIRA loop over the concatenated features.

Conventions (see :mod:`parsing`): arrays over arcs are ``[dep, head]``, shape ``(n+1, n+1, F)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.decoders.first_order import mst
from parsing.ensemble.base import Ensemble, MemberParses
from parsing.features import Vocabulary, bucket_distance, hash_columns
from parsing.graph.first_order import FirstOrderParser
from parsing.graph.model import LEARNERS, Weights, _arc_scores, _chosen_softmax, online_update, train_online
from parsing.graph.templates import IntArray, TokenEncoder, arc_features, null_index
from parsing.labeller import ArcLabeller
from parsing.learn import AveragedPerceptron
from parsing.types import Heads, Parse, Sentence

PRESETS: dict[str, tuple[str, ...]] = {
    "A": ("pred_edge",),
    "B": ("pred_edge", "sibling"),
    "C": ("pred_edge", "sibling", "grandparent"),
    "D": ("pred_edge", "sibling", "grandparent", "pred_head"),
    "E": ("pred_edge", "sibling", "grandparent", "pred_head", "all_children"),
}
_NONE = -3  # id of "no such word" (no sibling, no grandparent)
_BASE = 1_000_003  # template numbers of stacked features start here (20 per member)


def _siblings(heads: Heads) -> tuple[IntArray, IntArray]:
    """Previous and next predicted sibling of every (modifier d, candidate head h): the
    children of h (in ``heads``, d excluded) nearest to d on h's side and beyond d; ``-1`` if none.
    Shapes ``(n+1, n+1)``, indexed ``[d, h]``."""
    size = heads.shape[0]
    prev = np.full((size, size), -1, dtype=np.int64)
    nxt = np.full((size, size), -1, dtype=np.int64)
    deps = np.arange(size)
    for h in range(size):
        kids = np.flatnonzero(heads == h)
        if kids.size == 0:
            continue
        below = np.searchsorted(kids, deps, side="left") - 1  # last kid < d
        above = np.searchsorted(kids, deps, side="right")  # first kid > d
        left = np.where(below >= 0, kids[np.maximum(below, 0)], -1)
        right = np.where(above < kids.size, kids[np.minimum(above, kids.size - 1)], -1)
        toward_left = deps > h  # h lies left of d: the head side is the left
        prev[:, h] = np.where(toward_left, left, right)
        nxt[:, h] = np.where(toward_left, right, left)
    return prev, nxt


def _sequence_ids(heads: Heads, values: IntArray) -> IntArray:
    """A hash per head of the sequence of ``values`` of its children (with its own slot)."""
    size = heads.shape[0]
    ids = np.zeros(size, dtype=np.int64)
    for h in range(size):
        seq = [(-9 if c == h else int(values[c])) for c in range(size) if c == h or heads[c] == h]
        ids[h] = hash_columns(7, *seq, n_bits=62) if seq else 0
    return ids


def stacked_features(upos: IntArray, heads: Heads, labels: IntArray, *, member: int,
                     groups: Iterable[str], n_bits: int) -> IntArray:
    """Stacked feature indices of every arc from one level-0 tree, shape ``(n+1, n+1, F)``.

    Args:
        upos: UPOS ids of positions ``0..n``.
        heads: the level-0 tree, shape ``(n+1,)``.
        labels: ids of its labels, shape ``(n+1,)``.
        member: the member's number (its features are kept apart).
        groups: feature groups of a :data:`PRESETS` entry.
        n_bits: hash size; the null feature is ``2**n_bits``.
    """
    size = heads.shape[0]
    d = np.arange(size)[:, None]
    h = np.arange(size)[None, :]
    safe = np.where((heads >= 0) & (heads < size), heads, 0)
    pred = (safe[d] == h).astype(np.int64) * (heads[d] >= 0)
    pd, ph = upos[d], upos[h]
    lab_d = labels[d] * pred
    dist = bucket_distance(h - d)
    t = _BASE + 20 * member
    out: list[IntArray] = []

    def add(template: int, *columns: IntArray) -> None:
        out.append(np.broadcast_to(hash_columns(t + template, *columns, n_bits=n_bits), (size, size)))

    groups = set(groups)
    if "pred_edge" in groups:
        add(0, pred)
        add(1, pred, dist)
        add(2, pred, pd, ph)
        add(3, pred, lab_d)
        add(4, pred, lab_d, pd, ph)
    if "sibling" in groups:
        prev, nxt = _siblings(heads)
        for k, sib in enumerate((prev, nxt)):
            p_sib = np.where(sib >= 0, upos[np.maximum(sib, 0)], _NONE)
            l_sib = np.where(sib >= 0, labels[np.maximum(sib, 0)], _NONE)
            add(5 + 2 * k, pred, pd, ph, p_sib, l_sib)
            add(6 + 2 * k, pred, pd, p_sib)
    if "grandparent" in groups:
        g = np.where(h > 0, safe[h], -1)  # the candidate head's predicted head (0 = ROOT)
        p_g = np.where(g >= 0, upos[np.maximum(g, 0)], _NONE)
        direction = np.where(g >= 0, bucket_distance(g - h), _NONE)
        add(9, pred, pd, ph, p_g)
        add(10, pred, pd, p_g, labels[h])
        add(11, pred, pd, direction)
    if "pred_head" in groups:
        p_hd = upos[safe[d]]
        null = null_index(n_bits)
        for k, extra in enumerate((np.zeros_like(pd), labels[d])):
            index = hash_columns(t + 12 + k, pd, ph, p_hd, extra, n_bits=n_bits)
            out.append(np.where(pred == 1, null, np.broadcast_to(index, (size, size))))
    if "all_children" in groups:
        add(14, pred, ph, pd, _sequence_ids(heads, upos)[h])
        add(15, pred, ph, pd, _sequence_ids(heads, labels)[h])
    return np.stack(out, axis=-1) if out else np.zeros((size, size, 0), dtype=np.int64)


class StackedParser(FirstOrderParser):
    """The level-1 parser: first-order features plus stacked features of level-0 trees.

    Use :meth:`fit_stacked` / :meth:`predict_stacked`; plain ``fit``/``predict`` have no
    level-0 trees and raise ``TypeError``. Hyperparameters: ``preset`` (a key of
    :data:`PRESETS`) and those of :class:`~parsing.graph.first_order.FirstOrderParser`.
    """

    name = "stacked-graph1"
    description = "first-order graph parser with stacked features (Martins et al. 2008)"

    def __init__(self, *, preset: str = "E", projective: bool = False, max_iter: int = 10,
                 learner: str = "perceptron", C: float = 0.1, patience: int = 2, n_bits: int = 22,
                 min_count: int = 2, labeller_C: float = 0.05, random_state: int | None = 0) -> None:
        super().__init__(projective=projective, max_iter=max_iter, learner=learner, C=C,
                         patience=patience, n_bits=n_bits, min_count=min_count,
                         labeller_C=labeller_C, random_state=random_state)
        self.preset = preset

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        raise TypeError("StackedParser needs level-0 trees: use fit_stacked (or parsing.ensemble.Stacking)")

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        raise TypeError("StackedParser needs level-0 trees: use predict_stacked")

    def _arcs(self, sentence: Sentence, level0: Sequence[Parse]) -> tuple[IntArray, IntArray]:
        tokens = self.encoder_.encode(sentence)
        parts = [arc_features(tokens, n_bits=self.n_bits)]
        for m, parse in enumerate(level0):
            labels = self.labels_.ids(parse.deprels)
            parts.append(stacked_features(tokens[2], np.asarray(parse.heads), labels, member=m,
                                          groups=PRESETS[self.preset], n_bits=self.n_bits))
        return tokens, np.concatenate(parts, axis=-1)

    def fit_stacked(self, sentences: Sequence[Sentence], level0: MemberParses,
                    dev: Sequence[Sentence] | None = None, dev_level0: MemberParses | None = None) -> Self:
        """Learn from gold ``sentences`` and their held-out level-0 trees.

        Args:
            sentences: training sentences with gold trees.
            level0: ``level0[member][sentence]``, produced by models that never saw the sentence.
            dev, dev_level0: optional dev sentences and level-0 trees to pick the epoch.
        """
        if self.learner not in LEARNERS or self.preset not in PRESETS:
            raise ValueError(f"bad learner {self.learner!r} or preset {self.preset!r}")
        rng = np.random.default_rng(self.random_state)
        self.encoder_ = TokenEncoder.build(sentences, min_count=self.min_count)
        self.labels_ = Vocabulary.build(label for member in level0 for p in member for label in p.deprels)
        model = AveragedPerceptron((null_index(self.n_bits) + 1,))

        def step(index: int) -> None:
            self._step(model, sentences[index], [member[index] for member in level0])

        def dev_score(weights: Weights) -> float:
            self.weights_ = weights
            return _uas(dev or [], self._parse_heads(dev or [], dev_level0 or []))

        tuned = bool(dev) and dev_level0 is not None
        kept = train_online(
            model, len(sentences), step, dev_score if tuned else None,
            max_iter=self.max_iter, patience=self.patience, rng=rng)
        self.n_iter_, self.weights_ = kept.epoch, kept.averaged
        self.labeller_ = ArcLabeller(C=self.labeller_C, random_state=self.random_state).fit(sentences)
        return self

    def _step(self, model: AveragedPerceptron, sentence: Sentence, level0: Sequence[Parse]) -> None:
        """One perceptron or 1-best MIRA update, with the stacked arc features."""
        _, arcs = self._arcs(sentence, level0)
        gold = sentence.heads
        predicted = mst(_arc_scores(arcs, model.weights), projective=self.projective)
        if np.array_equal(predicted, gold):
            return
        words = np.arange(1, len(gold))
        online_update(model, arcs[words, gold[1:]].ravel(), arcs[words, predicted[1:]].ravel(),
                      loss=float(np.count_nonzero(predicted[1:] != gold[1:])),
                      learner=self.learner, C=self.C, null=null_index(self.n_bits))

    def _parse_heads(self, sentences: Sequence[Sentence], level0: MemberParses
                     ) -> list[tuple[Heads, NDArray[np.float64]]]:
        result = []
        for i, sentence in enumerate(sentences):
            _, arcs = self._arcs(sentence, [member[i] for member in level0])
            scores = _arc_scores(arcs, self.weights_)
            heads = mst(scores, projective=self.projective)
            result.append((heads, _chosen_softmax(scores, heads)))
        return result

    def predict_stacked(self, sentences: Sequence[Sentence], level0: MemberParses) -> list[Parse]:
        """Parse ``sentences`` given their level-0 trees ``level0[member][sentence]``."""
        decoded = self._parse_heads(sentences, level0)
        proba = self.labeller_.predict_proba(sentences, [heads for heads, _ in decoded])
        return [Parse(heads=heads, deprels=self.labeller_.labels_of(p), arc_scores=confidence)
                for (heads, confidence), p in zip(decoded, proba, strict=True)]


def _uas(gold: Sequence[Sentence], decoded: Sequence[tuple[Heads, NDArray[np.float64]]]) -> float:
    correct = sum(int(np.sum(h[1:] == s.heads[1:])) for s, (h, _) in zip(gold, decoded, strict=True))
    return correct / max(sum(len(s) for s in gold), 1)


class Stacking(Ensemble):
    """Members at level 0 (jackknifed on train), a :class:`StackedParser` at level 1.

    Args:
        members: level-0 parsers (instances or names; Martins used one, MaltParser).
        preset: stacked feature preset, ``"A"`` .. ``"E"``.
        max_iter, learner, n_bits, min_count: the level-1 parser's.
        tuning_folds: L of the jackknife (Martins: 2).
        projective, single_root, random_state: see :class:`~parsing.ensemble.base.Ensemble`
            (level 1 always attaches exactly one word to ROOT).

    Attributes:
        level1_: the fitted :class:`StackedParser`.
    """

    name = "stack"
    description = "stacking: graph parser with features from jackknifed member trees (Martins 2008)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = ("eager",),
        *,
        preset: str = "E",
        max_iter: int = 10,
        learner: str = "perceptron",
        n_bits: int = 22,
        min_count: int = 2,
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        self.members = members
        self.preset = preset
        self.max_iter = max_iter
        self.learner = learner
        self.n_bits = n_bits
        self.min_count = min_count
        self.projective = projective
        self.single_root = single_root
        self.tuning_folds = tuning_folds
        self.random_state = random_state

    def _level1(self) -> StackedParser:
        return StackedParser(preset=self.preset, projective=self.projective, max_iter=self.max_iter,
                             learner=self.learner, n_bits=self.n_bits, min_count=self.min_count,
                             random_state=self.random_state)

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Jackknife the members on ``sentences``, fit them on all of it, then fit level 1."""
        level0 = self.jackknife_parses(sentences)
        self.members_ = [member.fit(sentences, dev) for member in self._new_members()]
        dev_level0 = self.member_predict(dev) if dev else None
        self.level1_ = self._level1().fit_stacked(sentences, level0, dev, dev_level0)
        return self

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Fit level 1 on gold ``tuning`` with held-out member ``parses`` of it."""
        if not tuning:
            raise ValueError("stacking needs sentences with held-out member parses")
        self.level1_ = self._level1().fit_stacked(tuning, parses)
        return self

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """Level 1's parse of ``sentence`` given the members' ``parses``."""
        return self.level1_.predict_stacked([sentence], [[parse] for parse in parses])[0]
