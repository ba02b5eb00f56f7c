"""Greedy prediction of :class:`~parsing.transition.parser.TransitionParser` (a mixin), and the
labelled classes its perceptron scores.

Output: always a tree with exactly one word attached to ROOT. When the systems leave
several candidate roots (words attached to ROOT by a transition, or left without a head
on the stack), the most confident ROOT attachment is kept (the leftmost candidate if none
was attached by a transition) and every other candidate becomes its dependent with the
training set's most frequent label for dependents of the root word.

``arc_scores[d]`` is a confidence proxy: the softmax probability, among the actions valid
at that moment, of the labelled arc action that attached ``d`` (0 for attachments made by
the root post-processing).

Prediction parses up to :data:`BATCH_SIZE` sentences of similar length in lockstep: at
each step the atom vectors of all unfinished states are built, hashed and scored with a
handful of numpy calls, then each state takes its best valid action. The result is the
same, bit for bit, as parsing each sentence alone (``_parse``), whatever the batch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from parsing.clusters.lexicon import ClusterLexicon
from parsing.constraints import Constraints, finish_parse, validate_all
from parsing.features import Vocabulary
from parsing.transition.arc_swap import ArcSwap
from parsing.transition.compact import BucketRows, SparseRows, sum_rows
from parsing.transition.constrained import ConstraintGuide
from parsing.transition.probabilities import action_probabilities, action_probability
from parsing.transition.pseudo_projective import deprojectivize
from parsing.transition.state import ARC_ACTIONS, NONE, Action, State, TransitionSystem
from parsing.transition.systems import get_system
from parsing.transition.templates import (
    BASE,
    WITH_CLUSTERS,
    StateBank,
    TemplateSet,
    bank_atoms,
    features,
    hash_atoms,
    stack_buffer_tokens,
)
from parsing.transition.training import Encoded
from parsing.trees import reverse_heads
from parsing.types import Parse, Sentence

BATCH_SIZE = 64
"""Sentences parsed together in lockstep by :meth:`GreedyDecoding.predict`."""

TRACED_SENTENCES = 32
"""Sentences whose last guided parse a fitted transition parser keeps (:class:`GuidedTrace`)."""


@dataclass(frozen=True, slots=True)
class GuidedTrace:
    """One guided parse of a sentence: its constraints, the class chosen at each step and the
    scores it was chosen from (``len(classes)`` arrays of shape ``(n_classes,)``).

    The editor re-parses a sentence after each edit under one more forced arc. Replaying the
    previous parse, a step whose chosen class is still the best allowed one under the new
    constraints leads to the same configuration as before, so the next step's scores are the
    stored ones; from the first step that chooses otherwise, the configurations differ and
    are scored afresh. Every choice is still made over the new constraints' mask, so the
    replayed parse is the one parsing afresh gives, bit for bit: only the feature hashing and
    scoring of the shared prefix are saved.
    """

    constraints: Constraints
    classes: list[int]
    scores: list[NDArray[np.float32]]


class GreedyDecoding:
    """Labelled classes and greedy parsing for a fitted transition parser.

    Classes: ``0..2`` are SHIFT, REDUCE and SWAP; ``3 + label`` LEFT-ARC and
    ``3 + n_labels_ + label`` RIGHT-ARC with that label id (``class_actions_[c]`` is the
    action of class ``c``).
    """

    system: str
    right_to_left: bool
    n_bits: int
    weights_: NDArray[np.float32] | SparseRows
    rows_: NDArray[np.int32] | BucketRows
    class_actions_: NDArray[np.intp]
    labels_: Vocabulary
    n_labels_: int
    root_label_: str
    fallback_label_: str
    name: ClassVar[str]
    lexicon_: ClusterLexicon | None = None  # class default: parsers without word clusters

    def _encode(self, sentence: Sentence, *, gold: bool) -> Encoded:
        raise NotImplementedError

    def templates(self) -> TemplateSet:
        """The feature templates of this parser's atom layout (with the cluster templates when
        it has a lexicon)."""
        return BASE if self.lexicon_ is None else WITH_CLUSTERS


    def _system(self) -> TransitionSystem:
        return get_system(self.system)

    def _projective(self) -> bool:
        return not isinstance(self._system(), ArcSwap)

    # ------------------------------------------------------------------ classes

    def class_of(self, action: Action, label: int) -> int:
        if action == Action.LEFT_ARC:
            return 3 + label
        if action == Action.RIGHT_ARC:
            return 3 + self.n_labels_ + label
        return int(action)

    def valid_classes(self, system: TransitionSystem, state: State) -> NDArray[np.bool_]:
        """Mask over the labelled classes (cached per combination of valid actions)."""
        key = tuple(move.is_valid(state) for move in system.moves.values())
        mask = self._masks.get(key)
        if mask is None:
            valid = np.zeros(len(Action), dtype=np.bool_)
            for action, allowed in zip(system.moves, key, strict=True):
                valid[action] = allowed
            mask = self._masks[key] = valid[self.class_actions_]
        return mask

    @property
    def _masks(self) -> dict[tuple[bool, ...], NDArray[np.bool_]]:
        cache: dict[tuple[bool, ...], NDArray[np.bool_]] | None = self.__dict__.get("_mask_cache")
        if cache is None:
            cache = self.__dict__["_mask_cache"] = {}
        return cache

    def apply_class(self, system: TransitionSystem, state: State, cls: int) -> None:
        action = Action(int(self.class_actions_[cls]))
        label = cls - 3 - (self.n_labels_ if action == Action.RIGHT_ARC else 0)
        system.apply(state, action, label if action in (Action.LEFT_ARC, Action.RIGHT_ARC) else NONE)

    # ------------------------------------------------------------------ parsing

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse ``sentences`` greedily (gold heads are ignored); see the module docstring.

        Sentences of similar length are parsed together in lockstep (:meth:`_parse_batch`);
        each parse is the one :meth:`_parse` gives, whatever the other sentences.
        """
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        parses: list[Parse | None] = [None] * len(sentences)
        for begin in range(0, len(order), BATCH_SIZE):
            chunk = order[begin : begin + BATCH_SIZE]
            for index, parse in zip(chunk, self._parse_batch([sentences[i] for i in chunk]), strict=True):
                parses[index] = parse
        return [parse for parse in parses if parse is not None]

    def _predict_one_by_one(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """The reference: :meth:`_parse` on each sentence alone (``predict`` gives the same)."""
        return [self._parse(sentence) for sentence in sentences]

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Parse keeping the forced arcs and labels (one :class:`Constraints` per sentence).

        A sentence whose greedy parse (:meth:`predict`) already has every forced arc keeps
        it (forced labels written in). Otherwise it is parsed again greedily, choosing at each
        step among the moves that keep every forced arc buildable
        (:class:`~parsing.transition.constrained.ConstraintGuide`: the dynamic oracle's
        arc-decomposable cost for arc-eager and arc-hybrid, a feasibility check for
        arc-standard-swap), in the member's own positions (reversed for right-to-left).
        Pseudo-projective members decode a projective tree while the constraints are on the
        original one, and the single-root post-processing may move a forced ROOT child: the
        deprojectivised, post-processed tree is checked. When the guided parse misses a forced
        arc (it left the reachable region: a non-projective forced arc for the projective
        systems, a stranded one for swap) it is dropped, and the forced arcs are repaired into
        the unconstrained parse instead by :func:`~parsing.constraints.finish_parse` (the tree
        with the forced arcs that keeps most of the member's arcs, weighted by its
        confidence): a derailed greedy parse is worse than the member's own tree.
        """
        validate_all([len(s) for s in sentences], constraints)
        free = self.predict(sentences) if free is None else free
        parses = []
        for sentence, parse, forced in zip(sentences, free, constraints, strict=True):
            if not forced.satisfied_by(parse.heads):
                guided = self._parse(sentence, forced)
                parse = guided if forced.satisfied_by(guided.heads) else parse
            parses.append(finish_parse(parse, forced))
        return parses

    def _guide(self, constraints: Constraints, n: int) -> ConstraintGuide:
        internal = constraints.reversed(n) if self.right_to_left else constraints
        labels = np.array([label for _, label in self.class_moves()], dtype=np.intp)
        return ConstraintGuide.build(internal, n, self.labels_.index, self.class_actions_, labels,
                                     dynamic=self._system().dynamic)

    def _parse(self, sentence: Sentence, constraints: Constraints | None = None) -> Parse:
        """One sentence, one state at a time (the reference for :meth:`_parse_batch`); with
        ``constraints``, only moves that keep the forced arcs buildable (as far as possible),
        replaying the sentence's last guided parse where it still holds (:class:`GuidedTrace`)."""
        system = self._system()
        n = len(sentence)
        atoms = self._encode(sentence, gold=False).atoms
        state = system.initial(n)
        confidence = np.full(n + 1, np.nan)
        weights, rows_of, n_bits, templates = self.weights_, self.rows_, self.n_bits, self.templates()
        guide = self._guide(constraints, n) if constraints is not None else None
        key = atoms.tobytes() + np.asarray(atoms.shape, dtype=np.int64).tobytes()
        replay = self._traced(key, constraints) if constraints is not None else None
        classes: list[int] = []
        scored: list[NDArray[np.float32]] = []
        while not system.is_terminal(state):
            step = len(classes)
            if replay is not None and step < len(replay.classes):
                scores = replay.scores[step]
            else:
                scores = sum_rows(weights, rows_of[features(state, atoms, n_bits, templates)][None])[0]
            valid = self.valid_classes(system, state)
            if guide is not None:
                valid = guide.allowed(system, state, valid)
            cls = int(np.argmax(np.where(valid, scores, -np.inf)))
            if replay is not None and (step >= len(replay.classes) or cls != replay.classes[step]):
                replay = None  # another configuration from here on: scored afresh
            classes.append(cls)
            scored.append(scores)
            if cls >= 3:
                dependent = system.dependent(state, Action(int(self.class_actions_[cls])))
                confidence[dependent] = action_probability(scores, valid, cls)
            self.apply_class(system, state, cls)
        if constraints is not None:
            self._trace(key, GuidedTrace(constraints, classes, scored))
        return self._finish(state, confidence)

    def _traces(self) -> OrderedDict[bytes, GuidedTrace]:
        """The kept guided parses by sentence (its encoded atoms), for :attr:`weights_` only: a
        fit or a load starts afresh (never saved; at most :data:`TRACED_SENTENCES`)."""
        cache = self.__dict__.get("_trace_cache")
        if cache is None or cache[0] is not self.weights_:
            cache = self.__dict__["_trace_cache"] = (self.weights_, OrderedDict())
        traces: OrderedDict[bytes, GuidedTrace] = cache[1]
        return traces

    def _traced(self, key: bytes, constraints: Constraints) -> GuidedTrace | None:
        """The kept guided parse of sentence ``key`` when its constraints are among ``constraints``."""
        trace = self._traces().get(key)
        return trace if trace is not None and trace.constraints.within(constraints) else None

    def _trace(self, key: bytes, trace: GuidedTrace) -> None:
        traces = self._traces()
        traces[key] = trace
        traces.move_to_end(key)
        while len(traces) > TRACED_SENTENCES:
            traces.popitem(last=False)

    def _parse_batch(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Parse ``sentences`` in lockstep: one scoring call per step for all unfinished states.

        Every row of the batched computations depends on its own state only, and each
        state's scores, choice and probability equal :meth:`_parse`'s bit for bit.
        """
        system = self._system()
        bank = StateBank.build([self._encode(sentence, gold=False).atoms for sentence in sentences])
        states = [system.initial(len(sentence)) for sentence in sentences]
        for number, state in enumerate(states):
            bank.bind(number, state)
        confidence = [np.full(len(sentence) + 1, np.nan) for sentence in sentences]
        moves = self.class_moves()
        active = [number for number, state in enumerate(states) if not system.is_terminal(state)]
        while active:
            stepping = [states[number] for number in active]
            tokens = np.array([stack_buffer_tokens(state) for state in stepping], dtype=np.intp)
            scores = self._scores(bank_atoms(bank, np.array(active, dtype=np.intp), tokens))
            masks = [self.valid_classes(system, state) for state in stepping]
            best = np.where(np.stack(masks), scores, -np.inf).argmax(axis=1)
            probability = action_probabilities(scores, masks, best).tolist()
            for row, (number, state, cls) in enumerate(zip(active, stepping, best.tolist(), strict=True)):
                action, label = moves[cls]
                if action in ARC_ACTIONS:
                    confidence[number][system.dependent(state, action)] = probability[row]
                system.apply(state, action, label)
            active = [number for number in active if not system.is_terminal(states[number])]
        return [self._finish(state, arcs) for state, arcs in zip(states, confidence, strict=True)]

    def _scores(self, atom_vectors: NDArray[np.int64]) -> NDArray[np.float32]:
        """Class scores ``(m, n_classes)`` of states given by their atom vectors ``(m, n_atoms)``:
        the weight rows of their ``n_templates`` hashed features, summed in template order."""
        rows = self.rows_[hash_atoms(atom_vectors, self.n_bits, self.templates())]  # (m, n_templates)
        return sum_rows(self.weights_, rows)

    def class_moves(self) -> list[tuple[Action, int]]:
        """Each labelled class as the action and label id :meth:`apply_class` applies."""
        return [
            (Action(int(action)), cls - 3 - (self.n_labels_ if action == Action.RIGHT_ARC else 0))
            if action in ARC_ACTIONS
            else (Action(int(action)), NONE)
            for cls, action in enumerate(self.class_actions_.tolist())
        ]

    def _finish(self, state: State, confidence: NDArray[np.float64]) -> Parse:
        """The parse of a terminal state: single root, deprojectivised, in sentence order."""
        heads, labels = self._single_root(state, confidence)
        if self._projective():
            heads, labels = deprojectivize(heads, labels)
        if self.right_to_left:
            heads = reverse_heads(heads)
            labels = ["", *labels[:0:-1]]
            confidence = np.concatenate(([np.nan], confidence[:0:-1]))
        confidence[0] = np.nan
        return Parse(heads=heads, deprels=labels, arc_scores=confidence)

    def _single_root(
        self, state: State, confidence: NDArray[np.float64]
    ) -> tuple[NDArray[np.intp], list[str]]:
        """Heads and label strings with exactly one word under ROOT (module docstring)."""
        heads = state.heads.copy()
        names = list(self.labels_.index)
        labels = [""] + [names[i] if i >= 0 else "" for i in state.labels[1:]]
        attached = [d for d in range(1, len(heads)) if heads[d] == 0]
        candidates = attached + [d for d in range(1, len(heads)) if heads[d] == NONE]
        main = max(attached, key=lambda d: (confidence[d], -d)) if attached else min(candidates)
        if heads[main] != 0:
            confidence[main] = 0.0
        heads[main], labels[main] = 0, self.root_label_
        for d in candidates:
            if d != main:
                heads[d], labels[d], confidence[d] = main, self.fallback_label_, 0.0
        return heads, labels
