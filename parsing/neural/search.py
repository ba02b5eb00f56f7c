"""Greedy and beam-search decoding for the neural transition parser.

Every step scores the configurations of all live hypotheses of all sentences at once (one
batched forward pass), then each sentence keeps its ``beam`` best extensions, ranked by the
sum of the log-probabilities of their actions. With arc-hybrid every derivation of a
sentence has ``2n`` actions, so a sentence's hypotheses finish together and the final beam
is a k-best list whose scores are log-probabilities ``log P(tree) = sum_t log P(a_t | c_t)``.

Labelled actions are numbered ``0`` = SHIFT, ``1..L`` = LEFT_ARC with label id ``1..L``,
``L+1..2L`` = RIGHT_ARC with label id ``1..L`` (:class:`ActionSpace`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.neural import system
from parsing.neural.batch import Configurations
from parsing.neural.features import featurise
from parsing.transition.state import State

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
Scorer = Callable[[IntArray, IntArray, BoolArray], NDArray[np.floating]]
"""``(token_rows (B, 18), label_ids (B, 12), valid (B, A)) -> log P (B, A)``."""
Restriction = Callable[[Configurations, IntArray, BoolArray], BoolArray]
"""``(rows, owner (H,), valid (H, A)) -> allowed (H, A)``: the actions each live hypothesis
may take (constrained parsing prunes the extensions that break a forced arc)."""


@dataclass(frozen=True, slots=True)
class ActionSpace:
    """The labelled actions and the label constraints on ROOT's dependent.

    Attributes:
        root_labels: ``(L+1,)`` label ids ROOT's dependent may take (seen on it in training).
        other_labels: ``(L+1,)`` label ids every other arc may take.
    """

    root_labels: BoolArray
    other_labels: BoolArray

    @property
    def n_labels(self) -> int:
        """Number of labels ``L``."""
        return len(self.root_labels) - 1

    @property
    def n_actions(self) -> int:
        """``2L + 1``."""
        return 2 * self.n_labels + 1

    def encode(self, move: int, label: int) -> int:
        """The action index of ``move`` with label id ``label``."""
        return 0 if move == system.SHIFT else label + (move - 1) * self.n_labels

    def decode(self, action: int) -> tuple[int, int]:
        """``(move, label id)`` of an action index (label ``-1`` for SHIFT)."""
        if action == 0:
            return system.SHIFT, -1
        move, label = divmod(action - 1, self.n_labels)
        return move + 1, label + 1

    def decode_all(self, actions: IntArray) -> tuple[IntArray, IntArray]:
        """:meth:`decode` of an array of actions: moves and label ids, shape ``(B,)`` each."""
        label = np.where(actions == 0, -1, (actions - 1) % self.n_labels + 1)
        move = np.where(actions == 0, system.SHIFT, (actions - 1) // self.n_labels + 1)
        return move, label

    def mask(self, valid_moves: BoolArray, root_arc: BoolArray) -> BoolArray:
        """Valid actions ``(B, A)`` from valid moves ``(B, 3)`` and whether RIGHT_ARC would
        attach to ROOT ``(B,)``."""
        labels_ok = np.where(root_arc[:, None], self.root_labels[1:], self.other_labels[1:])
        left = valid_moves[:, [system.LEFT]] & self.other_labels[1:]
        right = valid_moves[:, [system.RIGHT]] & labels_ok
        return np.concatenate([valid_moves[:, [system.SHIFT]], left, right], axis=1)


@dataclass(slots=True)
class Hypothesis:
    """A partial derivation and the sum of its actions' log-probabilities.

    ``actions`` is the derivation's action sequence (``(2n,)`` action indices) when the
    search recorded it (``beam_search(..., record=True)``), else ``None``.
    """

    state: State
    log_prob: float
    actions: IntArray | None = None


_Path = tuple["_Path", int] | None
"""A derivation prefix as a linked list: ``(prefix without the last action, last action)``."""


def step_inputs(
    states: Sequence[State], space: ActionSpace, offsets: IntArray
) -> tuple[IntArray, IntArray, BoolArray]:
    """Token rows ``(B, 18)``, label ids ``(B, 12)`` and valid actions ``(B, A)`` of configurations.

    ``offsets`` ``(B,)`` is the token-table row of each configuration's ROOT.
    """
    sizes = np.array([len(state.heads) for state in states], dtype=np.int64)
    filled = np.arange(sizes.max()) < sizes[:, None]
    columns = []
    for name in ("heads", "leftmost", "rightmost", "labels"):
        column = np.full(filled.shape, -1, dtype=np.int64)
        column[filled] = np.concatenate([getattr(state, name) for state in states])
        columns.append(column)
    heads, leftmost, rightmost, labels = columns
    stack = np.array([system.stack_top(state) for state in states], dtype=np.int64).reshape(-1, 3)
    buffer = np.array([state.buffer for state in states], dtype=np.int64)[:, None] + np.arange(3)
    buffer[buffer >= sizes[:, None]] = -1
    valid = np.array([system.valid_moves(state) for state in states], dtype=bool).reshape(-1, system.N_MOVES)
    rows, label_ids = featurise(stack, buffer, heads, leftmost, rightmost, labels, offsets)
    return rows, label_ids, space.mask(valid, stack[:, 1] == 0)


def greedy(scorer: Scorer, space: ActionSpace, lengths: Sequence[int], offsets: IntArray) -> list[State]:
    """The final configuration of each sentence under the most probable action at every step."""
    return [hypotheses[0].state for hypotheses in beam_search(scorer, space, lengths, offsets, beam=1)]


def beam_search(
    scorer: Scorer, space: ActionSpace, lengths: Sequence[int], offsets: IntArray, *, beam: int,
    restrict: Restriction | None = None, record: bool = False,
) -> list[list[Hypothesis]]:
    """Each sentence's final beam, best first: up to ``beam`` complete derivations.

    The live hypotheses are the rows of one :class:`Configurations`, grouped by sentence
    and best first within a sentence; a step scores them all, keeps each sentence's
    ``beam`` best extensions and moves the copied rows. Ties are broken by the order of the
    candidates (parent rank, then action index), so ``beam=1`` takes the most probable
    action at every step (:func:`greedy`). A sentence's rows all finish at the same step
    (arc-hybrid takes ``2n`` moves). With ``restrict`` the valid actions of every live row are
    narrowed by it before scoring (an extension it forbids is never kept). With ``record``
    each final hypothesis also holds its action sequence (the beam is otherwise the same).
    """
    n_actions = space.n_actions
    # With ``record``: per row, its derivation as a linked list ``(previous, action)``.
    paths: list[_Path] | None = [None] * len(lengths) if record else None
    rows = Configurations.start(lengths)
    owner = np.arange(len(lengths))  # (H,) the sentence of each row
    log_prob = np.zeros(len(lengths))  # (H,) the sum of its actions' log-probabilities
    beams: list[list[Hypothesis]] = [[] for _ in lengths]
    while True:
        final = rows.is_final()
        for row in np.flatnonzero(final).tolist():
            actions = None if paths is None else _unroll(paths[row])
            beams[owner[row]].append(Hypothesis(rows.state(row), float(log_prob[row]), actions))
        if final.any():
            live = np.flatnonzero(~final)
            rows, owner, log_prob = rows.take(live), owner[live], log_prob[live]
            if paths is not None:
                paths = [paths[i] for i in live.tolist()]
        if not len(owner):
            return beams
        top = rows.stack_top()
        token_rows, label_ids = featurise(
            top, rows.buffer_front(), rows.heads, rows.leftmost, rows.rightmost, rows.labels, offsets[owner]
        )
        valid = space.mask(rows.valid_moves(top), top[:, 1] == 0)
        if restrict is not None:
            valid = restrict(rows, owner, valid)
        totals = scorer(token_rows, label_ids, valid) + log_prob[:, None]
        # Candidates of sentence j: row j of a (sentences, beam * A) matrix, -inf padded;
        # candidate c extends the sentence's hypothesis of rank c // A with action c % A.
        sentences, first, count = np.unique(owner, return_index=True, return_counts=True)
        group = np.repeat(np.arange(len(sentences)), count)
        candidates = np.full((len(sentences), beam, n_actions), -np.inf)
        candidates[group, np.arange(len(owner)) - first[group]] = totals
        best = top_k(candidates.reshape(len(sentences), -1), beam)
        picks = [
            (first[j] + c // n_actions, c % n_actions, score, sentence)
            for j, (sentence, chosen) in enumerate(zip(sentences.tolist(), best, strict=True))
            for c, score in chosen
        ]
        parent, action, log_prob, owner = (np.array(column) for column in zip(*picks, strict=True))
        rows = rows.take(parent)
        rows.apply(*space.decode_all(action))
        if paths is not None:
            paths = [(paths[p], a) for p, a in zip(parent.tolist(), action.tolist(), strict=True)]


def _unroll(path: _Path) -> IntArray:
    """The actions of a linked-list derivation, first first, shape ``(T,)``."""
    actions: list[int] = []
    while path is not None:
        path, action = path
        actions.append(action)
    return np.array(actions[::-1], dtype=np.int64)


def top_k(scores: NDArray[np.float64], k: int) -> list[list[tuple[int, float]]]:
    """Each row's ``k`` largest finite entries as ``(column, score)``, best first.

    Ties go to the lower column, as a stable sort of ``-scores`` would order them; rows with
    fewer than ``k`` finite entries give them all. A partition finds each row's ``k``-th
    largest value, so only the entries at or above it are sorted.

    Args:
        scores: shape ``(rows, columns)``, ``-inf`` for no candidate.
        k: how many to keep per row.

    Examples:
        >>> top_k(np.array([[1.0, 3.0, 3.0, -np.inf], [-np.inf, 2.0, -np.inf, -np.inf]]), 2)
        [[(1, 3.0), (2, 3.0)], [(1, 2.0)]]
    """
    columns = scores.shape[1]
    k = min(k, columns)
    threshold = np.partition(scores, columns - k, axis=1)[:, columns - k]
    rows, cols = np.nonzero((scores >= threshold[:, None]) & (scores > -np.inf))
    values = scores[rows, cols]
    order = np.lexsort((cols, -values, rows))
    kept: list[list[tuple[int, float]]] = [[] for _ in range(scores.shape[0])]
    ranked = zip(rows[order].tolist(), cols[order].tolist(), values[order].tolist(), strict=True)
    for row, col, value in ranked:
        if len(kept[row]) < k:
            kept[row].append((col, value))
    return kept
