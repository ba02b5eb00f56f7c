"""Greedy transition-based parsers (MaltParser-style ensemble members).

:class:`TransitionParser` drives one of three systems (:mod:`parsing.transition.systems`)
with a multiclass averaged perceptron over labelled actions. Features are the templates of
:mod:`parsing.transition.templates`, hashed with :func:`~parsing.features.hash_columns`
into ``2**n_bits`` buckets; only the buckets met in the oracle's configurations on the
training data get a weight row (a dense lookup table maps bucket → row), which keeps the
weight matrix proportional to the features actually seen.

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

from collections import Counter
from collections.abc import Sequence
from functools import partialmethod
from typing import ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.constraints import Constraints, finish_parse, validate_all
from parsing.features import Vocabulary
from parsing.learn import AveragedPerceptron
from parsing.transition.arc_swap import ArcSwap, SwapGold
from parsing.transition.constrained import ConstraintGuide
from parsing.transition.probabilities import action_probabilities, action_probability
from parsing.transition.pseudo_projective import deprojectivize, projectivize
from parsing.transition.state import ARC_ACTIONS, NONE, Action, State, TransitionSystem
from parsing.transition.systems import get_system
from parsing.transition.templates import (
    ABSENT,
    StateBank,
    bank_atoms,
    features,
    hash_atoms,
    stack_buffer_tokens,
)
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
from parsing.types import Parse, Sentence

_FIXED_CLASSES = (Action.SHIFT, Action.REDUCE, Action.SWAP)

BATCH_SIZE = 64
"""Sentences parsed together in lockstep by :meth:`TransitionParser.predict`."""


class TransitionParser(BaseParser):
    """A greedy labelled transition-based parser trained with an averaged perceptron.

    Args:
        system: ``"arc-eager"``, ``"arc-standard-swap"`` or ``"arc-hybrid"``.
        right_to_left: parse the reversed sentence (and map the heads back), a cheap way to
            get a different model from the same system (MaltBlender).
        epochs: passes over the training data (at most, when ``dev`` is given).
        beam_size: must be 1 (greedy); beam search is not implemented.
        exploration: probability of following the model's own prediction from the second
            epoch on (dynamic-oracle systems only; 0 follows the oracle always).
        n_bits: feature hashing buckets ``2**n_bits``.
        min_feature_count: buckets seen fewer times in the oracle configurations get no weights.
        warm_start: when fitting an already fitted parser, continue from its weights (module
            docstring, "Warm start") instead of starting over.
        warm_epochs: epochs of a warm fit (dev, if given, picks among them when more than one).
            One by default: in ``bench/warm_rounds.py`` (Wolof, Welsh; 1000 + 50 sentences) a
            second epoch doubled the warm time for a few hundredths of ensemble LAS.
        random_state: seeds the training order and the exploration.

    Attributes (after fit):
        weights_: averaged weights, ``(n_rows, n_classes)`` float32; row 0 stays zero.
        rows_: bucket → weight row (0: no row), shape ``(2**n_bits,)``.
        labels_: the label vocabulary (pseudo-projective ``r↑h`` labels included).
        vocabularies_: form, UPOS, lemma, FEATS vocabularies.
        root_label_, fallback_label_: labels used by the single-root post-processing.
        raw_weights_, n_steps_: the perceptron's raw weights (rows as ``weights_``) and step
            counter at the kept epoch, from which a warm fit resumes the average.
        epochs_: the epoch whose weights were kept (warm epochs added); history_: dev LAS per
            epoch.
    """

    name: ClassVar[str] = "transition"
    description: ClassVar[str] = "greedy transition-based parser (averaged perceptron)"
    warm_start: bool = False  # class defaults: parsers saved before these parameters existed
    warm_epochs: int = 1
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
        n_bits: int = 22,
        min_feature_count: int = 1,
        warm_start: bool = False,
        warm_epochs: int = 1,
        random_state: int | None = 0,
    ) -> None:
        self.system = system
        self.right_to_left = right_to_left
        self.epochs = epochs
        self.beam_size = beam_size
        self.exploration = exploration
        self.n_bits = n_bits
        self.min_feature_count = min_feature_count
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.random_state = random_state

    @property
    def member_name(self) -> str:
        """The ensemble member's name: the class name, ``-rtl`` appended when right-to-left."""
        base = self.name if self.name != "transition" else self.system
        return f"{base}-rtl" if self.right_to_left else base

    # ------------------------------------------------------------------ encoding

    def _system(self) -> TransitionSystem:
        return get_system(self.system)

    def _projective(self) -> bool:
        return not isinstance(self._system(), ArcSwap)

    def _encode(self, sentence: Sentence, *, gold: bool) -> Encoded:
        forms, upos, lemmas, feats = self.vocabularies_
        n = len(sentence)
        atoms = np.full((4, n + 2), ABSENT, dtype=np.int64)
        atoms[0, : n + 1] = forms.ids(sentence.forms)
        atoms[1, : n + 1] = upos.ids(sentence.upos)
        atoms[2, : n + 1] = lemmas.ids(sentence.lemmas)
        atoms[3, : n + 1] = feats.ids(sentence.feats)
        if self.right_to_left:
            atoms[:, 1 : n + 1] = atoms[:, n:0:-1]
        if not gold:
            return Encoded(atoms)
        heads, deprels = self._training_tree(sentence)
        label_ids = self.labels_.ids(deprels) - 1
        return Encoded(atoms, heads, label_ids.astype(np.intp))

    def _training_tree(self, sentence: Sentence) -> tuple[NDArray[np.intp], list[str]]:
        heads = np.asarray(sentence.heads, dtype=np.intp)
        deprels = list(sentence.deprels)
        if self.right_to_left:
            heads = reverse_heads(heads)
            deprels = ["", *deprels[:0:-1]]
        if self._projective():
            heads, deprels = projectivize(heads, deprels)
        return heads, deprels

    # ------------------------------------------------------------------ classes

    def _class_of(self, action: Action, label: int) -> int:
        if action == Action.LEFT_ARC:
            return 3 + label
        if action == Action.RIGHT_ARC:
            return 3 + self.n_labels_ + label
        return int(action)

    def _valid_classes(self, system: TransitionSystem, state: State) -> NDArray[np.bool_]:
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

    def _apply_class(self, system: TransitionSystem, state: State, cls: int) -> None:
        action = Action(int(self.class_actions_[cls]))
        label = cls - 3 - (self.n_labels_ if action == Action.RIGHT_ARC else 0)
        system.apply(state, action, label if action in (Action.LEFT_ARC, Action.RIGHT_ARC) else NONE)

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
        wanted = build_rows(system, encoded, swap_golds, self.n_bits, self.min_feature_count)
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
        self.rows_ = renumber_rows(self.rows_, used)
        self.weights_ = np.ascontiguousarray(trained.averaged[used])
        self.raw_weights_ = np.ascontiguousarray(trained.raw[used])
        self.n_steps_ = trained.step
        self.epochs_, self.history_ = previous_epochs + trained.epoch, trained.history
        return self

    def _resumed_perceptron(self, wanted: NDArray[np.int32], old_n_labels: int) -> AveragedPerceptron:
        """The fitted perceptron, grown for a warm start: new rows for the buckets of
        ``wanted`` without one (:func:`~parsing.transition.training.grow_rows`), new LEFT and
        RIGHT columns for labels added since (``old_n_labels`` were known); sets ``rows_``.
        A parser saved without ``raw_weights_`` starts a new average from its weights."""
        averaged = self.weights_
        raw = getattr(self, "raw_weights_", None)
        step = self.n_steps_ if raw is not None else 1
        self.rows_, added = grow_rows(self.rows_, wanted)

        def grown(old: NDArray[np.float32]) -> NDArray[np.float64]:
            wide = widen_label_columns(old.astype(np.float64), fixed=len(_FIXED_CLASSES),
                                       old_n_labels=old_n_labels, n_labels=self.n_labels_)
            return np.vstack([wide, np.zeros((added, wide.shape[1]))])

        return AveragedPerceptron.resume(grown(averaged if raw is None else raw), grown(averaged), step)

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

    def predict_constrained(self, sentences: Sequence[Sentence],
                            constraints: Sequence[Constraints]) -> list[Parse]:
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
        free = self.predict(sentences)
        parses = []
        for sentence, parse, forced in zip(sentences, free, constraints, strict=True):
            if not forced.satisfied_by(parse.heads):
                guided = self._parse(sentence, forced)
                parse = guided if forced.satisfied_by(guided.heads) else parse
            parses.append(finish_parse(parse, forced))
        return parses

    def _guide(self, constraints: Constraints, n: int) -> ConstraintGuide:
        internal = constraints.reversed(n) if self.right_to_left else constraints
        labels = np.array([label for _, label in self._class_moves()], dtype=np.intp)
        return ConstraintGuide.build(internal, n, self.labels_.index, self.class_actions_, labels,
                                     dynamic=self._system().dynamic)

    def _parse(self, sentence: Sentence, constraints: Constraints | None = None) -> Parse:
        """One sentence, one state at a time (the reference for :meth:`_parse_batch`); with
        ``constraints``, only moves that keep the forced arcs buildable (as far as possible)."""
        system = self._system()
        n = len(sentence)
        atoms = self._encode(sentence, gold=False).atoms
        state = system.initial(n)
        confidence = np.full(n + 1, np.nan)
        weights, rows_of, n_bits = self.weights_, self.rows_, self.n_bits
        guide = self._guide(constraints, n) if constraints is not None else None
        while not system.is_terminal(state):
            scores = weights[rows_of[features(state, atoms, n_bits)]].sum(axis=0)
            valid = self._valid_classes(system, state)
            if guide is not None:
                valid = guide.allowed(system, state, valid)
            cls = int(np.argmax(np.where(valid, scores, -np.inf)))
            if cls >= 3:
                dependent = system.dependent(state, Action(int(self.class_actions_[cls])))
                confidence[dependent] = action_probability(scores, valid, cls)
            self._apply_class(system, state, cls)
        return self._finish(state, confidence)

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
        moves = self._class_moves()
        active = [number for number, state in enumerate(states) if not system.is_terminal(state)]
        while active:
            stepping = [states[number] for number in active]
            tokens = np.array([stack_buffer_tokens(state) for state in stepping], dtype=np.intp)
            scores = self._scores(bank_atoms(bank, np.array(active, dtype=np.intp), tokens))
            masks = [self._valid_classes(system, state) for state in stepping]
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
        rows = self.rows_[hash_atoms(atom_vectors, self.n_bits)]  # (m, n_templates)
        scores: NDArray[np.float32] = self.weights_[rows].sum(axis=1)
        return scores

    def _class_moves(self) -> list[tuple[Action, int]]:
        """Each labelled class as the action and label id :meth:`_apply_class` applies."""
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
