"""Greedy transition-based parsers (MaltParser-style ensemble members).

:class:`TransitionParser` drives one of three systems (:mod:`parsing.transition.systems`)
with a multiclass averaged perceptron over labelled actions. Features are the templates of
:mod:`parsing.transition.templates`, hashed with :func:`~parsing.features.hash_columns`
into ``2**n_bits`` buckets; only the buckets met in the oracle's configurations on the
training data get a weight row (a lookup table maps bucket → row), which keeps the
weight matrix proportional to the features actually seen. A fitted parser keeps both tables
compact (:mod:`parsing.transition.compact`: the used buckets only, the non-zero weights only),
read exactly as the dense ones.

Training: arc-eager and arc-hybrid follow their exact dynamic oracles (Goldberg & Nivre
2012, 2013); from the second epoch on they follow the model's own prediction with
probability ``exploration`` (error exploration), learning to recover from mistakes.
Arc-standard-swap follows its static lazy-swap oracle. An update happens whenever the
best-scoring valid action is not in the gold (zero-cost) set: the best-scoring gold action
gets ``+1``, the prediction ``-1``. With ``dev`` sentences the parser keeps the epoch
whose averaged weights parse ``dev`` best (labelled attachment) and stops after
:data:`~parsing.transition.training.PATIENCE` epochs without improvement. The training
loop lives in :mod:`parsing.transition.training`.

Warm start (``warm_start=True`` on a fitted parser): ``fit`` continues the fitted averaged
perceptron. The form, UPOS, lemma, FEATS and label vocabularies grow (known values keep their
ids), buckets met along the oracle's path on the new data without a weight row get new rows
after the existing ones, labels new to the model get LEFT/RIGHT columns (existing columns
move, their weights with them), and the saved raw weights and step counter (``raw_weights_``,
``n_steps_``) resume the lazy average. ``warm_epochs`` epochs follow, with error exploration
from the first one; ``dev`` is parsed only to choose among several warm epochs. A parser
saved before warm starts existed starts a new average from its averaged weights.

Non-projectivity: arc-eager and arc-hybrid are projective, so they train on
pseudo-projectivised trees (:mod:`parsing.transition.pseudo_projective`) and
deprojectivise their output; arc-standard-swap is non-projective by itself.

Prediction, the single-root output and the confidences: :mod:`parsing.transition.decoding`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partialmethod
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.clusters.lexicon import ClusterLexicon
from parsing.clusters.recipes import resolve_lexicon
from parsing.features import Vocabulary
from parsing.learn import AveragedPerceptron
from parsing.transition.arc_swap import SwapGold
from parsing.transition.compact import BucketRows, SparseRows
from parsing.transition.decoding import GreedyDecoding
from parsing.transition.pseudo_projective import projectivize
from parsing.transition.state import Action
from parsing.transition.templates import ABSENT, CLUSTER_ATTRIBUTES
from parsing.transition.training import (
    Encoded,
    build_rows,
    grow_rows,
    renumber_rows,
    train_epochs,
    used_rows,
    widen_label_columns,
)
from parsing.trees import reverse_heads
from parsing.types import Sentence

_FIXED_CLASSES = (Action.SHIFT, Action.REDUCE, Action.SWAP)
Table = NDArray[Any] | BucketRows | SparseRows



class TransitionParser(GreedyDecoding, BaseParser):
    """A greedy labelled transition-based parser trained with an averaged perceptron.

    Args:
        system: ``"arc-eager"``, ``"arc-standard-swap"`` or ``"arc-hybrid"``.
        right_to_left: parse the reversed sentence (and map the heads back), a cheap way to
            get a different model from the same system (MaltBlender).
        epochs: passes over the training data (at most, when ``dev`` is given).
        beam_size: must be 1 (greedy); beam search is not implemented.
        exploration: probability of following the model's own prediction from the second
            epoch on (dynamic-oracle systems only; 0 follows the oracle always).
        filled_weight: on a partial tree (``Sentence.annotated``), the weight of an update
            whose wrong prediction loses only arcs the parsers filled in, not a human arc
            (dynamic-oracle systems only: the oracle with the filled words' heads unknown says
            which). 1 learns the filled-in tree like a human one; 0 leaves the filled-in arcs
            out of the loss (Li, Zhang, Chao & Zhang 2016); the static swap oracle always
            learns the whole tree.
        n_bits: feature hashing buckets ``2**n_bits``.
        min_feature_count: buckets seen fewer times in the oracle configurations get no weights.
        warm_start: when fitting an already fitted parser, continue from its weights (module
            docstring, "Warm start") instead of starting over.
        warm_epochs: epochs of a warm fit (dev, if given, picks among them when more than one).
            One by default: in ``bench/warm_rounds.py`` (Wolof, Welsh; 1000 + 50 sentences) a
            second epoch doubled the warm time for a few hundredths of ensemble LAS.
        random_state: seeds the training order and the exploration.
        clusters: word clusters as extra features (off with ``None``): a
            :class:`~parsing.clusters.lexicon.ClusterLexicon`, a saved one's path, or a spec
            (``"brown"``, ``"context:seed=1"``) learned at fit time from the training words
            plus ``cluster_text``; adds :data:`~parsing.transition.templates.CLUSTER_TEMPLATES`.
        cluster_text: a raw text file (one sentence per line) a clusters spec also learns from.

    Attributes (after fit):
        weights_: averaged weights, ``(n_rows, n_classes)`` float32 (row 0 stays zero), as a
            :class:`~parsing.transition.compact.SparseRows` (non-zero entries only).
        rows_: bucket → weight row (0: no row) over ``2**n_bits`` buckets, as a
            :class:`~parsing.transition.compact.BucketRows` (used buckets only).
        labels_: the label vocabulary (pseudo-projective ``r↑h`` labels included).
        vocabularies_: form, UPOS, lemma, FEATS vocabularies.
        lexicon_: the word clusters used (``None`` without ``clusters``; kept by a warm fit).
        root_label_, fallback_label_: labels used by the single-root post-processing.
        raw_weights_, n_steps_: the perceptron's raw weights (rows as ``weights_``, sparse too)
            and step counter at the kept epoch, from which a warm fit resumes the average
            (:attr:`warm_attributes`: read from a file only for a warm start).
        epochs_: the epoch whose weights were kept (warm epochs added); history_: dev LAS per
            epoch.
    """

    name: ClassVar[str] = "transition"
    description: ClassVar[str] = "greedy transition-based parser (averaged perceptron)"
    warm_start: bool = False  # class defaults: parsers saved before these parameters existed
    warm_epochs: int = 1
    filled_weight: float = 1.0
    clusters: ClusterLexicon | str | None = None
    cluster_text: str | None = None
    warm_attributes: ClassVar[tuple[str, ...]] = ("raw_weights_",)
    """Read from a model file only to continue training (:func:`parsing.persist.load_model`)."""
    vocabularies_: tuple[Vocabulary, ...]
    labels_: Vocabulary
    n_labels_: int
    epochs_: int

    def __init__(
        self,
        system: str = "arc-eager",
        *,
        right_to_left: bool = False,
        epochs: int = 15,
        beam_size: int = 1,
        exploration: float = 0.9,
        filled_weight: float = 1.0,
        n_bits: int = 22,
        min_feature_count: int = 1,
        warm_start: bool = False,
        warm_epochs: int = 1,
        random_state: int | None = 0,
        clusters: ClusterLexicon | str | None = None,
        cluster_text: str | None = None,
    ) -> None:
        self.system = system
        self.right_to_left = right_to_left
        self.epochs = epochs
        self.beam_size = beam_size
        self.exploration = exploration
        if not 0.0 <= filled_weight <= 1.0:
            raise ValueError(f"filled_weight must lie in [0, 1], got {filled_weight}")
        self.filled_weight = filled_weight
        self.n_bits = n_bits
        self.min_feature_count = min_feature_count
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.random_state = random_state
        self.clusters = clusters
        self.cluster_text = cluster_text

    @property
    def member_name(self) -> str:
        """The ensemble member's name: the class name, ``-rtl`` appended when right-to-left."""
        base = self.name if self.name != "transition" else self.system
        return f"{base}-rtl" if self.right_to_left else base

    def _encode(self, sentence: Sentence, *, gold: bool) -> Encoded:
        forms, upos, lemmas, feats = self.vocabularies_
        n = len(sentence)
        rows = 4 if self.lexicon_ is None else 4 + len(CLUSTER_ATTRIBUTES)
        atoms = np.full((rows, n + 2), ABSENT, dtype=np.int64)
        atoms[0, : n + 1] = forms.ids(sentence.forms)
        atoms[1, : n + 1] = upos.ids(sentence.upos)
        atoms[2, : n + 1] = lemmas.ids(sentence.lemmas)
        atoms[3, : n + 1] = feats.ids(sentence.feats)
        if self.lexicon_ is not None:
            atoms[4:, : n + 1] = self.lexicon_.code_rows(sentence.forms[1:])
        if self.right_to_left:
            atoms[:, 1 : n + 1] = atoms[:, n:0:-1]
        if not gold:
            return Encoded(atoms)
        heads, deprels = self._training_tree(sentence)
        label_ids = self.labels_.ids(deprels) - 1
        human_heads = None
        if sentence.partial and self.filled_weight < 1.0 and self._system().dynamic:
            assert sentence.annotated is not None
            human = np.asarray(sentence.annotated, dtype=bool)
            if self.right_to_left:  # in parse order, as _training_tree reverses the heads
                human = np.concatenate((human[:1], human[:0:-1]))
            human_heads = np.where(human, heads, -1)  # ROOT's head is -1 either way
        return Encoded(atoms, heads, label_ids.astype(np.intp), human_heads)

    def _training_tree(self, sentence: Sentence) -> tuple[NDArray[np.intp], list[str]]:
        heads = np.asarray(sentence.heads, dtype=np.intp)
        deprels = list(sentence.deprels)
        if self.right_to_left:
            heads = reverse_heads(heads)
            deprels = ["", *deprels[:0:-1]]
        if self._projective():
            heads, deprels = projectivize(heads, deprels)
        return heads, deprels

    # ------------------------------------------------------------------ training

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Train on sentences with gold trees; ``dev`` picks the epoch (see the module docstring).

        With ``warm_start`` on a fitted parser, training continues from the fitted weights
        for ``warm_epochs`` epochs (module docstring, "Warm start").
        """
        if self.beam_size != 1:
            raise ValueError("beam search is not implemented: use beam_size=1")
        system = self._system()
        rng = np.random.default_rng(self.random_state)
        self.__dict__.pop("_mask_cache", None)  # masks depend on the label set
        train = [s for s in sentences if len(s) > 0 and s.has_tree]
        if not train:
            raise ValueError("no training sentence has a tree")
        warm = self.warm_start and hasattr(self, "weights_")
        columns = ("forms", "upos", "lemmas", "feats")
        trees = [self._training_tree(s) for s in train]
        new_labels = (label for _, deprels in trees for label in deprels[1:])
        old_n_labels = self.n_labels_ if warm else 0
        if warm:
            self.vocabularies_ = tuple(
                vocabulary.extended(value for s in train for value in getattr(s, column))
                for vocabulary, column in zip(self.vocabularies_, columns, strict=True)
            )
            self.labels_ = self.labels_.extended(new_labels)
        else:
            self.lexicon_ = (None if self.clusters is None
                             else resolve_lexicon(self.clusters, train, self.cluster_text))
            self.vocabularies_ = tuple(
                Vocabulary.build(value for s in train for value in getattr(s, column)) for column in columns
            )
            self.labels_ = Vocabulary.build(new_labels)
        self.n_labels_ = len(self.labels_) - 1
        self.class_actions_ = np.array(
            [*(int(a) for a in _FIXED_CLASSES), *[int(Action.LEFT_ARC)] * self.n_labels_,
             *[int(Action.RIGHT_ARC)] * self.n_labels_],
            dtype=np.intp,
        )  # fmt: skip
        root_words = Counter(s.deprels[d] for s in train for d in range(1, len(s) + 1) if s.heads[d] == 0)
        under_root = Counter(
            s.deprels[d]
            for s in train
            for d in range(1, len(s) + 1)
            if s.heads[d] > 0 and s.heads[s.heads[d]] == 0
        )
        self.root_label_ = root_words.most_common(1)[0][0]
        self.fallback_label_ = (under_root or Counter(self.labels_.index)).most_common(1)[0][0]
        encoded = [self._encode(s, gold=True) for s in train]
        swap_golds: list[SwapGold | None] = [
            SwapGold.build(e.heads) if not system.dynamic and e.heads is not None else None for e in encoded
        ]
        wanted = build_rows(system, encoded, swap_golds, self.n_bits, self.min_feature_count,
                            self.templates())
        if warm:
            previous_epochs = self.epochs_
            model = self._resumed_perceptron(wanted, old_n_labels)
            trained = train_epochs(self, system, encoded, swap_golds, dev if self.warm_epochs > 1 else None,
                                   rng, model=model, epochs=self.warm_epochs, warm=True)
        else:
            previous_epochs = 0
            self.rows_ = wanted
            trained = train_epochs(self, system, encoded, swap_golds, dev, rng)
        used = used_rows(trained.averaged)
        self.rows_ = BucketRows.from_dense(renumber_rows(_dense(self.rows_), used))
        self.weights_ = SparseRows.from_dense(trained.averaged[used])
        self.raw_weights_ = SparseRows.from_dense(trained.raw[used])
        self.n_steps_ = trained.step
        self.epochs_, self.history_ = previous_epochs + trained.epoch, trained.history
        return self

    def _resumed_perceptron(self, wanted: NDArray[np.int32], old_n_labels: int) -> AveragedPerceptron:
        """The fitted perceptron, grown for a warm start: new rows for the buckets of
        ``wanted`` without one (:func:`~parsing.transition.training.grow_rows`), new LEFT and
        RIGHT columns for labels added since (``old_n_labels`` were known); sets ``rows_``.
        A parser saved without ``raw_weights_`` starts a new average from its weights."""
        averaged = _dense(self.weights_)
        raw = getattr(self, "raw_weights_", None)
        raw = None if raw is None else _dense(raw)
        step = self.n_steps_ if raw is not None else 1
        self.rows_, added = grow_rows(_dense(self.rows_), wanted)

        def grown(old: NDArray[np.float32]) -> NDArray[np.float64]:
            wide = widen_label_columns(old.astype(np.float64), fixed=len(_FIXED_CLASSES),
                                       old_n_labels=old_n_labels, n_labels=self.n_labels_)
            return np.vstack([wide, np.zeros((added, wide.shape[1]))])

        return AveragedPerceptron.resume(grown(averaged if raw is None else raw), grown(averaged), step)


def _dense(table: Table) -> NDArray[Any]:
    """A dense array of a table that may be compact (:mod:`parsing.transition.compact`)."""
    return table.dense() if isinstance(table, BucketRows | SparseRows) else table


# The members fix ``system`` by binding it in ``__init__``: ``inspect.signature`` (hence
# ``get_params``/``clone``) sees TransitionParser's hyperparameters without ``system``.
class ArcEagerParser(TransitionParser):
    """Arc-eager with dynamic-oracle training and pseudo-projective parsing."""

    name: ClassVar[str] = "eager"
    description: ClassVar[str] = "arc-eager transition parser, dynamic oracle, pseudo-projective"
    __init__ = partialmethod(TransitionParser.__init__, "arc-eager")


class ArcSwapParser(TransitionParser):
    """Arc-standard with SWAP (non-projective), static lazy-swap oracle."""

    name: ClassVar[str] = "swap"
    description: ClassVar[str] = "arc-standard + SWAP transition parser (non-projective)"
    __init__ = partialmethod(TransitionParser.__init__, "arc-standard-swap")


class ArcHybridParser(TransitionParser):
    """Arc-hybrid with dynamic-oracle training and pseudo-projective parsing."""

    name: ClassVar[str] = "hybrid"
    description: ClassVar[str] = "arc-hybrid transition parser, dynamic oracle, pseudo-projective"
    __init__ = partialmethod(TransitionParser.__init__, "arc-hybrid")


MEMBERS: dict[str, tuple[type[TransitionParser], bool]] = {
    "eager": (ArcEagerParser, False),
    "eager-rtl": (ArcEagerParser, True),
    "swap": (ArcSwapParser, False),
    "swap-rtl": (ArcSwapParser, True),
    "hybrid": (ArcHybridParser, False),
    "hybrid-rtl": (ArcHybridParser, True),
}
"""The six transition-based ensemble members: name → (class, right_to_left)."""


def make_member(name: str, **params: object) -> TransitionParser:
    """A fresh member by name (``"eager"``, ``"swap-rtl"``, ...); ``params`` override defaults."""
    try:
        cls, right_to_left = MEMBERS[name]
    except KeyError:
        raise ValueError(f"unknown transition member {name!r}; choose from {sorted(MEMBERS)}") from None
    parser = cls(right_to_left=right_to_left)
    return parser.set_params(**params) if params else parser
