"""A non-linear probabilistic transition parser (Titov 2008 ch. 5, simplified as in its
CoNLL 2007 system): arc-hybrid with pseudo-projective lifting, a feed-forward network over
Chen & Manning (2014) features giving ``P(action | configuration)``, and beam search giving
a k-best list of trees with ``P(tree) = prod_t P(a_t | c_t)``.

The k-best list, normalised, is a distribution over trees: ``Parse.extras["kbest"]`` holds it
for minimum-Bayes-risk decoding (Titov 2008 ch. 8), and ``Parse.arc_scores[d]`` is the
posterior of the chosen arc into ``d``: the total probability of the listed trees that
contain it (1 where the whole list agrees).

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.features import UNKNOWN, Vocabulary
from parsing.neural import network, system
from parsing.neural.decoding import BeamDecoding, IntArray, one_blas_thread
from parsing.neural.search import (
    ActionSpace,
    step_inputs,
)
from parsing.scorer.metrics import evaluate
from parsing.transition.state import State
from parsing.transition.training import widen_label_columns
from parsing.types import Heads, Sentence

_NULL, _ROOT = 1, 2
"""Word, suffix and tag ids of an absent slot and of ROOT; vocabulary ids start at 3 (0 = unknown)."""


def _word(form: str) -> str:
    return form.lower()


def _suffix(word: str) -> str:
    return word[-3:]


@dataclass(frozen=True, slots=True)
class _Examples:
    """The static oracle's configurations over a token table, ready for mini-batches.

    ``tokens`` ``(T, C)``: word, suffix, tag (and feats) ids of each token; ``drop`` ``(T,)``: its
    word-dropout probability; ``rows`` ``(C, 18)``, ``labels`` ``(C, 12)``, ``valid`` ``(C, A)`` and
    ``gold`` ``(C,)`` describe the ``C`` configurations.
    """

    tokens: IntArray
    drop: NDArray[np.float64]
    rows: IntArray
    labels: IntArray
    valid: NDArray[np.bool_]
    gold: IntArray

    def batch(
        self, index: IntArray, rng: np.random.Generator
    ) -> tuple[IntArray, IntArray, NDArray[np.bool_], IntArray]:
        """Network inputs ``(tokens, labels, valid, gold)`` of some configurations, each word
        replaced by the unknown word with its dropout probability."""
        rows = self.rows[index]
        tokens = self.tokens[rows]
        tokens[:, :, 0][rng.random(rows.shape) < self.drop[rows]] = UNKNOWN
        return tokens, self.labels[index], self.valid[index], self.gold[index]


class NeuralTransitionParser(BeamDecoding, BaseParser):
    """Arc-hybrid parser with a feed-forward action classifier and beam search.

    Args:
        beam_size: hypotheses kept per sentence; also the length of the k-best list. The
            default, 4, is the widest beam that parses more than 2,000 words/s on one core
            (beam 8 gains a few tenths of LAS at about half the speed).
        word_dim, suffix_dim, tag_dim, label_dim: embedding widths of the lower-cased word
            (trained from scratch), its last three characters, its UPOS (and FEATS), and arc labels.
        use_feats: also embed each word's FEATS string (as one symbol, as Titov 2008 does
            for prediction); only when the sentences to parse carry FEATS as good as training's.
        hidden: ReLU units of the hidden layer.
        dropout: dropout rate on the embeddings and on the hidden layer.
        word_dropout: ``alpha`` of word dropout: a training word seen ``c`` times is
            replaced by the unknown word with probability ``alpha / (alpha + c)``.
        l2: L2 penalty on the two weight matrices.
        learning_rate, batch_size: Adam's step size and configurations per update.
        max_epochs: passes over the oracle configurations.
        patience: with ``dev``, stop after this many epochs without a better dev LAS
            (the best epoch's weights are kept).
        warm_start: when fitting an already fitted parser, continue training its network
            (see "Warm start" below) instead of starting from new random weights.
        warm_epochs: epochs of a warm fit (dev, if given, picks among them when more than one).
            One by default: in ``bench/warm_rounds.py`` (Wolof, Welsh; 1000 + 50 sentences) a
            second epoch doubled the warm time for a few hundredths of ensemble LAS.
        random_state: seed of initialisation, shuffling and dropout.

    Warm start (``warm_start=True`` on a fitted parser): ``fit`` keeps the network's weights.
    The word, suffix, UPOS (and FEATS) vocabularies and the label list grow (known values keep
    their ids); new words, suffixes, tags and labels get new embedding rows drawn like the
    initial ones, new labels new LEFT/RIGHT output columns (existing columns move with their
    weights), labels allowed on ROOT or elsewhere stay allowed. Adam resumes from its state at
    the kept epoch (``optimizer_``, saved with the model; new rows and columns start with zero
    moments) and runs ``warm_epochs`` epochs over all the oracle configurations; ``dev`` is
    parsed only to choose among several warm epochs. A parser saved before warm starts existed
    has no ``optimizer_`` and gets a new Adam.

    Attributes:
        words_, suffixes_, tags_: vocabularies of lower-cased forms, their last three
            characters, and UPOS tags.
        labels_: the (pseudo-projective) training labels; label id ``i`` is ``labels_[i-1]``.
        space_: the labelled actions and which labels may attach to ROOT.
        params_: the network's weights (:func:`parsing.neural.network.init_params`).
        optimizer_: the :class:`~parsing.neural.network.Adam` state at the kept epoch, from
            which a warm fit resumes.
        n_epochs_: the epoch whose weights were kept; history_: dev LAS after each epoch.

    Examples:
        >>> train = [Sentence.from_words(["a", "b"], upos=["X", "Y"], heads=[2, 0],
        ...                              deprels=["dep", "root"])] * 4
        >>> parser = NeuralTransitionParser(max_epochs=3, hidden=8).fit(train)
        >>> parse = parser.predict(train[:1])[0]
        >>> parse.heads.tolist(), len(parse.extras["kbest"]) <= parser.beam_size
        ([-1, 2, 0], True)
    """

    name: ClassVar[str] = "neural"
    parse_cost: ClassVar[float] = 2.5
    warm_start: bool = False  # class defaults: parsers saved before these parameters existed
    warm_epochs: int = 1
    warm_attributes: ClassVar[tuple[str, ...]] = ("optimizer_",)
    """Read from a model file only to continue training (:func:`parsing.persist.load_model`)."""
    n_epochs_: int
    description: ClassVar[str] = (
        "arc-hybrid transition parser, feed-forward network (Chen & Manning 2014), beam search, k-best"
    )

    def __init__(
        self,
        *,
        beam_size: int = 4,
        word_dim: int = 50,
        suffix_dim: int = 20,
        use_feats: bool = False,
        tag_dim: int = 20,
        label_dim: int = 20,
        hidden: int = 200,
        dropout: float = 0.3,
        word_dropout: float = 0.25,
        l2: float = 1e-6,
        learning_rate: float = 2e-3,
        batch_size: int = 256,
        max_epochs: int = 30,
        patience: int = 6,
        warm_start: bool = False,
        warm_epochs: int = 1,
        random_state: int | None = 0,
    ) -> None:
        self.beam_size = beam_size
        self.word_dim = word_dim
        self.suffix_dim = suffix_dim
        self.use_feats = use_feats
        self.tag_dim = tag_dim
        self.label_dim = label_dim
        self.hidden = hidden
        self.dropout = dropout
        self.word_dropout = word_dropout
        self.l2 = l2
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.random_state = random_state

    # --- training -------------------------------------------------------------------

    @one_blas_thread
    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Learn from the sentences with a single-rooted tree; ``dev`` picks the epoch."""
        trees = [
            (sentence, *system.projectivize(sentence.heads, sentence.deprels))
            for sentence in sentences
            if sentence.has_tree and np.count_nonzero(sentence.heads == 0) == 1
        ]
        if not trees:
            raise ValueError("no training sentence has a single-rooted tree")
        rng = np.random.default_rng(self.random_state)
        warm = self.warm_start and hasattr(self, "params_")
        old_space = self.space_ if warm else None
        examples = self._examples(trees, old_space)
        sizes = network.Sizes(
            len(self.words_) + 2, len(self.suffixes_) + 2, len(self.tags_) + 2, len(self.labels_) + 1,
            self.space_.n_actions, word_dim=self.word_dim, suffix_dim=self.suffix_dim, tag_dim=self.tag_dim,
            n_feats=len(self.feats_) + 2 if self.feats_ else 0, feats_dim=self.tag_dim,
            label_dim=self.label_dim, hidden=self.hidden,
        )  # fmt: skip
        if old_space is not None:
            params, adam = self._grown_model(sizes, old_space.n_labels, rng)
            epochs, previous_epochs = self.warm_epochs, self.n_epochs_
        else:
            params = network.init_params(sizes, rng)
            adam = network.Adam(params, learning_rate=self.learning_rate)
            epochs, previous_epochs = self.max_epochs, 0
        score_dev = not warm or epochs > 1
        dev_trees = [sentence for sentence in dev or () if sentence.has_tree] if score_dev else []
        best: network.Params = params
        best_adam = adam
        self.history_: list[float] = []
        self.n_epochs_ = 0
        for epoch in range(1, epochs + 1):
            order = rng.permutation(len(examples.gold))
            for start in range(0, len(order), self.batch_size):
                inputs = examples.batch(order[start : start + self.batch_size], rng)
                _, grads = network.loss_and_grads(params, *inputs, dropout=self.dropout, l2=self.l2, rng=rng)
                adam.step(params, grads)
            if not dev_trees:
                self.n_epochs_ = epoch
                continue
            self.params_ = params
            self.history_.append(evaluate(dev_trees, self.predict_greedy(dev_trees)).las.f1)
            if self.history_[-1] >= max(self.history_):
                best, self.n_epochs_ = {name: value.copy() for name, value in params.items()}, epoch
                best_adam = copy.deepcopy(adam)
            elif epoch - self.n_epochs_ >= self.patience:
                break
        self.params_, self.optimizer_ = best, best_adam
        self.n_epochs_ += previous_epochs
        return self

    def _grown_model(
        self, sizes: network.Sizes, old_n_labels: int, rng: np.random.Generator
    ) -> tuple[network.Params, network.Adam]:
        """The fitted weights and Adam state, grown to ``sizes`` for a warm start: new
        embedding rows for new vocabulary entries and labels (weights drawn like
        :func:`~parsing.neural.network.init_params`'s, moments zero), new LEFT/RIGHT output
        columns for labels added after the ``old_n_labels`` (zero). A parser saved without
        ``optimizer_`` gets a new Adam."""

        def draw(shape: tuple[int, int], dtype: np.dtype[Any]) -> NDArray[Any]:
            return rng.standard_normal(shape).astype(dtype)

        params = self._grown(self.params_, sizes, old_n_labels, draw)
        adam = network.Adam(params, learning_rate=self.learning_rate)
        saved: network.Adam | None = getattr(self, "optimizer_", None)
        if saved is not None:
            adam.first = self._grown(saved.first, sizes, old_n_labels, np.zeros)
            adam.second = self._grown(saved.second, sizes, old_n_labels, np.zeros)
            adam.steps = saved.steps
        return params, adam

    def _grown(
        self, tables: network.Params, sizes: network.Sizes, old_n_labels: int,
        new_rows: Callable[[tuple[int, int], np.dtype[Any]], NDArray[Any]],
    ) -> network.Params:
        """Copies of ``tables`` (weights or Adam moments) grown to ``sizes`` (see
        :meth:`_grown_model`); ``new_rows(shape, dtype)`` fills new embedding rows."""
        grown = {name: value.copy() for name, value in tables.items()}
        rows = {"word": sizes.n_words, "suffix": sizes.n_suffixes, "tag": sizes.n_tags,
                "feats": sizes.n_feats, "label": sizes.n_labels}  # fmt: skip
        for name, wanted in rows.items():
            if name in grown and wanted > len(grown[name]):
                table = grown[name]
                extra = new_rows((wanted - len(table), table.shape[1]), table.dtype)
                grown[name] = np.concatenate([table, extra])
        for name in ("W2", "b2"):  # actions: SHIFT, LEFT-ARC per label, RIGHT-ARC per label
            grown[name] = widen_label_columns(
                grown[name], fixed=1, old_n_labels=old_n_labels, n_labels=self.space_.n_labels
            )
        return grown

    def _examples(
        self, trees: list[tuple[Sentence, Heads, list[str]]], warm_from: ActionSpace | None = None
    ) -> _Examples:
        """Learn the vocabularies and the action space; return the oracle's training examples.

        With ``warm_from`` (the fitted model's action space) the fitted vocabularies and label
        list are extended instead of rebuilt, and labels allowed before stay allowed."""
        words = [_word(form) for sentence, _, _ in trees for form in sentence.forms[1:]]
        feats = (value for sentence, _, _ in trees for value in sentence.feats[1:])
        tags = (tag for sentence, _, _ in trees for tag in sentence.upos[1:])
        labels = {label for _, _, labels in trees for label in labels[1:]}
        if warm_from is None:
            self.words_ = Vocabulary.build(words)
            self.suffixes_ = Vocabulary.build(_suffix(word) for word in words)
            self.feats_ = Vocabulary.build(feats) if self.use_feats else None
            self.tags_ = Vocabulary.build(tags)
            self.labels_ = sorted(labels)
        else:
            self.words_ = self.words_.extended(words)
            self.suffixes_ = self.suffixes_.extended(_suffix(word) for word in words)
            self.feats_ = self.feats_.extended(feats) if self.feats_ is not None else None
            self.tags_ = self.tags_.extended(tags)
            self.labels_ = [*self.labels_, *sorted(labels - set(self.labels_))]
        label_ids = {label: number for number, label in enumerate(self.labels_, start=1)}
        root_labels = np.zeros(len(self.labels_) + 1, dtype=bool)
        other_labels = np.zeros_like(root_labels)
        if warm_from is not None:
            root_labels[: len(warm_from.root_labels)] = warm_from.root_labels
            other_labels[: len(warm_from.other_labels)] = warm_from.other_labels
        for _, heads, labels_ in trees:
            ids = [label_ids[label] for label in labels_[1:]]
            # unbuffered: a label met twice in a sentence (on the root arc and below) keeps both
            np.logical_or.at(root_labels, ids, heads[1:] == 0)
            np.logical_or.at(other_labels, ids, heads[1:] != 0)
        self.space_ = ActionSpace(root_labels, other_labels)
        tokens, offsets = self._encode([sentence for sentence, _, _ in trees])
        counts = np.bincount(self.words_.ids(words), minlength=len(self.words_))
        frequency = counts[np.maximum(tokens[:, 0] - 2, 0)]
        alpha = self.word_dropout
        drop = np.where(tokens[:, 0] > _ROOT, alpha / (alpha + frequency), 0.0)
        return _Examples(tokens, drop, *self._oracle(trees, offsets, label_ids))

    def _encode(self, sentences: Sequence[Sentence]) -> tuple[IntArray, IntArray]:
        """Word, suffix, tag (and feats) ids of every token, shape ``(T, C)`` (row 0 is the NULL token,
        then each sentence from its ROOT), and the row of each sentence's ROOT."""
        lengths = np.array([len(sentence.forms) for sentence in sentences], dtype=np.int64)
        offsets = 1 + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        words = [_word(form) for sentence in sentences for form in sentence.forms[1:]]
        columns = [
            self.words_.ids(words),
            self.suffixes_.ids([_suffix(word) for word in words]),
            self.tags_.ids([tag for sentence in sentences for tag in sentence.upos[1:]]),
        ]
        if self.feats_ is not None:
            columns.append(self.feats_.ids([value for sentence in sentences for value in sentence.feats[1:]]))
        is_word = np.ones(1 + int(lengths.sum()), dtype=bool)
        is_word[[0, *offsets.tolist()]] = False
        tokens = np.full((len(is_word), len(columns)), _ROOT, dtype=np.int64)
        tokens[0] = _NULL
        for c, known in enumerate(columns):
            tokens[is_word, c] = np.where(known == UNKNOWN, UNKNOWN, known + 2)
        return tokens, offsets

    def _oracle(
        self, trees: list[tuple[Sentence, Heads, list[str]]], offsets: IntArray, label_ids: dict[str, int]
    ) -> tuple[IntArray, IntArray, NDArray[np.bool_], IntArray]:
        """Features, valid actions and gold action of every static-oracle configuration."""
        states: list[State] = []
        owners: list[int] = []
        actions: list[int] = []
        for number, (_, heads, labels) in enumerate(trees):
            state = system.start(len(heads) - 1)
            while not system.is_final(state):
                move = system.oracle_move(state, heads)
                label = label_ids[labels[system.dependent(state, move)]] if move != system.SHIFT else -1
                states.append(state)
                owners.append(number)
                actions.append(self.space_.encode(move, label))
                state = system.advance(state, move, label)
        parts = [
            step_inputs(states[i : i + 2000], self.space_, offsets[owners[i : i + 2000]])
            for i in range(0, len(states), 2000)
        ]
        rows, labels_, valid = (np.concatenate(column) for column in zip(*parts, strict=True))
        gold = np.array(actions, dtype=np.int64)
        if not valid[np.arange(len(gold)), gold].all():
            raise RuntimeError("an oracle action is not valid")
        return rows, labels_, valid, gold
