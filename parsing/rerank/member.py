"""Probabilistic members with their k-best list reranked (Titov 2008 ch. 6-7), as ensemble
members: ``neural-rerank`` (:class:`RerankedNeuralParser`) and ``isbn-rerank``
(:class:`RerankedISBNParser`), sharing :class:`RerankedMember`.

``fit(train, dev)`` trains the parser on ``train`` (``dev`` picks its epoch) and then a
:class:`~parsing.rerank.reranker.Reranker` on the parser's k-best lists of ``dev``: held-out
sentences the network did not learn from, so its lists carry the errors it makes on new text
(the list of a training sentence is nearly always right). In a round, ``dev`` is the
treebank's dev split or the round's held-out slice of reviewed sentences: the annotators'
corrections, which is the thesis's adaptation setting (ch. 7). For the neural member, with
``word_slots`` the dev words seen at least twice that the network treats as unknown get their
own feature slots (:func:`parsing.rerank.adapt.adapt`); the ISBN parser has none.

Without ``dev`` (or when no dev list has two trees) there is nothing to train the reranker on:
the member parses as the plain parser with beam ``k`` and ``reranked_`` is ``False``.

Measured in ``bench/rerank.py``: efficient TOP trained on dev lists, ``k`` = 16, adds +0.83 test
LAS over the 1-best of the neural member's list on the six shared treebanks (gold tags). Over
the ISBN parser's list (``bench/member_isbn.py``, seed 0, six treebanks): +0.18 (gold) and
+0.29 (predicted tags) at ``k`` = 8, +0.54 (gold) at ``k`` = 16 at half the speed (README).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from parsing.base import BaseParser
from parsing.constraints import Constraints
from parsing.isbn import ISBNParser
from parsing.kbest import list_parse
from parsing.neural import NeuralTransitionParser
from parsing.rerank.adapt import adapt
from parsing.rerank.candidates import listed_candidates
from parsing.rerank.reranker import Reranker
from parsing.types import Parse, Sentence

DEFAULT_RATES: tuple[float, ...] = (0.001, 0.003, 0.01, 0.03, 0.1, 1.0)
"""Learning rates of the derivative features tried by cross-validation (``bench/rerank.py``'s)."""


class RerankedMember(BaseParser):
    """A probabilistic parser whose k-best list a data-defined-kernel reranker reorders (the
    shared part of the members; subclasses say which parser and how it is built).

    Attributes:
        reranker_: the fitted reranker, or ``None`` (module docstring); reranked_: whether
        predictions are reranked.
    """

    k: int
    kind: str
    rates: Sequence[float]
    epochs: int
    random_state: int | None
    word_slots: bool = False
    min_count: int = 2
    reranker_: Reranker | None

    @property
    def reranked_(self) -> bool:
        """Whether :meth:`predict` reranks (a reranker was trained)."""
        return getattr(self, "reranker_", None) is not None

    @abstractmethod
    def _fit_parser(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None,
                    seed: int) -> NeuralTransitionParser | ISBNParser:
        """Train, keep and return the parser whose lists are reranked."""

    @abstractmethod
    def _parser(self) -> NeuralTransitionParser | ISBNParser:
        """The fitted parser whose lists are reranked."""

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Train the parser on ``sentences`` and the reranker on its k-best lists of ``dev``."""
        if self.k < 2:
            raise ValueError(f"k must be at least 2 to rerank a list, got {self.k}")
        seed = 0 if self.random_state is None else int(self.random_state)
        parser = self._fit_parser(sentences, dev, seed)
        held_out = [sentence for sentence in dev or () if sentence.has_tree]
        self.reranker_ = None
        if held_out:
            try:
                self.reranker_ = adapt(parser, held_out, k=self.k, kind=self.kind,
                                       min_count=self.min_count, word_slots=self.word_slots,
                                       rates=list(self.rates), epochs=self.epochs, random_state=seed)
            except ValueError:  # no dev list with two trees: nothing to learn from
                self.reranker_ = None
        return self

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Each sentence's reranked tree from the parser's ``k``-best list, with
        ``arc_scores[d]`` the list's posterior of ``d``'s arc and ``extras["kbest"]``,
        ``extras["rank"]`` (the chosen tree's place in the list, 0 = the parser's best)."""
        parser = self._parser()
        listed = parser.kbest_derivations(sentences, self.k)
        kbest = [[(heads, deprels, prob) for heads, deprels, prob, _ in trees] for trees in listed]
        if self.reranker_ is None:
            return [list_parse(trees, 0) for trees in kbest]
        chosen = self.reranker_.choose(parser, sentences, [listed_candidates(trees) for trees in listed])
        return [list_parse(trees, rank)
                for trees, rank in zip(kbest, chosen, strict=True)]

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """The parser's constrained beam, not reranked: the reranker learned to choose among
        unconstrained lists."""
        return self._parser().predict_constrained(sentences, constraints, free=free)


class RerankedNeuralParser(RerankedMember):
    """The neural member whose k-best list a data-defined-kernel reranker reorders.

    Args:
        k: k-best list length (the beam of the reranked parse).
        kind: reranking features: ``"top_eff"`` (default; the best measured), ``"top"``, ``"fisher"``.
        rates: derivative learning rates tried by cross-validation on the dev lists.
        epochs: perceptron passes.
        word_slots: give frequent dev words the network treats as unknown their own slots.
        min_count: occurrences in dev a word needs for its slots.
        neural_params: hyperparameters of the :class:`~parsing.neural.NeuralTransitionParser`.
        random_state: seed of the network and of the perceptron.

    Attributes:
        neural_: the fitted network; reranker_: the fitted reranker, or ``None`` (module
        docstring); reranked_: whether predictions are reranked.
    """

    name: ClassVar[str] = "neural-rerank"
    description: ClassVar[str] = (
        "neural member's k-best list reranked by a perceptron over Fisher/TOP features of its "
        "network, trained on held-out (dev or reviewed) sentences (Titov 2008 ch. 6-7)"
    )
    parse_cost: ClassVar[float] = 25.0  # 22-31 times a transition member (bench/ensembles.py, Telugu, Tamil)

    neural_: NeuralTransitionParser

    def __init__(self, *, k: int = 16, kind: str = "top_eff", rates: Sequence[float] = DEFAULT_RATES,
                 epochs: int = 5, word_slots: bool = True, min_count: int = 2,
                 neural_params: Mapping[str, Any] | None = None, random_state: int | None = 0) -> None:
        self.k = k
        self.kind = kind
        self.rates = rates
        self.epochs = epochs
        self.word_slots = word_slots
        self.min_count = min_count
        self.neural_params = neural_params
        self.random_state = random_state

    def _fit_parser(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None,
                    seed: int) -> NeuralTransitionParser:
        params = {"random_state": seed, **dict(self.neural_params or {})}
        self.neural_ = NeuralTransitionParser(**params).fit(sentences, dev)
        return self.neural_

    def _parser(self) -> NeuralTransitionParser:
        return self.neural_


class RerankedISBNParser(RerankedMember):
    """The ISBN parser (Titov 2008 ch. 5) whose k-best list the efficient-TOP reranker (ch. 6)
    reorders: features w.r.t. its move and label output weights ``[Wm | Wl | Wr]``
    (:mod:`parsing.rerank.isbn_replay`); no adaptation word slots.

    Args:
        k: k-best list length (the beam of the reranked parse): 8, the ISBN parser's beam;
            16 gains more (module docstring) at about 450 instead of 1,000 words/s.
        kind: reranking features: ``"top_eff"`` (default), ``"top"``, ``"fisher"``.
        rates: derivative learning rates tried by cross-validation on the dev lists.
        epochs: perceptron passes.
        isbn_params: hyperparameters of the :class:`~parsing.isbn.ISBNParser`.
        random_state: seed of the network and of the perceptron.

    Attributes:
        isbn_: the fitted ISBN parser; reranker_: the fitted reranker, or ``None`` (module
        docstring); reranked_: whether predictions are reranked.
    """

    name: ClassVar[str] = "isbn-rerank"
    description: ClassVar[str] = (
        "ISBN parser's k-best list reranked by a perceptron over efficient-TOP features of its "
        "move and label decisions, trained on held-out (dev or reviewed) sentences (Titov 2008 ch. 5-6)"
    )
    parse_cost: ClassVar[float] = 40.0  # 2.7 times isbn's 15 (Tamil test, k = 8: beam, replay, features)

    isbn_: ISBNParser

    def __init__(self, *, k: int = 8, kind: str = "top_eff", rates: Sequence[float] = DEFAULT_RATES,
                 epochs: int = 5, isbn_params: Mapping[str, Any] | None = None,
                 random_state: int | None = 0) -> None:
        self.k = k
        self.kind = kind
        self.rates = rates
        self.epochs = epochs
        self.isbn_params = isbn_params
        self.random_state = random_state

    def _fit_parser(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None,
                    seed: int) -> ISBNParser:
        params = {"random_state": seed, **dict(self.isbn_params or {})}
        self.isbn_ = ISBNParser(**params).fit(sentences, dev)
        return self.isbn_

    def _parser(self) -> ISBNParser:
        return self.isbn_
