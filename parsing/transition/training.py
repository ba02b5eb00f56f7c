"""Training a :class:`~parsing.transition.parser.TransitionParser`: rows, epochs, updates.

The parser encodes sentences and defines its labelled classes; this module walks the
oracle's configurations to decide which hashed feature buckets get a weight row
(:func:`build_rows`), then runs the averaged-perceptron epochs with error exploration and
dev-based early stopping (:func:`train_epochs`). The parser module's docstring describes
the procedure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from parsing.learn import AveragedPerceptron
from parsing.transition.arc_swap import SwapGold, static_oracle
from parsing.transition.compact import BucketRows, SparseRows
from parsing.transition.state import NONE, Action, State, TransitionSystem
from parsing.transition.templates import BASE, TemplateSet, config_atoms, features, hash_atoms
from parsing.types import Parse, Sentence


class TransitionParser(Protocol):
    """What training needs of a parser (:class:`parsing.transition.parser.TransitionParser`
    has it); a protocol, so this module does not import the parser that imports it."""

    epochs: int
    exploration: float
    filled_weight: float
    n_bits: int
    weights_: NDArray[np.float32] | SparseRows
    rows_: NDArray[np.int32] | BucketRows
    class_actions_: NDArray[np.intp]

    def class_of(self, action: Action, label: int) -> int: ...

    def templates(self) -> TemplateSet: ...

    def valid_classes(self, system: TransitionSystem, state: State) -> NDArray[np.bool_]: ...

    def apply_class(self, system: TransitionSystem, state: State, cls: int) -> None: ...

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]: ...

PATIENCE = 3
"""Epochs without a better dev score before training stops."""


@dataclass(slots=True)
class Encoded:
    """A sentence in parse order (reversed for right-to-left parsers) as ids.

    ``human_heads``: for a partial tree, ``heads`` where a person set or confirmed the arc and
    -1 where the parsers filled it in, shape ``(n+1,)`` (``None``: every arc is human).
    """

    atoms: NDArray[np.int64]
    heads: NDArray[np.intp] | None = None
    labels: NDArray[np.intp] | None = None
    human_heads: NDArray[np.intp] | None = None


def gold_actions(
    system: TransitionSystem, state: State, heads: NDArray[np.intp], swap_gold: SwapGold | None
) -> list[Action]:
    """The zero-cost actions: the static lazy-swap oracle's, else the system's dynamic oracle's."""
    if swap_gold is not None:
        return [static_oracle(state, swap_gold)]
    return system.gold_actions(state, heads)


def build_rows(
    system: TransitionSystem,
    encoded: Sequence[Encoded],
    swap_golds: Sequence[SwapGold | None],
    n_bits: int,
    min_feature_count: int,
    templates: TemplateSet = BASE,
) -> NDArray[np.int32]:
    """Bucket → weight row (0: none) for every bucket met ``min_feature_count`` times or more
    along the oracle's path (hashed in one batch per sentence; ``templates`` must match the
    sentences' atom layout)."""
    seen: list[NDArray[np.int64]] = []
    for sentence, swap_gold in zip(encoded, swap_golds, strict=True):
        assert sentence.heads is not None
        state = system.initial(len(sentence.heads) - 1)
        vectors = []
        while not system.is_terminal(state):
            vectors.append(config_atoms(state, sentence.atoms))
            action = gold_actions(system, state, sentence.heads, swap_gold)[0]
            dep = system.dependent(state, action)
            system.apply(state, action, NONE if dep < 0 else 0)
        if vectors:
            seen.append(hash_atoms(np.stack(vectors), n_bits, templates).ravel())
    buckets, counts = np.unique(np.concatenate(seen), return_counts=True)
    kept = buckets[counts >= min_feature_count]
    rows = np.zeros(1 << n_bits, dtype=np.int32)
    rows[kept] = np.arange(1, len(kept) + 1, dtype=np.int32)
    return rows


def drop_zero_rows(rows: NDArray[np.int32], weights: NDArray[np.float32]
                   ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
    """The same model without weight rows that stayed all zero (their buckets map to row 0).

    Scores are unchanged (a zero row adds nothing), so parses are identical; models shrink by
    the share of buckets never updated (about half on UD treebanks).

    Args:
        rows: bucket -> row, shape ``(2**n_bits,)``, 0 meaning no row.
        weights: shape ``(n_rows, n_classes)``, row 0 all zero.

    Examples:
        >>> rows = np.array([0, 1, 2, 3], dtype=np.int32)
        >>> weights = np.array([[0, 0], [1, 0], [0, 0], [0, 2]], dtype=np.float32)
        >>> new_rows, new_weights = drop_zero_rows(rows, weights)
        >>> new_rows.tolist(), new_weights.tolist()
        ([0, 1, 0, 2], [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    """
    used = used_rows(weights)
    return renumber_rows(rows, used), np.ascontiguousarray(weights[used])


def used_rows(weights: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Rows of ``weights`` with a non-zero entry, and row 0: shape ``(n_rows,)``."""
    used: NDArray[np.bool_] = np.any(weights != 0, axis=1)
    used[0] = True
    return used


def renumber_rows(rows: NDArray[np.int32], used: NDArray[np.bool_]) -> NDArray[np.int32]:
    """The bucket -> row map once only the ``used`` weight rows are kept (others map to 0)."""
    renumber = np.cumsum(used, dtype=np.int64) - 1
    renumber[~used] = 0
    return renumber[rows].astype(np.int32)


def grow_rows(rows: NDArray[np.int32], wanted: NDArray[np.int32]) -> tuple[NDArray[np.int32], int]:
    """Give a new weight row, after the existing ones, to every bucket ``wanted`` (a map of
    :func:`build_rows`) has and ``rows`` lacks; existing buckets keep their rows.

    Returns:
        The new bucket -> row map and how many rows were added.

    Examples:
        >>> rows, added = grow_rows(np.array([0, 1, 0, 0], np.int32), np.array([1, 0, 2, 0], np.int32))
        >>> rows.tolist(), added
        ([2, 1, 3, 0], 2)
    """
    new = (wanted > 0) & (rows == 0)
    grown = rows.copy()
    start = int(rows.max()) + 1
    grown[new] = np.arange(start, start + int(new.sum()), dtype=np.int32)
    return grown, int(new.sum())


def widen_label_columns(
    weights: NDArray[np.floating], *, fixed: int, old_n_labels: int, n_labels: int
) -> NDArray[np.floating]:
    """Weights over labelled actions laid out as ``fixed`` unlabelled actions, then LEFT-ARC
    with each label, then RIGHT-ARC with each label, widened from ``old_n_labels`` to
    ``n_labels`` labels (new labels numbered last): each old column moves with its weights, new
    columns are zero. The last axis is the action's.

    Examples:
        >>> weights = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])  # SHIFT, L a, L b, R a, R b
        >>> widen_label_columns(weights, fixed=1, old_n_labels=2, n_labels=3).tolist()
        [[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0]]
    """
    old = np.arange(weights.shape[-1])
    moved = np.where(old >= fixed + old_n_labels, old + n_labels - old_n_labels, old)
    widened = np.zeros((*weights.shape[:-1], fixed + 2 * n_labels), dtype=weights.dtype)
    widened[..., moved] = weights
    return widened


@dataclass(frozen=True, slots=True)
class Trained:
    """What :func:`train_epochs` keeps: the chosen epoch's averaged weights, the perceptron's
    raw weights and step counter at that epoch (float32 like the average; a warm start resumes
    from them), the epoch's number (1-based) and the dev LAS after each epoch."""

    averaged: NDArray[np.float32]
    raw: NDArray[np.float32]
    step: int
    epoch: int
    history: list[float]


def train_epochs(
    parser: TransitionParser,
    system: TransitionSystem,
    encoded: Sequence[Encoded],
    swap_golds: Sequence[SwapGold | None],
    dev: Sequence[Sentence] | None,
    rng: np.random.Generator,
    *,
    model: AveragedPerceptron | None = None,
    epochs: int | None = None,
    warm: bool = False,
) -> Trained:
    """The kept averaged weights (and raw state), their epoch and the dev LAS per epoch.

    ``parser`` must have its vocabularies, classes and ``rows_``; with ``dev`` its
    ``weights_`` are set to each epoch's averaged weights to score ``dev``.

    Args:
        model: the perceptron to continue (a new one of zeros when ``None``).
        epochs: passes over the data (``parser.epochs`` when ``None``).
        warm: the model is already trained, so error exploration starts at the first epoch.
    """
    if model is None:
        model = AveragedPerceptron((int(parser.rows_.max()) + 1, len(parser.class_actions_)))
    epochs = parser.epochs if epochs is None else epochs
    best: Trained | None = None
    best_score = -1.0
    history: list[float] = []
    for epoch in range(epochs):
        explore = parser.exploration if (system.dynamic and (epoch > 0 or warm)) else 0.0
        for index in rng.permutation(len(encoded)):
            _train_sentence(parser, system, model, encoded[index], swap_golds[index], explore, rng)
        if dev is None:
            continue
        parser.weights_ = model.averaged().astype(np.float32)
        score = labelled_accuracy(parser, dev)
        history.append(score)
        if score > best_score:
            best_score = score
            best = Trained(parser.weights_, model.weights.astype(np.float32), model.step, epoch + 1, history)
        elif best is not None and epoch + 1 - best.epoch >= PATIENCE:
            break
    if dev is None or best is None:
        best = Trained(model.averaged().astype(np.float32), model.weights.astype(np.float32),
                       model.step, epochs, history)
    return best


def _train_sentence(
    parser: TransitionParser,
    system: TransitionSystem,
    model: AveragedPerceptron,
    sentence: Encoded,
    swap_gold: SwapGold | None,
    explore: float,
    rng: np.random.Generator,
) -> None:
    """One perceptron pass over a sentence, following the oracle or (with probability
    ``explore``) the model's own prediction."""
    assert sentence.heads is not None and sentence.labels is not None
    state = system.initial(len(sentence.heads) - 1)
    weights = model.weights
    while not system.is_terminal(state):
        rows = parser.rows_[features(state, sentence.atoms, parser.n_bits, parser.templates())]
        rows = rows[rows > 0]
        scores = weights[rows].sum(axis=0)
        predicted = int(np.argmax(np.where(parser.valid_classes(system, state), scores, -np.inf)))
        gold = []
        for action in gold_actions(system, state, sentence.heads, swap_gold):
            dep = system.dependent(state, action)
            gold.append(parser.class_of(action, int(sentence.labels[dep]) if dep >= 0 else 0))
        best_gold = max(gold, key=lambda c: scores[c])
        if predicted not in gold:
            filled_only = sentence.human_heads is not None and _only_filled_arcs_lost(
                parser, system, state, sentence, predicted)
            weight = parser.filled_weight if filled_only else 1.0
            if weight > 0:
                index = (
                    np.concatenate((rows, rows)).astype(np.int64),
                    np.repeat(np.array([best_gold, predicted], dtype=np.int64), len(rows)),
                )
                model.update(index, np.repeat([weight, -weight], len(rows)))
        model.tick()
        follow = predicted if explore and rng.random() < explore else best_gold
        parser.apply_class(system, state, follow)


def _only_filled_arcs_lost(
    parser: TransitionParser, system: TransitionSystem, state: State, sentence: Encoded, predicted: int
) -> bool:
    """Whether the wrong class ``predicted`` costs only filled-in arcs: it is zero-cost for the
    dynamic oracle once the filled words' heads are unknown (-1, which every cost ignores),
    with any label on a filled word. Its update then gets ``parser.filled_weight``."""
    assert sentence.labels is not None and sentence.human_heads is not None
    action = Action(int(parser.class_actions_[predicted]))
    if action not in system.gold_actions(state, sentence.human_heads):
        return False
    dep = system.dependent(state, action)
    if dep < 0 or sentence.human_heads[dep] < 0:
        return True
    return parser.class_of(action, int(sentence.labels[dep])) == predicted


def labelled_accuracy(parser: TransitionParser, dev: Sequence[Sentence]) -> float:
    """The parser's labelled attachment score on ``dev`` (punctuation included)."""
    correct = total = 0
    for sentence, parse in zip(dev, parser.predict(dev), strict=True):
        right = (parse.heads[1:] == sentence.heads[1:]) & (
            np.array(parse.deprels[1:]) == np.array(sentence.deprels[1:])
        )
        correct += int(right.sum())
        total += len(sentence)
    return correct / max(total, 1)
