"""Beam-search and constrained prediction of
:class:`~parsing.neural.parser.NeuralTransitionParser` (a mixin): k-best lists as distributions
over trees, arc posteriors, and pruning of hypotheses that break a forced arc.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from parsing.constraints import Constraints, finish_parse, validate_all
from parsing.kbest import Derivations, KBest, derivation_lists, length_chunks, list_parse, tree_distribution
from parsing.neural import network, system
from parsing.neural.batch import Configurations
from parsing.neural.search import ActionSpace, Hypothesis, Restriction, Scorer, beam_search, greedy
from parsing.transition.arc_hybrid import ArcHybrid
from parsing.transition.constrained import ConstraintGuide
from parsing.transition.state import Action, State
from parsing.types import Heads, Parse, Sentence

_P = ParamSpec("_P")
_R = TypeVar("_R")


def one_blas_thread(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``function`` with BLAS limited to one thread.

    The network's matrices are small (``(B, 200) @ (200, ~140)``): BLAS threads cost more
    in synchronisation than they save (parsing 60 Afrikaans sentences: 1.23 s of CPU with
    two threads, 0.35 s with one), so training and parsing use one thread.
    """

    @functools.wraps(function)
    def limited(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with threadpool_limits(limits=1, user_api="blas"):
            return function(*args, **kwargs)

    return limited

IntArray = NDArray[np.int64]


def _recorded(hypothesis: Hypothesis) -> IntArray:
    """The actions a hypothesis of a recording beam took (``beam_search(..., record=True)``)."""
    if hypothesis.actions is None:
        raise ValueError("the beam did not record its actions")
    return hypothesis.actions


_CHUNK_TOKENS = 800
"""Sentences are decoded together in chunks of about this many words. Each chunk's token table
takes ``18 * hidden * 4`` bytes per word (14 MB per 1,000 words at 200 units, three times that
while it is built): 3,000 made parsing a test set peak 130 MB above the loaded model, 800
peaks about 50 MB above it, at the same speed (Wolof test, beam 4)."""


class BeamDecoding:
    """Prediction for a fitted :class:`~parsing.neural.parser.NeuralTransitionParser`."""

    beam_size: int
    params_: network.Params
    space_: ActionSpace
    labels_: list[str]

    def _encode(self, sentences: Sequence[Sentence]) -> tuple[IntArray, IntArray]:
        raise NotImplementedError


    def _chunks(self, sentences: Sequence[Sentence]) -> list[list[int]]:
        """Sentence indices grouped, by length, into chunks of about ``_CHUNK_TOKENS`` words."""
        return length_chunks([len(sentence) for sentence in sentences], _CHUNK_TOKENS)

    def _scorer(self, sentences: Sequence[Sentence]) -> tuple[Scorer, IntArray]:
        """A scorer over the tokens of ``sentences`` and the ROOT row of each sentence."""
        params = self.params_
        ids, offsets = self._encode(sentences)
        tokens = network.token_table(params, ids)
        labels_by_slot = network.label_table(params)

        def score(rows: IntArray, labels: IntArray, valid: NDArray[np.bool_]) -> NDArray[np.floating]:
            return network.log_probs_from_tables(params, tokens, labels_by_slot, rows, labels, valid)

        return score, offsets

    def _tree(self, state: State) -> tuple[Heads, list[str]]:
        """The (de-projectivised) tree of a final configuration."""
        labels = [""] + [self.labels_[label - 1] for label in state.labels[1:].tolist()]
        return system.deprojectivize(state.heads, labels)

    def predict_greedy(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse with the most probable action at every step (the same as ``beam_size=1``)."""
        parses: list[Parse] = [Parse(np.zeros(0, dtype=np.intp), [])] * len(sentences)
        for chunk in self._chunks(sentences):
            scorer, offsets = self._scorer([sentences[i] for i in chunk])
            lengths = [len(sentences[i]) for i in chunk]
            for i, state in zip(chunk, greedy(scorer, self.space_, lengths, offsets), strict=True):
                heads, deprels = self._tree(state)
                scores = np.ones(len(heads))
                scores[0] = np.nan
                parses[i] = Parse(heads, deprels, scores, extras={"kbest": [(heads, deprels, 1.0)]})
        return parses

    @one_blas_thread
    def _kbest(self, sentences: Sequence[Sentence], k: int) -> list[KBest]:
        """Each sentence's k-best trees with probabilities normalised over the list, best
        first (derivations giving the same tree are merged)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        lists: list[KBest] = [[] for _ in sentences]
        for chunk in self._chunks(sentences):
            scorer, offsets = self._scorer([sentences[i] for i in chunk])
            lengths = [len(sentences[i]) for i in chunk]
            for i, beam in zip(
                chunk, beam_search(scorer, self.space_, lengths, offsets, beam=k), strict=True
            ):
                lists[i] = self._distribution(beam)
        return lists

    def _distribution(self, beam: list[Hypothesis]) -> KBest:
        """The beam's distinct trees, probabilities normalised over them, best first."""
        return tree_distribution((*self._tree(hypothesis.state), hypothesis.log_prob) for hypothesis in beam)

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """The most probable tree of each sentence under beam search (``beam_size``), with
        ``extras["kbest"] = [(heads, deprels, probability), ...]`` (best first, probabilities
        normalised over the list) and ``arc_scores[d]`` the k-best posterior of ``d``'s arc."""
        return [list_parse(kbest, 0) for kbest in self._kbest(sentences, self.beam_size)]

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Parse keeping the forced arcs and labels (one :class:`Constraints` per sentence).

        A sentence whose beam-search parse (:meth:`predict`) has every forced arc keeps it.
        Otherwise beam search runs again and prunes every extension that breaks a forced arc:
        a live hypothesis may only take the arc-hybrid moves of zero dynamic-oracle cost with
        respect to the forced arcs (:class:`~parsing.transition.constrained.ConstraintGuide`;
        arc-hybrid is arc-decomposable) and the forced label. The tree is deprojectivised and
        checked; forced arcs the projective system could not build (non-projective ones) are
        repaired in by :func:`~parsing.constraints.finish_parse`. ``arc_scores`` are the
        k-best posteriors of the constrained beam.
        """
        validate_all([len(s) for s in sentences], constraints)
        free = self.predict(sentences) if free is None else free
        redo = [i for i, (parse, forced) in enumerate(zip(free, constraints, strict=True))
                if not forced.satisfied_by(parse.heads)]
        parses = list(free)
        for chunk in self._chunks([sentences[i] for i in redo]):
            picked = [redo[j] for j in chunk]
            scorer, offsets = self._scorer([sentences[i] for i in picked])
            lengths = [len(sentences[i]) for i in picked]
            restrict = self._restriction([constraints[i] for i in picked], lengths)
            beams = beam_search(scorer, self.space_, lengths, offsets, beam=self.beam_size, restrict=restrict)
            for i, beam in zip(picked, beams, strict=True):
                parses[i] = list_parse(self._distribution(beam), 0)
        return [finish_parse(parse, forced) for parse, forced in zip(parses, constraints, strict=True)]

    def _restriction(self, constraints: Sequence[Constraints], lengths: Sequence[int]) -> Restriction:
        """The beam's pruning for the sentences of one chunk (see :meth:`predict_constrained`)."""
        n_labels = self.space_.n_labels
        class_actions = np.array([int(Action.SHIFT), *[int(Action.LEFT_ARC)] * n_labels,
                                  *[int(Action.RIGHT_ARC)] * n_labels], dtype=np.intp)
        class_labels = np.array([-1, *range(n_labels), *range(n_labels)], dtype=np.intp)
        index = {label: number for number, label in enumerate(self.labels_, start=1)}
        guides = [ConstraintGuide.build(forced, n, index, class_actions, class_labels, dynamic=True)
                  for forced, n in zip(constraints, lengths, strict=True)]
        hybrid = ArcHybrid()

        def restrict(rows: Configurations, owner: IntArray, valid: NDArray[np.bool_]) -> NDArray[np.bool_]:
            allowed = valid.copy()
            ends = np.stack([rows.stack_top()[:, 0], rows.buffer_front()[:, 0]], axis=1)  # (H, 2): s0, b0
            for row, (sentence, top, front) in enumerate(zip(owner.tolist(), *ends.T.tolist(), strict=True)):
                guide = guides[sentence]
                if (top >= 0 and guide.involved[top]) or (front >= 0 and guide.involved[front]):
                    allowed[row] = guide.allowed(hybrid, rows.state(row), valid[row])  # else quiet: all valid
            return allowed

        return restrict

    @one_blas_thread
    def kbest_derivations(self, sentences: Sequence[Sentence], k: int) -> list[list[Derivations]]:
        """Each sentence's k-best list as :meth:`predict_kbest` lists it (same trees, same
        order), each tree with the beam's derivations of it: ``(heads, deprels, probability,
        [(actions (2n,), log P of the derivation), ...])`` (several derivations when the beam
        reached one tree in several ways; most probable first). For reranking with features
        derived from the network (:mod:`parsing.rerank`)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        lists: list[list[Derivations]] = [[] for _ in sentences]
        for chunk in self._chunks(sentences):
            scorer, offsets = self._scorer([sentences[i] for i in chunk])
            lengths = [len(sentences[i]) for i in chunk]
            beams = beam_search(scorer, self.space_, lengths, offsets, beam=k, record=True)
            for i, beam in zip(chunk, beams, strict=True):
                lists[i] = derivation_lists((*self._tree(hypothesis.state), _recorded(hypothesis),
                                             hypothesis.log_prob) for hypothesis in beam)
        return lists

    def predict_kbest(self, sentences: Sequence[Sentence], k: int) -> list[list[Parse]]:
        """Each sentence's k-best list (at most ``k`` distinct trees, most probable first) as
        parses; ``extras["kbest"]`` is the shared list and ``extras["rank"]`` the position."""
        return [
            [list_parse(kbest, rank) for rank in range(len(kbest))] for kbest in self._kbest(sentences, k)
        ]
