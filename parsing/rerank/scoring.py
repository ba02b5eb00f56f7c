"""The scoring model of a reranker: the probabilistic parser whose k-best lists it reorders and
whose output-layer weights define its features (Titov 2008 ch. 6).

:class:`ScoringModel` is all the reranking code asks of a model; :func:`scoring_model` gives
it for the two parsers that have one:

- the neural member (:class:`NeuralScoring`): ``2n`` actions per derivation in its action space,
  replayed by :func:`parsing.rerank.replay.replay`, features w.r.t. ``[W2; b2]``, and
  adaptation word slots (copies of the unknown word's embedding, :mod:`parsing.rerank.adapt`);
- the ISBN parser (:class:`ISBNScoring`): decision codes in the ``4 + 2L`` decision space,
  replayed by :func:`parsing.rerank.isbn_replay.replay`, features w.r.t. ``[Wm | Wl | Wr]``
  and their biases; no word slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from parsing.features import UNKNOWN
from parsing.isbn import ISBNParser
from parsing.kbest import Derivations
from parsing.neural import NeuralTransitionParser, network
from parsing.rerank import features as ft
from parsing.rerank import isbn_replay, replay
from parsing.rerank.replay import Steps
from parsing.types import Sentence

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


class ScoringModel(Protocol):
    """What a reranker needs from the model that defines its features.

    A derivation is an action sequence ``(T,)`` in the model's own encoding; its replay is a
    :class:`~parsing.rerank.replay.Steps` of decision rows over ``A`` actions after ``H``
    hidden units, whose Fisher block ``(H+1, A)`` is the gradient of ``log P`` w.r.t. the
    output-layer weights and biases (:mod:`parsing.rerank.features`).
    """

    def kbest_derivations(self, sentences: Sequence[Sentence], k: int) -> list[list[Derivations]]:
        """Each sentence's k-best trees (best first) with the beam's derivations of each."""
        ...

    def replay(self, sentences: Sequence[Sentence],
               derivations: Sequence[Sequence[IntArray]]) -> list[list[Steps]]:
        """Per sentence, per derivation, its replayed decisions (``ValueError`` on an invalid one)."""
        ...

    def dimension(self, n_words: int = 0) -> int:
        """``D = 1 + (H+1) * A + n_words * E`` of a feature row with ``n_words`` word slots of
        width ``E`` (``ValueError`` when the model has none and ``n_words > 0``)."""
        ...

    def word_block(self, steps: Steps, sentence: Sentence, words: Sequence[str], *,
                   frozen: bool) -> FloatArray:
        """``(len(words), E)``: ``d log P`` of a derivation w.r.t. the words' slots."""
        ...


def word_positions(parser: NeuralTransitionParser, sentence: Sentence, words: Sequence[str]) -> IntArray:
    """``(n+1,)`` the adaptation slot of each position's (lower-cased) word, ``-1`` for ROOT,
    words without a slot and words the parser knows (only unknown words are re-parameterised)."""
    slot = {word: number for number, word in enumerate(words)}
    forms = [form.lower() for form in sentence.forms[1:]]
    unknown = parser.words_.ids(forms) == UNKNOWN if forms else np.zeros(0, dtype=bool)
    found = [slot.get(form, -1) if is_unknown else -1
             for form, is_unknown in zip(forms, unknown.tolist(), strict=True)]
    return np.array([-1, *found], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class NeuralScoring:
    """The neural member as a :class:`ScoringModel` (``A`` = its action space)."""

    parser: NeuralTransitionParser

    def kbest_derivations(self, sentences: Sequence[Sentence], k: int) -> list[list[Derivations]]:
        return self.parser.kbest_derivations(sentences, k)

    def replay(self, sentences: Sequence[Sentence],
               derivations: Sequence[Sequence[IntArray]]) -> list[list[Steps]]:
        return replay.replay(self.parser, sentences, derivations)

    def dimension(self, n_words: int = 0) -> int:
        hidden, n_actions = self.parser.params_["W2"].shape
        return int(1 + (hidden + 1) * n_actions + n_words * self.parser.params_["word"].shape[1])

    def word_block(self, steps: Steps, sentence: Sentence, words: Sequence[str], *,
                   frozen: bool) -> FloatArray:
        params = self.parser.params_
        embed = params["word"].shape[1]
        slot_weights = params["W1"][: network.F_TOKENS * embed].astype(np.float64)
        slot_weights = slot_weights.reshape(network.F_TOKENS, embed, -1)
        return ft.word_block(steps, word_positions(self.parser, sentence, words), slot_weights,
                             params["W2"].astype(np.float64), len(words), frozen=frozen)


@dataclass(frozen=True, slots=True)
class ISBNScoring:
    """The ISBN parser as a :class:`ScoringModel` (``A = 4 + 2L`` decisions; no word slots)."""

    parser: ISBNParser

    def kbest_derivations(self, sentences: Sequence[Sentence], k: int) -> list[list[Derivations]]:
        return self.parser.kbest_derivations(sentences, k)

    def replay(self, sentences: Sequence[Sentence],
               derivations: Sequence[Sequence[IntArray]]) -> list[list[Steps]]:
        return isbn_replay.replay(self.parser, sentences, derivations)

    def dimension(self, n_words: int = 0) -> int:
        if n_words:
            raise ValueError("the ISBN parser has no adaptation word slots")
        hidden = self.parser.params_["Wm"].shape[0]
        return int(1 + (hidden + 1) * isbn_replay.decision_width(self.parser))

    def word_block(self, steps: Steps, sentence: Sentence, words: Sequence[str], *,
                   frozen: bool) -> FloatArray:
        raise ValueError("the ISBN parser has no adaptation word slots")


Scorable = NeuralTransitionParser | ISBNParser | ScoringModel
"""A fitted neural member, a fitted ISBN parser, or any other :class:`ScoringModel`."""


def scoring_model(parser: Scorable) -> ScoringModel:
    """``parser`` as a :class:`ScoringModel` (the neural member and the ISBN parser wrapped)."""
    if isinstance(parser, NeuralTransitionParser):
        return NeuralScoring(parser)
    if isinstance(parser, ISBNParser):
        return ISBNScoring(parser)
    return parser
