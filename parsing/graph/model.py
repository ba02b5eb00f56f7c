"""What the graph-based parsers share: structured online training, prediction and labelling.

A graph parser scores a tree as the sum of weights of the hashed features of its parts (arcs,
and sibling triples for the second-order model). Training is the structured perceptron of
Collins (2002) or 1-best MIRA (McDonald, Crammer & Pereira 2005, Hamming loss), with weight
averaging (:class:`parsing.learn.AveragedPerceptron`): decode each training sentence with the
current weights and, if the tree is wrong, add its gold-minus-predicted feature counts in one
``np.add.at`` call. With ``dev`` sentences the averaged weights of every epoch are scored on
dev (UAS) and the best epoch is kept (training stops after ``patience`` epochs without gain).

Warm start (``warm_start=True`` on a fitted parser): :meth:`GraphParser.fit` continues the
averaged perceptron of the previous fit instead of starting from zero. The token vocabularies
grow (new values get new ids, known ones keep theirs; features are hashed, so the weight
vector keeps its size), the raw weights and step counter saved with the model
(``raw_weights_``, ``n_steps_``) resume the lazy average where it stopped, and ``warm_epochs``
epochs are run (dev selects among them when there are several). The labeller is refitted
from scratch (a linear SVM has no warm start). A parser saved before warm starts existed
has no raw weights: its averaged weights become the starting weights of a new average.

Labels come from a second stage, :class:`parsing.labeller.ArcLabeller`, fitted on the gold
trees in :meth:`GraphParser.fit`.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``;
``scores[dep, head]`` has shape ``(n+1, n+1)``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.clusters.lexicon import ClusterLexicon
from parsing.clusters.recipes import resolve_lexicon
from parsing.constraints import Constraints, validate_all
from parsing.graph.cluster_templates import cluster_arc_features, with_clusters
from parsing.graph.templates import IntArray, TokenEncoder, arc_features, null_index
from parsing.labeller import ArcLabeller
from parsing.learn import AveragedPerceptron
from parsing.meta.recipe import MetaTables, resolve_tables
from parsing.meta.table import MetaTable
from parsing.meta.templates import META_ROWS, meta_arc_features, meta_rows
from parsing.types import Heads, Parse, Scores, Sentence

Weights = NDArray[np.float64] | NDArray[np.float32]

LEARNERS = ("perceptron", "mira")


class GraphParser(BaseParser):
    """Training loop and prediction of a linear graph-based parser; subclasses define the parts.

    Subclasses store their hyperparameters in ``__init__`` (including every attribute read
    here: ``max_iter``, ``warm_start``, ``warm_epochs``, ``learner``, ``C``, ``patience``,
    ``n_bits``, ``min_count``, ``labeller_C``, ``random_state``; optionally ``clusters`` and
    ``cluster_text``) and implement :meth:`_decode` and :meth:`_tree_features`.

    Word clusters: with ``clusters`` (a :class:`~parsing.clusters.lexicon.ClusterLexicon`, a
    saved one's path, or a spec such as ``"brown"`` learned at fit time from the training
    words plus ``cluster_text``: :func:`~parsing.clusters.recipes.resolve_lexicon`) every arc
    also gets the cluster features of :mod:`parsing.graph.cluster_templates`. The lexicon is
    kept as ``lexicon_`` (saved with the model); a warm fit keeps it.

    Meta features (Chen et al. 2013): with ``meta`` (a :class:`~parsing.meta.table.MetaTable`,
    a saved one's path, or a spec such as ``"auto"``: :func:`~parsing.meta.recipe.resolve_table`,
    which trains a baseline without them, parses the training sentences plus ``meta_text`` and
    ranks the base features) every arc also gets the meta features of
    :mod:`parsing.meta.templates`. The table is kept as ``meta_table_``; a warm fit keeps it.
    Training sentences are featured with jackknifed tables (:class:`~parsing.meta.recipe.MetaTables`).
    """

    max_iter: int
    warm_start: bool = False  # class defaults: parsers saved before these parameters existed
    warm_epochs: int = 1
    warm_attributes: ClassVar[tuple[str, ...]] = ("raw_weights_",)
    """Read from a model file only to continue training (:func:`parsing.persist.load_model`)."""
    learner: str
    C: float
    patience: int
    n_bits: int
    min_count: int
    labeller_C: float
    random_state: int | None
    clusters: ClusterLexicon | str | None = None  # class defaults: parsers without clusters
    cluster_text: str | None = None
    lexicon_: ClusterLexicon | None = None
    meta: MetaTable | str | None = None  # class defaults: parsers without meta features
    meta_text: str | None = None
    meta_table_: MetaTable | None = None
    _training_table_cache: MetaTable | None = None  # a jackknifed table during a training step (not saved)
    _scores_cache: tuple[Weights, OrderedDict[bytes, Scores]] | None = None  # _kept_scores (not saved)
    encoder_: TokenEncoder
    n_iter_: int

    @abstractmethod
    def _decode(self, tokens: IntArray, arcs: IntArray | None, weights: Weights,
                constraints: Constraints | None = None, scores: Scores | None = None) -> tuple[Heads, Scores]:
        """Best tree of a sentence and its arc scores (``-inf`` on row 0 and the diagonal);
        with ``constraints`` the best tree containing the forced arcs (the returned scores
        are the unforced ones). ``scores``: the arc scores of the arc features ``arcs`` under
        ``weights`` when the caller has them (not modified; ``arcs`` may then be None)."""

    @abstractmethod
    def _tree_features(self, tokens: IntArray, arcs: IntArray, heads: Heads) -> IntArray:
        """Feature indices of all parts of the tree ``heads``, flattened (may hold the null)."""

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Learn arc weights from gold trees, then the labeller.

        Args:
            sentences: training sentences with gold trees (their order is never changed;
                each epoch visits a seeded permutation).
            dev: optional sentences with gold trees; the epoch whose averaged weights give
                the best dev UAS is kept.

        With ``warm_start`` on a fitted parser, training continues from the fitted weights
        for ``warm_epochs`` epochs (module docstring); ``dev`` then only chooses among those
        epochs, and is not parsed at all when there is one.

        Raises:
            ValueError: an unknown ``learner``, or a training or dev sentence without a tree.
        """
        if self.learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS}, got {self.learner!r}")
        if any(not s.has_tree for s in sentences) or not sentences:
            raise ValueError("every training sentence needs a gold tree (and there must be one)")
        if dev and any(not s.has_tree for s in dev):
            raise ValueError("every dev sentence needs a gold tree")
        rng = np.random.default_rng(self.random_state)
        self._scores_cache = None  # new weights: the kept scores are stale
        warm = self.warm_start and hasattr(self, "weights_")
        if warm:
            self.encoder_ = self.encoder_.extended(sentences, min_count=self.min_count)
            model = self._resumed_perceptron()
            tables = None if self.meta_table_ is None else MetaTables(self.meta_table_)
            epochs, previous_epochs = self.warm_epochs, self.n_iter_
        else:
            self.lexicon_ = (None if self.clusters is None
                             else resolve_lexicon(self.clusters, sentences, self.cluster_text))
            tables = None if self.meta is None else resolve_tables(
                self.meta, self, sentences, dev, self.meta_text)
            self.meta_table_ = None if tables is None else tables.full
            self.encoder_ = TokenEncoder.build(sentences, min_count=self.min_count)
            model = AveragedPerceptron((null_index(self.n_bits) + 1,))
            epochs, previous_epochs = self.max_iter, 0
        tokens = [self._tokens(s) for s in sentences]
        score_dev = bool(dev) and not (warm and epochs == 1)
        dev_tokens = [self._tokens(s) for s in dev] if dev and score_dev else []

        def step(index: int) -> None:
            sentence = sentences[index]
            self._training_table_cache = None if tables is None else tables.for_training(index)
            self._train_step(model, tokens[index], sentence.heads,
                             sentence.annotated if sentence.partial else None)
            self._training_table_cache = None

        def dev_score(weights: Weights) -> float:
            return self._uas(dev_tokens, list(dev or []), weights)

        kept = train_online(
            model, len(sentences), step, dev_score if score_dev else None,
            max_iter=epochs, patience=self.patience, rng=rng)
        self.weights_, self.dev_uas_ = kept.averaged, kept.history
        self.raw_weights_, self.n_steps_ = kept.raw, kept.step
        self.n_iter_ = previous_epochs + kept.epoch
        self.labeller_ = ArcLabeller(C=self.labeller_C, random_state=self.random_state).fit(sentences)
        return self

    def _tokens(self, sentence: Sentence) -> IntArray:
        """The sentence's token table (:meth:`TokenEncoder.encode`), with the cluster rows
        appended when the parser has a lexicon, then the meta rows when it has a meta table."""
        tokens = self.encoder_.encode(sentence)
        if self.lexicon_ is not None:
            tokens = with_clusters(tokens, self.lexicon_, sentence)
        return tokens if self.meta_table_ is None else np.vstack([tokens, meta_rows(sentence)])

    def _arc_features(self, tokens: IntArray) -> IntArray:
        """Feature indices of every arc, ``(n+1, n+1, K)`` (:func:`arc_features`, then the
        cluster features when the parser has a lexicon, then the meta features when it has a
        meta table)."""
        arcs = [arc_features(tokens, n_bits=self.n_bits)]
        if self.lexicon_ is not None:
            arcs.append(cluster_arc_features(tokens, n_bits=self.n_bits))
        table = self.meta_table_ if self._training_table_cache is None else self._training_table_cache
        if table is not None:
            arcs.append(meta_arc_features(tokens[-META_ROWS:], table, n_bits=self.n_bits))
        return arcs[0] if len(arcs) == 1 else np.concatenate(arcs, axis=-1)

    def _kept_scores(self, tokens: IntArray) -> Scores:
        """The arc scores ``(n+1, n+1)`` of a token table, kept for the last
        :data:`SCORED_SENTENCES` tables parsed: the editor re-parses one sentence after each
        edit, and only the decoding changes with the forced arcs (the features and scores are
        about half of a 100-word sentence's parse by a graph member). The cache holds the
        weights it scored with and starts afresh when they are not :attr:`weights_` (a fit, a
        load). The array is read-only."""
        cache = self.__dict__.get("_scores_cache")
        if cache is None or cache[0] is not self.weights_:
            cache = self._scores_cache = (self.weights_, OrderedDict())
        kept = cache[1]
        key = np.asarray(tokens.shape, dtype=np.int64).tobytes() + tokens.tobytes()
        scores = kept.get(key)
        if scores is None:
            scores = kept[key] = _arc_scores(self._arc_features(tokens), self.weights_)
            scores.setflags(write=False)
            while len(kept) > SCORED_SENTENCES:
                kept.popitem(last=False)
        kept.move_to_end(key)
        return scores

    def _resumed_perceptron(self) -> AveragedPerceptron:
        """The averaged perceptron where the previous fit left it (see the module docstring)."""
        raw = getattr(self, "raw_weights_", None)
        if raw is None:
            return AveragedPerceptron.resume(self.weights_, self.weights_, 1)
        return AveragedPerceptron.resume(raw, self.weights_, self.n_steps_)

    def _train_step(self, model: AveragedPerceptron, tokens: IntArray, gold: Heads,
                    annotated: NDArray[np.bool_] | None = None) -> None:
        """One online update. On a partial tree (``annotated``: the words a person set or
        confirmed, shape ``(n+1,)``) only those arcs are gold: the target is the best tree under
        the current weights that contains them (constrained decoding, Li et al. 2016), so the
        arcs the ensemble filled in are left out of the loss."""
        arcs = self._arc_features(tokens)
        predicted, _ = self._decode(tokens, arcs, model.weights)
        words = np.ones(len(gold), dtype=bool) if annotated is None else np.asarray(annotated, dtype=bool)
        words[0] = False
        if np.array_equal(predicted[words], gold[words]):
            return
        if annotated is not None:
            human = Constraints({int(w): int(gold[w]) for w in np.flatnonzero(words)})
            gold, _ = self._decode(tokens, arcs, model.weights, human)
        online_update(model, self._tree_features(tokens, arcs, gold),
                      self._tree_features(tokens, arcs, predicted),
                      loss=float(np.count_nonzero(predicted[words] != gold[words])),
                      learner=self.learner, C=self.C, null=null_index(self.n_bits))

    def _uas(self, tokens: list[IntArray], sentences: list[Sentence], weights: Weights) -> float:
        correct = total = 0
        for table, sentence in zip(tokens, sentences, strict=True):
            heads, _ = self._decode(table, self._arc_features(table), weights)
            correct += int(np.count_nonzero(heads[1:] == sentence.heads[1:]))
            total += len(sentence)
        return correct / max(total, 1)

    def score_arcs(self, sentence: Sentence) -> Scores:
        """The learned arc scores of a sentence, ``scores[dep, head]``, shape ``(n+1, n+1)``;
        row 0 and the diagonal are ``-inf``. For the score-level ensemble."""
        tokens = self._tokens(sentence)
        return _arc_scores(self._arc_features(tokens), self.weights_)

    def tree_score(self, sentence: Sentence, heads: Heads) -> float:
        """The model's score of the tree ``heads`` (shape ``(n+1,)``) for ``sentence``: the
        sum of the weights of all its parts' features."""
        tokens = self._tokens(sentence)
        features = self._tree_features(tokens, self._arc_features(tokens), np.asarray(heads))
        return float(self.weights_[features].sum(dtype=np.float64))

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse and label sentences (their heads and labels, if any, are ignored).

        Returns:
            One :class:`~parsing.types.Parse` per sentence. ``arc_scores[d]`` is the softmax
            over candidate heads of ``d``'s learned arc scores, taken at the chosen head: a
            confidence proxy in ``(0, 1]`` (a linear model's scores are not calibrated).
            ``extras["label_proba"]`` (shape ``(n+1,)``, ``nan`` at 0) is the labeller's
            probability-like score of each chosen label; the full label distributions are
            :meth:`ArcLabeller.predict_proba` of ``labeller_``.
        """
        return self._parse_all(sentences, [None] * len(sentences))

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Parse with forced arcs: the decoder sees each constrained word's row ``-inf`` except
        at its forced head (:func:`~parsing.constraints.force_scores`), so the tree is the
        model's best among those containing the constraints (exactly for the first-order
        decoders; second-order as approximately as :meth:`predict`). The labeller labels the
        tree; forced labels replace its choice. ``arc_scores`` as in :meth:`predict`; ``free`` is
        not needed (the decoder is exact or starts from the scores)."""
        validate_all([len(s) for s in sentences], constraints)
        return self._parse_all(sentences, list(constraints))

    def _parse_all(self, sentences: Sequence[Sentence],
                   constraints: Sequence[Constraints | None]) -> list[Parse]:
        trees: list[Heads] = []
        confidences: list[NDArray[np.float64]] = []
        for sentence, forced in zip(sentences, constraints, strict=True):
            tokens = self._tokens(sentence)
            kept = self._kept_scores(tokens)
            heads, scores = self._decode(tokens, None, self.weights_, forced, scores=kept)
            trees.append(heads)
            confidences.append(_chosen_softmax(scores, heads))
        if not sentences:
            return []
        parses = []
        label_proba = self.labeller_.predict_proba(sentences, trees)
        rows = zip(trees, confidences, label_proba, constraints, strict=True)
        for heads, confidence, proba, forced in rows:
            chosen = np.concatenate([[np.nan], proba[1:].max(axis=1)])
            deprels = self.labeller_.labels_of(proba)
            for dep, label in (forced.labels.items() if forced is not None else ()):
                deprels[dep] = label
            parses.append(Parse(heads=heads, deprels=deprels,
                                arc_scores=confidence, extras={"label_proba": chosen}))
        return parses


@dataclass(frozen=True, slots=True)
class KeptEpoch:
    """What :func:`train_online` keeps: the chosen epoch's averaged weights (float32), the
    raw weights (float32) and step counter of the perceptron at that epoch (to resume its
    average), the epoch's number and the dev score of every epoch."""

    averaged: Weights
    raw: Weights
    step: int
    epoch: int
    history: list[float]


def train_online(
    model: AveragedPerceptron,
    n_sentences: int,
    step: Callable[[int], None],
    dev_score: Callable[[Weights], float] | None,
    *,
    max_iter: int,
    patience: int,
    rng: np.random.Generator,
) -> KeptEpoch:
    """The epoch loop: each epoch calls ``step(i)`` (then ``model.tick()``) for a seeded
    permutation of the sentences; with ``dev_score`` the averaged weights of every epoch are
    scored and the best epoch is kept (with the perceptron's raw state, so a warm start can
    resume it), stopping after ``patience`` epochs without gain."""
    best: KeptEpoch | None = None
    history: list[float] = []
    for epoch in range(1, max_iter + 1):
        for index in rng.permutation(n_sentences).tolist():
            step(index)
            model.tick()
        if dev_score is None:
            continue
        averaged = model.averaged().astype(np.float32)
        score = dev_score(averaged)
        history.append(score)
        if best is None or score > max(history[:-1]):
            best = KeptEpoch(averaged, model.weights.astype(np.float32), model.step, epoch, history)
        elif epoch - best.epoch >= patience:
            break
    if best is None:
        best = KeptEpoch(model.averaged().astype(np.float32), model.weights.astype(np.float32),
                         model.step, max_iter, history)
    return best


def online_update(
    model: AveragedPerceptron,
    gold_features: IntArray,
    predicted_features: IntArray,
    *,
    loss: float,
    learner: str,
    C: float,
    null: int,
) -> None:
    """Move the weights towards the gold tree's features and away from the predicted one's.

    ``learner="perceptron"`` adds +1/-1 per feature; ``"mira"`` takes the smallest step
    (capped at ``C``) that makes gold beat the prediction by ``loss`` (1-best MIRA). The
    ``null`` feature index is never updated.
    """
    index = np.concatenate([gold_features, predicted_features])
    delta = np.concatenate([np.ones(len(gold_features)), -np.ones(len(predicted_features))])
    on = index != null
    index, delta = index[on], delta[on]
    if learner == "perceptron":
        model.update(index, delta)
        return
    features, inverse = np.unique(index, return_inverse=True)
    difference: NDArray[np.float64] = np.bincount(inverse, weights=delta).astype(np.float64)
    norm = float(difference @ difference)
    if norm == 0.0:
        return
    margin = float(difference @ model.weights[features])
    step = min(C, max(0.0, (loss - margin) / norm))
    model.update(features, difference * step)


SCORED_SENTENCES = 32
"""Sentences whose arc scores a fitted graph parser keeps between parses (80 KB at 100 words)."""


def _arc_scores(arcs: IntArray, weights: Weights) -> Scores:
    """Arc scores from arc features ``(n+1, n+1, K)``; row 0 and the diagonal ``-inf``."""
    scores: Scores = weights[arcs].sum(axis=-1, dtype=np.float64)
    scores[0] = -np.inf
    np.fill_diagonal(scores, -np.inf)
    return scores


def _chosen_softmax(scores: Scores, heads: Heads) -> NDArray[np.float64]:
    """Softmax over heads of each dependent's scores, at the chosen head: shape ``(n+1,)``."""
    rows = scores[1:]
    finite_max = np.where(np.isfinite(rows), rows, -np.inf).max(axis=1, keepdims=True)
    exp = np.exp(rows - finite_max)
    chosen: NDArray[np.float64] = exp[np.arange(len(rows)), heads[1:]] / exp.sum(axis=1)
    return np.concatenate([[np.nan], chosen])
