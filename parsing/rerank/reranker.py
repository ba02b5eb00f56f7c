"""A linear reranker of a probabilistic parser's k-best lists over data-defined features
(Titov 2008 ch. 6): Fisher, TOP or efficient-TOP features of the output layer
(:mod:`parsing.rerank.features`), trained with the loss-scaled averaged perceptron
(:mod:`parsing.rerank.perceptron`). It only ever picks a tree of the list it is given. The
parser is a :class:`~parsing.rerank.scoring.ScoringModel`: the neural member or the ISBN
parser (:func:`~parsing.rerank.scoring.scoring_model`).

Typical use, with ``full`` the fitted :class:`~parsing.neural.NeuralTransitionParser` (or
:class:`~parsing.isbn.ISBNParser`):

    train_lists = beam_candidates(full, dev, 16)               # held-out data, full model
    reranker = Reranker("top_eff").fit(full, dev, train_lists)
    test_lists = beam_candidates(full, test, 16)
    trees = reranker.rerank(full, test, test_lists)

The features must be computed under the model the reranker was trained with (the same
network: its hidden units are what the weights refer to).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from parsing.persist import load_model, save_model
from parsing.rerank import perceptron
from parsing.rerank.candidates import Candidates, Tree, labelled_accuracy
from parsing.rerank.extract import KINDS, dimension, iter_features
from parsing.rerank.scoring import Scorable
from parsing.types import Sentence

FloatArray = NDArray[np.float64]


class _LazyExamples(Sequence[perceptron.Example]):
    """Training lists whose features are recomputed on access (one sentence at a time),
    for training sets whose dense features would not fit the memory budget."""

    def __init__(self, reranker: Reranker, parser: Scorable, sentences: Sequence[Sentence],
                 candidates: Sequence[Candidates], gains: list[FloatArray]) -> None:
        self.reranker, self.parser = reranker, parser
        self.sentences, self.candidates, self.gains = sentences, candidates, gains

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, index: Any) -> Any:
        features = next(iter_features(self.parser, [self.sentences[index]], [self.candidates[index]],
                                      self.reranker.kind, self.reranker.words))
        return features, self.gains[index]


class Reranker:
    """Loss-scaled averaged perceptron over data-defined features of k-best lists.

    Args:
        kind: ``"fisher"``, ``"top"`` or ``"top_eff"`` (:data:`~parsing.rerank.extract.KINDS`).
        rate: learning rate of the derivative features relative to the first component
            (:mod:`~parsing.rerank.perceptron`); with ``rates`` it is chosen by cross-validation.
        rates: candidate rates for ``folds``-fold cross-validation on the training lists
            (``None``: use ``rate``).
        epochs: perceptron passes (the thesis ran one).
        folds: cross-validation folds when ``rates`` is given.
        words: adaptation word slots (lower-cased words the model treats as unknown;
            :func:`parsing.rerank.adapt.adapt`; the neural member only).
        max_cache_bytes: training features kept in memory up to this size (float32 dense,
            sparse for ``top_eff``); beyond it they are recomputed at each access.
        random_state: seed of the perceptron's shuffling and of the folds.

    Attributes:
        weights_: ``(D,)`` the averaged weights; rate_: the rate used; cv_: held-out correct
            words per candidate rate (empty without ``rates``); n_train_: training lists used.
    """

    def __init__(self, kind: str = "top_eff", *, rate: float = 1.0, rates: Sequence[float] | None = None,
                 epochs: int = 5, folds: int = 3, words: Sequence[str] = (), max_cache_bytes: int = 2**30,
                 random_state: int = 0) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown feature kind {kind!r}; expected one of {', '.join(KINDS)}")
        if epochs < 1:
            raise ValueError(f"epochs must be at least 1, got {epochs}")
        self.kind = kind
        self.rate = float(rate)
        self.rates = [float(r) for r in rates] if rates is not None else None
        self.epochs = epochs
        self.folds = folds
        self.words = list(words)
        self.max_cache_bytes = max_cache_bytes
        self.random_state = random_state

    @property
    def sign(self) -> float:
        """The first component's initial weight: ``+1`` on ``log P``, ``-1`` on TOP's ``v``."""
        return 1.0 if self.kind == "fisher" else -1.0

    # --- training -------------------------------------------------------------------

    def fit(self, parser: Scorable, sentences: Sequence[Sentence],
            candidates: Sequence[Candidates | None]) -> Self:
        """Train on gold ``sentences`` and their candidate lists (``None`` lists, and lists
        of one tree, teach nothing and are skipped).

        Raises:
            ValueError: mismatched lengths, a sentence without a gold tree, or no list with
                two or more candidates.
        """
        if len(sentences) != len(candidates):
            raise ValueError(f"{len(sentences)} sentences but {len(candidates)} candidate lists")
        if any(not sentence.has_tree for sentence in sentences):
            raise ValueError("every training sentence needs a gold tree")
        kept = [i for i, listed in enumerate(candidates) if listed is not None and len(listed) > 1]
        if not kept:
            raise ValueError("no training sentence has two or more candidates")
        gold = [sentences[i] for i in kept]
        lists_ = [listed for listed in (candidates[i] for i in kept) if listed is not None]
        gains = [labelled_accuracy(sentence, listed.trees)
                 for sentence, listed in zip(gold, lists_, strict=True)]
        size = dimension(parser, len(self.words))
        examples = self._examples(parser, gold, lists_, gains, size)
        self.n_train_ = len(examples)
        self.cv_: dict[str, float] = {}
        self.rate_ = self.rate
        if self.rates:
            self.rate_, held_out = perceptron.cross_validated_rate(
                examples, [len(sentence) for sentence in gold], size, sign=self.sign, rates=self.rates,
                epochs=self.epochs, folds=self.folds, seed=self.random_state)
            self.cv_ = {str(rate): correct for rate, correct in held_out.items()}
        rng = np.random.default_rng(self.random_state)
        self.weights_ = perceptron.train(examples, size, sign=self.sign, rate=self.rate_, epochs=self.epochs,
                                         rng=rng)
        return self

    def _examples(self, parser: Scorable, gold: list[Sentence], lists: list[Candidates],
                  gains: list[FloatArray], size: int) -> Sequence[perceptron.Example]:
        """The training lists' features, in memory when the budget allows (module docstring)."""
        rows = sum(len(listed) for listed in lists)
        if self.kind != "top_eff" and rows * size * 4 > self.max_cache_bytes:
            return _LazyExamples(self, parser, gold, lists, gains)
        examples: list[perceptron.Example] = []
        matrices = iter_features(parser, gold, lists, self.kind, self.words)
        for features, gain in zip(matrices, gains, strict=True):
            stored = sp.csr_matrix(features) if self.kind == "top_eff" else features.astype(np.float32)
            examples.append((stored, gain))
        return examples

    # --- prediction -----------------------------------------------------------------

    def _check(self, parser: Scorable) -> None:
        if not hasattr(self, "weights_"):
            raise ValueError("the reranker is not fitted")
        if len(self.weights_) != dimension(parser, len(self.words)):
            raise ValueError("the reranker was trained with a model of other sizes than this parser")

    def scores(self, parser: Scorable, sentences: Sequence[Sentence],
               candidates: Sequence[Candidates]) -> list[FloatArray]:
        """Each list's candidate scores ``(K_i,)`` (features under ``parser``)."""
        self._check(parser)
        return [perceptron.scores(self.weights_, features)
                for features in iter_features(parser, sentences, candidates, self.kind, self.words)]

    def choose(self, parser: Scorable, sentences: Sequence[Sentence],
               candidates: Sequence[Candidates]) -> list[int]:
        """The index in its list of each sentence's chosen tree (the earliest among equals)."""
        return [int(np.argmax(scored)) for scored in self.scores(parser, sentences, candidates)]

    def rerank(self, parser: Scorable, sentences: Sequence[Sentence],
               candidates: Sequence[Candidates]) -> list[Tree]:
        """Each sentence's chosen tree: always one of its list."""
        chosen = self.choose(parser, sentences, candidates)
        return [listed.trees[index] for listed, index in zip(candidates, chosen, strict=True)]

    # --- files ---------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the reranker as a model file (:func:`parsing.persist.save_model`: ``.npz``
        arrays plus a JSON header, no pickle)."""
        if not hasattr(self, "weights_"):
            raise ValueError("the reranker is not fitted")
        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path) -> Reranker:
        """Read a reranker written by :meth:`save`.

        Raises:
            ModelFormatError: not a model file of this format, or not a reranker.
        """
        reranker: Reranker = load_model(path, cls)
        return reranker
