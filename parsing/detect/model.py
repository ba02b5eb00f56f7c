"""The arc error detector: a calibrated probability that each arc of a tree is wrong.

An arc is *wrong* when its head or its universal label differs from the gold tree (an LAS
error). :func:`fit_detector` learns that from trees the members were **not** trained on (the
members' and the ensemble's parses of dev, or of held-out sentences) with the gold trees beside
them; the treebank counts (:mod:`parsing.detect.counts`) come from the training trees.

Classifier: scikit-learn's :class:`~sklearn.ensemble.HistGradientBoostingClassifier` on the
rows of :mod:`parsing.detect.features`, stored as :class:`~parsing.detect.boosting.BoostedTrees`
(no pickle). Calibration: Platt scaling (a logistic curve of the raw score) fitted on
*jackknifed* raw scores: the training sentences are split into ``folds`` folds and each fold's
words are scored by trees fitted on the other folds only (:func:`jackknife_rows`), so the curve
sees scores like those of unseen words. Those jackknifed probabilities are kept as the
detector's scores of its own training words (:attr:`ArcDetector.training_scores`): a word is
never scored by a model trained on it. Platt's curve is monotone, so it changes no ranking.

Shapes: a corpus of ``S`` sentences gives ``W = sum(n_s)`` rows; ``p_wrong`` per sentence is
``(n_s,)`` (word ``d`` at index ``d - 1``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from parsing.detect.boosting import BoostedTrees, FloatArray
from parsing.detect.counts import TreebankCounts, tree_events
from parsing.detect.features import confidence_features, feature_names, output_features, word_features
from parsing.ensemble.base import stack_heads
from parsing.jackknife import fold_assignment
from parsing.persist import load_model, save_model
from parsing.scorer.metrics import universal
from parsing.types import Parse, Sentence

DEFAULT_PARAMS: dict[str, Any] = {"learning_rate": 0.05, "max_iter": 100, "max_leaf_nodes": 7,
                                  "min_samples_leaf": 40, "l2_regularization": 1.0}
"""The gradient boosting's settings, chosen on dev only (``bench/detect.py --set``, the jackknifed dev
AUC and top-30% share of Telugu and Tamil, predicted tags): of 7/15/31 leaves, 50-300 trees and
20/40 words per leaf, small trees and few of them did best on these few thousand dev words (mean
dev AUC 0.831 and top-30% share 0.683 against 0.827 and 0.664 for 15 leaves and 200 trees)."""


@dataclass(slots=True)
class ScoredTree:
    """One tree to score and what the detector needs beside it.

    Attributes:
        sentence: the words, with the tags to use (``upos``).
        heads, deprels: the tree scored, ``n+1`` each.
        member_parses: the members' parses by name (every member of the detector).
        own: the events of this sentence's tree as the counts counted it, when it is one of the
            training trees (:func:`~parsing.detect.counts.tree_events`); ``None`` otherwise.
        given: a person's tree (gold, reviewed, imported), not the ensemble's parse.
    """

    sentence: Sentence
    heads: NDArray[np.intp]
    deprels: list[str]
    member_parses: Mapping[str, Parse]
    own: Counter[str] | None = None
    given: bool = False


def wrong_arcs(trees: Sequence[ScoredTree], gold: Sequence[Sentence]) -> NDArray[np.bool_]:
    """Whether each word's arc is an LAS error (head or universal label differs), shape ``(W,)``.

    Raises:
        ValueError: different numbers of sentences or words.
    """
    if len(trees) != len(gold):
        raise ValueError(f"{len(trees)} scored trees but {len(gold)} gold sentences")
    wrong = []
    for tree, sentence in zip(trees, gold, strict=True):
        if len(tree.heads) != len(sentence.heads):
            raise ValueError(f"sentence {sentence.sent_id or ''}: the scored tree and the gold tree "
                             "have different lengths")
        pairs = zip(tree.deprels[1:], sentence.deprels[1:], strict=True)
        labels = np.array([universal(a) != universal(b) for a, b in pairs], dtype=bool)
        wrong.append((tree.heads[1:] != sentence.heads[1:]) | labels)
    return np.concatenate(wrong) if wrong else np.zeros(0, dtype=bool)


def jackknife_rows(x: FloatArray, y: NDArray[np.bool_], groups: NDArray[np.intp],
                   fit: Callable[[FloatArray, NDArray[np.bool_]], Callable[[FloatArray], FloatArray]],
                   *, folds: int = 5, random_state: int | None = 0) -> FloatArray:
    """Each row's score from a model fitted without the rows of its group (sentence).

    Args:
        x, y: rows ``(W, F)`` and labels ``(W,)``.
        groups: each row's sentence, shape ``(W,)``; whole sentences go to one fold.
        fit: fits a model on rows and labels, returns its scoring function.
        folds: number of folds (at most the number of groups).

    Returns:
        Scores, shape ``(W,)``.
    """
    names, group_index = np.unique(groups, return_inverse=True)
    folds = min(folds, len(names))
    assignment = fold_assignment(len(names), folds, random_state)[group_index]
    scores = np.full(len(y), np.nan)
    for fold in range(folds):
        held = assignment == fold
        score = fit(x[~held], y[~held])
        scores[held] = score(x[held])
    return scores


def _fit_trees(params: Mapping[str, Any], random_state: int | None
               ) -> Callable[[FloatArray, NDArray[np.bool_]], Callable[[FloatArray], FloatArray]]:
    def fit(x: FloatArray, y: NDArray[np.bool_]) -> Callable[[FloatArray], FloatArray]:
        trees = fit_boosted_trees(x, y, params, random_state)
        return trees.decision_function
    return fit


def fit_boosted_trees(x: FloatArray, y: NDArray[np.bool_], params: Mapping[str, Any],
                      random_state: int | None) -> BoostedTrees:
    """Gradient-boosted trees on ``x``/``y`` (both classes needed).

    Raises:
        ValueError: ``y`` has a single class (every arc right, or every arc wrong).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    if len(np.unique(y)) < 2:
        raise ValueError("the detector needs both right and wrong arcs to learn from; these trees "
                         f"have only {'wrong' if len(y) and y[0] else 'right'} ones")
    model = HistGradientBoostingClassifier(early_stopping=False, random_state=random_state, **params)
    empty = np.all(np.isnan(x), axis=0)  # e.g. lemma counts of a treebank without lemmas
    if empty.any():  # scikit-learn cannot bin a column without values; no split can use it anyway
        x = x.copy()
        x[:, empty] = 0.0
    with threadpool_limits(limits=1, user_api="openmp"):  # see below
        model.fit(x, y.astype(np.int64))
    return BoostedTrees.from_sklearn(model)


# scikit-learn's boosting spreads each fit over every core with OpenMP, whose threads spin while
# they wait: on our 2-core machines, beside a web process or another job, six fits of a round's
# detector took 4.5 s that way against 1.2 s on one thread (and a test round timed out), so a
# fit keeps to one thread, like the members' BLAS (parsing.cli).


def platt(raw: FloatArray, y: NDArray[np.bool_]) -> tuple[float, float]:
    """``(a, b)`` of the logistic curve ``p = 1 / (1 + exp(-(a * raw + b)))`` fitted to ``y``
    (maximum likelihood, lightly regularised)."""
    from sklearn.linear_model import LogisticRegression

    curve = LogisticRegression(C=100.0).fit(raw.reshape(-1, 1), y.astype(np.int64))
    return float(curve.coef_[0, 0]), float(curve.intercept_[0])


def _sigmoid(z: FloatArray) -> FloatArray:
    result: FloatArray = 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))
    return result


@dataclass(slots=True)
class ArcDetector:
    """A fitted detector (:func:`fit_detector`); saves as arrays plus JSON (:meth:`save`).

    Attributes:
        members: the members whose parses it reads, in feature order; weights: their vote weights.
        upos_tags, labels: the one-hot vocabularies (tags and universal labels of the training trees).
        counts: the training trees' counts.
        trees: the boosted trees; platt_a, platt_b: the calibration curve.
        feature_names: one per column.
        training_scores: jackknifed ``p_wrong`` of its own training words, shape ``(W,)``.
        training_wrong: whether each training word's arc was wrong, shape ``(W,)``.
        training_given: whether it was a word of a given (corrupted gold) tree, shape ``(W,)``.
        params: the boosting's settings; folds: jackknife folds.
        confident: the members whose arc probabilities it reads (:func:`member_probabilities`;
            empty for detectors saved before they were read).
        outputs: the members whose own tags and probabilities it reads
            (:func:`~parsing.detect.features.output_features`; empty for detectors saved before).
    """

    members: list[str]
    weights: list[float]
    upos_tags: list[str]
    labels: list[str]
    counts: TreebankCounts
    trees: BoostedTrees
    platt_a: float
    platt_b: float
    feature_names: list[str]
    training_scores: FloatArray = field(default_factory=lambda: np.zeros(0))
    training_wrong: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    training_given: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    params: dict[str, Any] = field(default_factory=dict)
    folds: int = 5
    confident: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def matrix(self, trees: Sequence[ScoredTree]) -> FloatArray:
        """Rows of every tree stacked, shape ``(W, F)`` (:func:`feature_matrix`), in the columns
        it was fitted on: a detector saved before a column was added reads the columns it knows.

        Raises:
            ValueError: it was fitted on a column this code no longer computes.
        """
        x = feature_matrix(trees, self.members, self.weights, self.counts, self.upos_tags, self.labels,
                           self.confident, self.outputs)
        where = {name: i for i, name in enumerate(feature_names(self.members, self.upos_tags, self.labels,
                                                                 self.confident, self.outputs))}
        if lost := [name for name in self.feature_names if name not in where]:
            raise ValueError(f"the detector was fitted on columns this version does not compute "
                             f"({', '.join(lost[:5])}); fit it again (python -m parsing fit-detector)")
        return x if list(where) == self.feature_names else x[:, [where[name] for name in self.feature_names]]

    def calibrate(self, raw: FloatArray) -> FloatArray:
        """Probabilities of the raw scores (Platt's curve), in ``[0, 1]``."""
        return _sigmoid(self.platt_a * raw + self.platt_b)

    def predict_proba(self, x: FloatArray) -> FloatArray:
        """``p_wrong`` of rows ``x``, shape ``(W,)``."""
        return self.calibrate(self.trees.decision_function(x))

    def score(self, trees: Sequence[ScoredTree]) -> list[FloatArray]:
        """``p_wrong`` of every word of every tree: one array ``(n_s,)`` per tree."""
        x = self.matrix(trees)
        p = self.predict_proba(x) if len(x) else np.zeros(0)
        bounds = np.cumsum([0, *(len(t.sentence) for t in trees)])
        return [p[bounds[i]:bounds[i + 1]] for i in range(len(trees))]

    def save(self, path: str | Path) -> None:
        """Write the detector (arrays plus JSON, :mod:`parsing.persist`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path) -> ArcDetector:
        """Read a detector written by :meth:`save`."""
        detector: ArcDetector = load_model(path, cls)
        return detector


def member_probabilities(parse: Parse) -> FloatArray | None:
    """A confident member's probability of its own head per word, ``(n+1,)``, or ``None`` when
    the parse has none (a tree stored without its scores)."""
    if parse.arc_scores is None or len(parse.arc_scores) != len(parse.heads):
        return None
    probabilities: FloatArray = np.asarray(parse.arc_scores, dtype=np.float64)
    return probabilities


def feature_matrix(trees: Sequence[ScoredTree], members: Sequence[str], weights: Sequence[float],
                   counts: TreebankCounts, upos_tags: Sequence[str], labels: Sequence[str],
                   confident: Sequence[str] = (), outputs: Sequence[str] = ()) -> FloatArray:
    """The feature rows (:func:`~parsing.detect.features.word_features`, then the
    :func:`~parsing.detect.features.confidence_features` of the ``confident`` members, then the
    :func:`~parsing.detect.features.output_features` of the ``outputs`` ones) of every tree,
    stacked, shape ``(W, F)``.

    Raises:
        ValueError: a tree without the parse of one of ``members``.
    """
    blocks = []
    for tree in trees:
        missing = [name for name in members if name not in tree.member_parses]
        if missing:
            raise ValueError(f"sentence {tree.sentence.sent_id or ''}: no parse of {', '.join(missing)} "
                             f"(the detector reads the parses of {', '.join(members)})")
        parses = [tree.member_parses[name] for name in members]
        block = word_features(tree.sentence, tree.heads, tree.deprels, stack_heads(parses),
                              [p.deprels for p in parses], np.asarray(weights, dtype=np.float64),
                              counts, upos_tags, labels, tree.own, tree.given)
        if confident:
            sure = [tree.member_parses[name] for name in confident]
            block = np.hstack([block, confidence_features(tree.heads, stack_heads(sure),
                                                          [member_probabilities(p) for p in sure])])
        if outputs:
            block = np.hstack([block, *(output_features(tree.sentence.upos, tree.heads,
                                                     tree.member_parses[name].extras)
                                        for name in outputs)])
        blocks.append(block)
    width = len(feature_names(members, upos_tags, labels, confident, outputs))
    return np.vstack(blocks) if blocks else np.zeros((0, width))


def vocabularies(train: Sequence[Sentence]) -> tuple[list[str], list[str]]:
    """The sorted UPOS tags and universal labels of the training trees."""
    tags = sorted({tag for s in train for tag in s.upos[1:]} - {"_"})
    labels = sorted({universal(x) for s in train for x in s.deprels[1:]} - {"_", ""})
    return tags, labels


def synthetic_given(tuning: Sequence[ScoredTree], gold: Sequence[Sentence], *, copies: int, rate: float,
                    random_state: int | None = 0) -> tuple[list[ScoredTree], list[Sentence], list[int]]:
    """Given trees with planted errors to learn from: ``copies`` copies of the gold ``tuning``
    trees, each with ``rate`` of its arcs changed at random (:func:`~parsing.detect.evaluate.corrupt`,
    seeds ``1000 + random_state + copy``), beside the members' parses of the same sentences.

    Returns:
        The trees (``given=True``, the gold tags), their gold trees, and each one's sentence index
        in ``tuning`` (its jackknife group: a sentence's copies share a fold with its parse).
    """
    from parsing.detect.evaluate import corrupt

    trees: list[ScoredTree] = []
    golds: list[Sentence] = []
    groups: list[int] = []
    base = 1000 + (random_state or 0)
    for copy in range(copies):
        corrupted, _ = corrupt(gold, rate, seed=base + copy)
        for i, (tree, sentence) in enumerate(zip(corrupted, gold, strict=True)):
            trees.append(ScoredTree(sentence, tree.heads, list(tree.deprels), tuning[i].member_parses,
                                    given=True))
            golds.append(sentence)
            groups.append(i)
    return trees, golds, groups


SYNTHETIC_COPIES = 3
"""Corrupted copies of the tuning trees the detector also learns from (:func:`synthetic_given`)."""
SYNTHETIC_RATE = 0.05
"""The share of their arcs changed."""


def fit_detector(train: Sequence[Sentence], tuning: Sequence[ScoredTree], gold: Sequence[Sentence],
                 members: Sequence[str], weights: Sequence[float], *, params: Mapping[str, Any] | None = None,
                 folds: int = 5, random_state: int | None = 0, synthetic_copies: int = SYNTHETIC_COPIES,
                 synthetic_rate: float = SYNTHETIC_RATE, confident: Sequence[str] = (),
                 read_outputs: bool = False) -> ArcDetector:
    """Fit the detector.

    It learns two kinds of error: the ensemble's (``tuning``: its parses of trees the members were
    not trained on, against ``gold``) and, unless ``synthetic_copies`` is 0, a person's, as random
    errors planted in copies of the gold tuning trees (:func:`synthetic_given`), so that it also
    ranks the arcs of given trees (gold, reviewed), where the members' disagreement means less
    (they are often the ones wrong). The ``given_tree`` feature tells the two apart.

    Args:
        train: the trees the members were trained on (counted, never scored).
        tuning: trees the members were NOT trained on, as the ensemble parsed them (with the
            members' parses); gold: their gold trees, in the same order.
        members, weights: the members read and their vote weights (the ensemble's).
        params: boosting settings over :data:`DEFAULT_PARAMS`; folds: jackknife folds (by sentence).
        synthetic_copies, synthetic_rate: see :func:`synthetic_given`.
        confident: members among ``members`` whose parses' ``arc_scores`` are probabilities
            (``BaseParser.gives_arc_probabilities``): their confidence is read too.
        read_outputs: also read the own tags and probabilities of those of them whose tuning
            parses carry them (:func:`output_carriers`). Off by default: measured on Telugu and
            Tamil they moved the jackknifed dev AUC by +0.011 and -0.004 (``bench/detect.py
            --outputs``), and the suspicious-arcs page scores stored trees, which keep no outputs.

    Raises:
        ValueError: no tuning words, one class only, mismatched trees, or a confident member
            that is not one of ``members``.
    """
    strangers = [name for name in confident if name not in members]
    if strangers:
        raise ValueError(f"confident members {', '.join(strangers)} are not among the members "
                         f"{', '.join(members)}")
    counts = TreebankCounts.build(train)
    tags, labels = vocabularies(train)
    settings = {**DEFAULT_PARAMS, **(params or {})}
    given, given_gold, given_groups = (
        synthetic_given(tuning, gold, copies=synthetic_copies, rate=synthetic_rate, random_state=random_state)
        if synthetic_copies else ([], [], []))
    trees = [*tuning, *given]
    outputs = output_carriers(tuning, confident) if read_outputs else []
    x = feature_matrix(trees, members, weights, counts, tags, labels, confident, outputs)
    y = wrong_arcs(trees, [*gold, *given_gold])
    if len(y) == 0:
        raise ValueError("the detector needs tuning sentences with words")
    sentence_of = [*range(len(tuning)), *given_groups]
    groups = np.repeat(np.asarray(sentence_of, dtype=np.intp), [len(t.sentence) for t in trees])
    raw = jackknife_rows(x, y, groups, _fit_trees(settings, random_state), folds=folds,
                         random_state=random_state)
    a, b = platt(raw, y)
    detector = ArcDetector(list(members), [float(w) for w in weights], tags, labels, counts,
                           fit_boosted_trees(x, y, settings, random_state), a, b,
                           feature_names(members, tags, labels, confident, outputs), params=settings,
                           folds=folds, confident=list(confident), outputs=outputs)
    detector.training_scores = detector.calibrate(raw)
    detector.training_wrong = y
    sizes = [len(t.sentence) for t in trees]
    detector.training_given = np.repeat([t.given for t in trees], sizes).astype(bool)
    return detector


def output_carriers(trees: Sequence[ScoredTree], members: Sequence[str]) -> list[str]:
    """Those of ``members`` whose parses of ``trees`` carry their own UPOS probabilities
    (``extras["upos_p"]``: the neural member's)."""
    return [name for name in members
            if any("upos_p" in tree.member_parses[name].extras for tree in trees)]


def tree_of(sentence: Sentence, member_parses: Mapping[str, Parse], *, counted: bool = False) -> ScoredTree:
    """A :class:`ScoredTree` of ``sentence``'s own tree (gold or reviewed); ``counted``: the
    sentence is one of the detector's training trees, so its own events are left out."""
    return ScoredTree(sentence, np.asarray(sentence.heads, dtype=np.intp), list(sentence.deprels),
                      member_parses, tree_events(sentence) if counted else None)
