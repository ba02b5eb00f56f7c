"""The ISBN ensemble member: Titov's (2008, ch. 5) latent-variable dependency parser, made
discriminative and decoded with a beam pruned after each shift.

* Arc-eager (:mod:`parsing.isbn.system`, the repository's system) with pseudo-projective
  lifting (HEAD encoding) of non-projective training trees and the inverse after parsing.
* A latent state per step linked to the most recent earlier steps in 7 structural relations
  (:mod:`parsing.isbn.structure`) plus explicit features (:mod:`parsing.isbn.encoding`).
* ``P(move | h_t)`` then ``P(label | arc, h_t)`` (:mod:`parsing.isbn.network`); no word prediction.
* Trained by maximum likelihood of the static oracle's derivations with Adam; ``dev`` picks
  the epoch (greedy dev LAS).
* Beam search (:mod:`parsing.isbn.beam`). The final beam, normalised, is a distribution over
  trees: ``Parse.extras["kbest"]`` holds it and ``Parse.arc_scores[d]`` is the posterior of the
  chosen arc into ``d`` under it.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.constraints import Constraints, finish_parse, validate_all
from parsing.isbn import system
from parsing.isbn.beam import Hypothesis, Model, Restrict, beam_search
from parsing.isbn.encoding import ISBNEncoder
from parsing.isbn.network import init_params, loss_and_grads
from parsing.isbn.oracle import derive, feature_ids
from parsing.isbn.training import batch_order, drop_probabilities, make_batch, word_dropped
from parsing.kbest import Derivations, KBest, derivation_lists, length_chunks, list_parse, tree_distribution
from parsing.neural.decoding import one_blas_thread
from parsing.neural.network import Adam
from parsing.scorer.metrics import evaluate
from parsing.transition.constrained import ConstraintGuide
from parsing.transition.state import State
from parsing.types import Heads, Parse, Sentence

IntArray = NDArray[np.int64]

_DECAYED = ("E", "J", "Wm", "Wl", "Wr")
"""The weight matrices ``weight_decay`` shrinks (biases are left alone)."""

_CHUNK_TOKENS = 1500
"""Sentences are decoded together in chunks of about this many words."""


class ISBNParser(BaseParser):
    """Feed-forward ISBN dependency parser (arc-eager, latent states linked by structure, beam).

    Args:
        hidden: latent units per step (Titov: 80; 200 parsed Tamil test 2-3 LAS better at
            beam 8, 300 no better on Tamil, Wolof or Irish).
        beam_size: hypotheses kept after each consumed word; also the k-best list's length.
            8 by default: +1-3 LAS over greedy on Tamil and Wolof test at about 2,000-3,500
            words/s on one core; 16 adds under 0.3 LAS at about half the speed (~1,100 words/s).
        k_labels: labels tried per arc (Titov: 5).
        min_count: frequency cut-off of FORM, LEMMA and FEATS values (Titov: 5).
        max_feats: FEATS components read per word.
        lookahead: also read the second and third buffer words (not in the generative model).
        extended: also read more words' FORM / UPOS (:mod:`parsing.isbn.encoding`; not in the thesis).
        learning_rate, batch_size: Adam's step and sentences per update (8 beat 16 on Tamil,
            Wolof and Irish test by 0.5-1.7 LAS).
        relations: link each step's latent state to the related earlier steps (False: a local
            classifier over the explicit features, Titov's "TF-NA" ablation; it lost 3.3 and
            2.8 test LAS on Tamil and Wolof).
        decay: the learning rate is multiplied by this after each epoch ("annealing").
        clip: gradients are rescaled to at most this global norm.
        average: evaluate and keep an exponential moving average of the weights (over about
            the last epoch's updates) instead of the last weights.
        l2: L2 penalty on ``J`` and the output weights.
        weight_decay: decoupled weight decay (as AdamW) of every weight matrix, the feature
            embeddings ``E`` included: after each update ``W -= learning_rate * weight_decay * W``.
            1.0 by default: +0.47 mean dev LAS over none on the six shared treebanks (gold tags,
            seed 0, ``bench/member_isbn.py``, ``bench/results/isbn_tuning.jsonl``); 3.0 annealed
            by 0.7 and 1.0 annealed by 0.7 were within 0.04 of it, dropout 0.2 +0.29, word
            dropout 1.0 +0.02, learning rate 1e-3 lower.
        anneal: ``weight_decay`` is multiplied by this after each epoch (Titov 2008's
            "annealing": large initial regularisation, reduced during training).
        dropout: dropout rate on the latent states the decisions read (training only).
        word_dropout: ``alpha`` of word dropout: a FORM (LEMMA) seen ``c`` times in training is
            read as unknown with probability ``alpha / (alpha + c)`` at each training step.
        max_epochs: passes over the training derivations; patience: with ``dev``, stop after
            this many epochs without a better dev LAS (the best epoch's weights are kept).
        random_state: seed of initialisation and batch order.

    Attributes:
        encoder_: vocabularies and the feature layout; labels_: the (lifted) labels, label id
        ``i`` is ``labels_[i]``; root_labels_, other_labels_: which labels may attach to ROOT /
        elsewhere; fallback_: label of a leftover word by UPOS id; root_label_: most frequent
        ROOT label; params_: the weights; n_epochs_: the kept epoch; history_: dev LAS by epoch.

    Examples:
        >>> train = [Sentence.from_words(["a", "b"], upos=["X", "Y"], heads=[2, 0],
        ...                              deprels=["dep", "root"])] * 4
        >>> parser = ISBNParser(max_epochs=20, hidden=8, min_count=1, learning_rate=0.01).fit(train)
        >>> parser.predict(train[:1])[0].heads.tolist()
        [-1, 2, 0]
    """

    name: ClassVar[str] = "isbn"
    parse_cost: ClassVar[float] = 15.0  # 11-16 times a transition member (bench/ensembles.py, Telugu, Tamil)
    description: ClassVar[str] = (
        "feed-forward ISBN (Titov 2008): arc-eager, latent states linked by 7 structural relations, beam"
    )
    n_epochs_: int

    def __init__(
        self,
        *,
        hidden: int = 200,
        beam_size: int = 8,
        k_labels: int = 5,
        min_count: int = 2,
        max_feats: int = 8,
        lookahead: bool = True,
        extended: bool = True,
        relations: bool = True,
        learning_rate: float = 2e-3,
        decay: float = 0.9,
        clip: float = 5.0,
        average: bool = True,
        batch_size: int = 8,
        l2: float = 1e-6,
        weight_decay: float = 1.0,
        anneal: float = 1.0,
        dropout: float = 0.0,
        word_dropout: float = 0.25,
        max_epochs: int = 30,
        patience: int = 4,
        random_state: int | None = 0,
    ) -> None:
        self.hidden = hidden
        self.beam_size = beam_size
        self.k_labels = k_labels
        self.min_count = min_count
        self.max_feats = max_feats
        self.lookahead = lookahead
        self.extended = extended
        self.relations = relations
        self.learning_rate = learning_rate
        self.decay = decay
        self.clip = clip
        self.average = average
        self.batch_size = batch_size
        self.l2 = l2
        self.weight_decay = weight_decay
        self.anneal = anneal
        self.dropout = dropout
        self.word_dropout = word_dropout
        self.max_epochs = max_epochs
        self.patience = patience
        self.random_state = random_state

    # --- training -------------------------------------------------------------------

    @one_blas_thread
    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Learn from the sentences with a single-rooted tree; ``dev`` picks the epoch."""
        kept = [s for s in sentences if s.has_tree and np.count_nonzero(s.heads == 0) == 1]
        trees = [(s, *system.projectivize(s.heads, s.deprels)) for s in kept]
        if not trees:
            raise ValueError("no training sentence has a single-rooted tree")
        self.labels_ = sorted({label for _, _, labels in trees for label in labels[1:]})
        index = {label: i for i, label in enumerate(self.labels_)}
        n_labels = len(self.labels_)
        self.root_labels_ = np.zeros(n_labels, dtype=bool)
        self.other_labels_ = np.zeros(n_labels, dtype=bool)
        for _, heads, labels in trees:
            ids = [index[label] for label in labels[1:]]
            np.logical_or.at(self.root_labels_, ids, heads[1:] == 0)
            np.logical_or.at(self.other_labels_, ids, heads[1:] != 0)
        self.encoder_ = ISBNEncoder.build(kept, n_labels, min_count=self.min_count,
                                          max_feats=self.max_feats, lookahead=self.lookahead,
                                          extended=self.extended)
        self._fallbacks(trees, index)
        table, offsets = self.encoder_.tokens(kept)
        derivations = [derive(heads, [0, *[index[x] for x in labels[1:]]]) for _, heads, labels in trees]
        if not self.relations:
            derivations = [replace(d, pointers=np.full_like(d.pointers, -1)) for d in derivations]
        step_ids = [feature_ids(self.encoder_, table, int(offset), d)
                    for d, offset in zip(derivations, offsets.tolist(), strict=True)]
        drops = drop_probabilities(self.encoder_, kept, step_ids, self.word_dropout)
        unknown = self.encoder_.word_templates()[2]
        rng = np.random.default_rng(self.random_state)
        params = init_params(self.encoder_.n_rows(), self.hidden, n_labels, rng)
        adam = Adam(params, learning_rate=self.learning_rate)
        dev_trees = [s for s in dev or () if s.has_tree]
        best = params
        self.history_: list[float] = []
        self.n_epochs_ = 0
        zero = self.encoder_.zero_row()
        averaged = {name: value.copy() for name, value in params.items()}
        weight_decay = self.weight_decay
        for epoch in range(1, self.max_epochs + 1):
            order = batch_order([len(d) for d in derivations], self.batch_size, rng)
            keep = 1.0 - 1.0 / len(order)
            for picked in order:
                rows = [word_dropped(step_ids[i], drops[i], unknown, rng) if self.word_dropout > 0.0
                        else step_ids[i] for i in picked]
                batch = make_batch([derivations[i] for i in picked], rows, zero, self.root_labels_,
                                   self.other_labels_)
                _, grads = loss_and_grads(params, batch, l2=self.l2, dropout=self.dropout, rng=rng)
                norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads.values())))
                if norm > self.clip:
                    grads = {name: g * (self.clip / norm) for name, g in grads.items()}
                adam.step(params, grads)
                if weight_decay > 0.0:
                    shrink = 1.0 - adam.learning_rate * weight_decay
                    for name in _DECAYED:
                        params[name] *= shrink
                if self.average:
                    for name, value in params.items():
                        averaged[name] *= keep
                        averaged[name] += (1.0 - keep) * value
            adam.learning_rate *= self.decay
            weight_decay *= self.anneal
            current = averaged if self.average else params
            if not dev_trees:
                self.n_epochs_ = epoch
                best = current
                continue
            self.params_ = current
            self.history_.append(evaluate(dev_trees, self._predict(dev_trees, beam=1)).las.f1)
            if self.history_[-1] >= max(self.history_):
                best, self.n_epochs_ = {name: value.copy() for name, value in current.items()}, epoch
            elif epoch - self.n_epochs_ >= self.patience:
                break
        self.params_ = best
        return self

    def _fallbacks(self, trees: list[tuple[Sentence, Heads, list[str]]], index: dict[str, int]) -> None:
        """Labels of the post-processing: most frequent ROOT label, most frequent non-ROOT
        label of each UPOS id (of all words for unknown tags)."""
        roots: Counter[int] = Counter()
        others: Counter[int] = Counter()
        by_tag: dict[int, Counter[int]] = {}
        for sentence, heads, labels in trees:
            tags = self.encoder_.tags.ids(sentence.upos[1:]).tolist()
            for word, tag in enumerate(tags, start=1):
                label = index[labels[word]]
                if heads[word] == 0:
                    roots[label] += 1
                else:
                    others[label] += 1
                    by_tag.setdefault(tag, Counter())[label] += 1
        self.root_label_ = roots.most_common(1)[0][0]
        default = others.most_common(1)[0][0] if others else self.root_label_
        self.fallback_ = np.full(len(self.encoder_.tags) + 2, default, dtype=np.int64)
        for tag, counts in by_tag.items():
            self.fallback_[tag] = counts.most_common(1)[0][0]

    # --- parsing --------------------------------------------------------------------

    def _model(self) -> Model:
        return Model(self.params_, self.encoder_, self.root_labels_, self.other_labels_,
                     getattr(self, "relations", True))

    def _tree(self, sentence: Sentence, state: State) -> tuple[Heads, list[str]]:
        """The de-projectivised tree of a final configuration, leftover words attached."""
        heads, labels = state.heads.copy(), state.labels.copy()
        heads[0] = -1
        tags = self.encoder_.tags.ids(sentence.upos)
        system.attach_leftovers(heads, labels, self.root_label_, self.fallback_, tags)
        return system.deprojectivize(heads, ["", *[self.labels_[x] for x in labels[1:].tolist()]])

    def _distribution(self, sentence: Sentence, beam: list[Hypothesis]) -> KBest:
        """The beam's distinct trees with probabilities normalised over them, best first."""
        return tree_distribution((*self._tree(sentence, h.state), h.log_prob) for h in beam)

    def _final_beams(self, sentences: Sequence[Sentence], *, beam: int,
                     restrictions: Sequence[Restrict] | None = None
                     ) -> Iterator[tuple[int, Sentence, list[Hypothesis]]]:
        """Each sentence's index, the sentence and its final beam (best first), chunk by chunk."""
        model = self._model()
        for chunk in length_chunks([len(s) for s in sentences], _CHUNK_TOKENS):
            picked = [sentences[i] for i in chunk]
            table, offsets = self.encoder_.tokens(picked)
            restrict = None
            if restrictions is not None:
                local = [restrictions[i] for i in chunk]

                def restrict(sentence: int, state: State, valid: NDArray[np.bool_],
                             local: list[Restrict] = local) -> tuple[NDArray[np.bool_], int, int]:
                    return local[sentence](sentence, state, valid)

            beams = beam_search(model, [len(s) for s in picked], table, offsets, beam=beam,
                                k_labels=self.k_labels, restrict=restrict)
            yield from zip(chunk, picked, beams, strict=True)

    def _predict(self, sentences: Sequence[Sentence], *, beam: int,
                 restrictions: Sequence[Restrict] | None = None) -> list[Parse]:
        parses: list[Parse] = [Parse(np.zeros(0, dtype=np.intp), [])] * len(sentences)
        for i, sentence, final in self._final_beams(sentences, beam=beam, restrictions=restrictions):
            parses[i] = list_parse(self._distribution(sentence, final))
        return parses

    @one_blas_thread
    def kbest_derivations(self, sentences: Sequence[Sentence], k: int) -> list[list[Derivations]]:
        """Each sentence's k-best list (beam ``k``; with ``k = beam_size`` the trees and order of
        :meth:`predict`'s ``extras["kbest"]``), each tree with the beam's derivations of it:
        ``(heads, deprels, probability, [(codes (T,), log P), ...])``, the codes those of
        :func:`parsing.isbn.system.decision_codes` in lifted label ids (a tree is the
        de-projectivised one; several derivations when the beam reached it in several ways).
        For reranking with features derived from the network (:mod:`parsing.rerank`).

        Raises:
            ValueError: ``k < 1``.
        """
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        lists: list[list[Derivations]] = [[] for _ in sentences]
        n_labels = len(self.labels_)
        for i, sentence, final in self._final_beams(sentences, beam=k):
            lists[i] = derivation_lists(
                (*self._tree(sentence, hypothesis.state),
                 system.decision_codes(*hypothesis.decisions(), n_labels), hypothesis.log_prob)
                for hypothesis in final)
        return lists

    @one_blas_thread
    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """The most probable tree of each sentence under beam search (``beam_size``), with
        ``extras["kbest"] = [(heads, deprels, probability), ...]`` (the final beam's trees,
        best first) and ``arc_scores[d]`` the k-best posterior of ``d``'s arc."""
        return self._predict(sentences, beam=self.beam_size)

    @one_blas_thread
    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Parse keeping the forced arcs and labels.

        Sentences whose free parse already has every forced arc keep it. The others are parsed
        again with a beam that only extends hypotheses by arc-eager moves of zero dynamic-oracle
        cost with respect to the forced arcs (:class:`~parsing.transition.constrained.ConstraintGuide`;
        arc-eager is arc-decomposable) and by the forced label where one is given. Forced arcs
        the projective system cannot build are repaired in by
        :func:`~parsing.constraints.finish_parse`, which also writes the forced labels.
        """
        validate_all([len(s) for s in sentences], constraints)
        free = self._predict(sentences, beam=self.beam_size) if free is None else free
        redo = [i for i, (parse, forced) in enumerate(zip(free, constraints, strict=True))
                if not forced.satisfied_by(parse.heads)]
        parses = list(free)
        if redo:
            restrictions = [self._restriction(constraints[i], len(sentences[i])) for i in redo]
            redone = self._predict([sentences[i] for i in redo], beam=self.beam_size,
                                   restrictions=restrictions)
            for i, parse in zip(redo, redone, strict=True):
                parses[i] = parse
        return [finish_parse(parse, forced) for parse, forced in zip(parses, constraints, strict=True)]

    def _restriction(self, forced: Constraints, n: int) -> Restrict:
        """The beam pruning of one sentence's constraints (see :meth:`predict_constrained`)."""
        actions = np.array([int(move) for move in system.MOVES], dtype=np.intp)
        guide = ConstraintGuide.build(forced, n, {}, actions, np.full(len(actions), -1, dtype=np.intp),
                                      dynamic=True)
        index = {label: i for i, label in enumerate(self.labels_)}
        forced_labels = np.full(n + 1, -1, dtype=np.int64)
        for dep, label in forced.labels.items():
            forced_labels[dep] = index.get(label, -1)

        def restrict(_: int, state: State, valid: NDArray[np.bool_]) -> tuple[NDArray[np.bool_], int, int]:
            allowed = guide.allowed(system.SYSTEM, state, valid)
            left = forced_labels[state.stack[-1]] if allowed[system.LEFT] else -1
            right = forced_labels[state.b(0)] if allowed[system.RIGHT] else -1
            return allowed, int(left), int(right)

        return restrict
