"""Beam search for the ISBN parser, pruned after every word-consuming move (Titov 2008 §5.3).

A round moves every hypothesis of every sentence of a chunk past one more word. Hypotheses that
have not consumed the word yet form the *frontier*: all of them are scored in one matrix
operation (their latent states from their own relation pointers), and each valid move extends
them: SHIFT and RIGHT-ARC consume the word and go to the sentence's *pool*, REDUCE and LEFT-ARC
stay in the frontier. Arc moves branch into the ``k_labels`` most probable labels. The
frontier keeps at most ``beam`` candidates per sentence and drops those already below the
pool's ``beam``-th best (scores only fall), so a round ends; then the pool's ``beam`` best
become the beam. Every complete derivation consumes exactly ``n`` words, so hypotheses are
compared after the same number of words.

Candidates are kept lazily as ``(score, parent, move, label)`` and turned into configurations
only when they survive pruning. Latent states live in one growing table (:class:`StateTable`);
a hypothesis holds the table rows of its steps through ``last_top`` / ``last_front``, and its
decisions as a linked trail (one tuple per step, shared with its ancestors: recording costs
nothing), so the final beam comes with derivations (:meth:`Hypothesis.decisions`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.isbn import network, structure, system
from parsing.isbn.encoding import N_POSITIONS, ISBNEncoder
from parsing.transition.state import State

IntArray = NDArray[np.int64]

Trail = tuple[int, int, "Trail | None"]
"""A hypothesis's decisions, newest first: ``(move, label, earlier decisions or None)``."""

Restrict = Callable[[int, State, NDArray[np.bool_]], tuple[NDArray[np.bool_], int, int]]
"""``(sentence, configuration, valid moves) -> (allowed moves, forced LEFT label, forced
RIGHT label)`` (``-1``: no forced label): how constrained decoding prunes the beam."""


@dataclass(slots=True)
class Hypothesis:
    """One derivation in the beam.

    Attributes:
        state: its configuration (final once every word is consumed).
        last_top, last_front: :mod:`parsing.isbn.structure`'s records, as state-table rows.
        log_prob: sum of the log-probabilities of its decisions.
        previous: its last move (``N_MOVES`` before the first).
        trail: its decisions (:data:`Trail`; ``None`` before the first).
    """

    state: State
    last_top: IntArray
    last_front: IntArray
    log_prob: float
    previous: int
    trail: Trail | None = None

    def extended(self, move: int, label: int, log_prob: float) -> Hypothesis:
        """A new hypothesis: this one after ``move`` (with ``label``)."""
        state = self.state.copy()
        system.apply(state, move, label)
        return Hypothesis(state, self.last_top.copy(), self.last_front.copy(), log_prob, move,
                          (move, label, self.trail))

    def decisions(self) -> tuple[IntArray, IntArray]:
        """Its moves and label ids (``-1`` for SHIFT and REDUCE) in order, shape ``(T,)`` each."""
        moves: list[int] = []
        labels: list[int] = []
        trail = self.trail
        while trail is not None:
            move, label, trail = trail
            moves.append(move)
            labels.append(label)
        return np.array(moves[::-1], dtype=np.int64), np.array(labels[::-1], dtype=np.int64)


class StateTable:
    """Latent states of every scored step, shape ``(rows, H)``; row 0 is the zero state that
    stands for a missing relation (pointer ``-1``)."""

    def __init__(self, hidden: int, dtype: np.dtype[np.floating]) -> None:
        self.table = np.zeros((1024, hidden), dtype=dtype)
        self.size = 1

    def add(self, states: NDArray[np.floating]) -> IntArray:
        """Append ``states`` ``(N, H)``; return their rows."""
        needed = self.size + len(states)
        if needed > len(self.table):
            grown = np.zeros((max(needed, 2 * len(self.table)), self.table.shape[1]), dtype=self.table.dtype)
            grown[: self.size] = self.table[: self.size]
            self.table = grown
        rows = np.arange(self.size, needed, dtype=np.int64)
        self.table[rows] = states
        self.size = needed
        return rows

    def linked(self, pointers: IntArray) -> NDArray[np.floating]:
        """States at ``pointers`` ``(N, 7)`` (``-1``: zeros), shape ``(N, 7, H)``."""
        out: NDArray[np.floating] = self.table[np.maximum(pointers, 0)]
        return out


@dataclass(frozen=True, slots=True)
class Model:
    """What decoding needs from a fitted parser."""

    params: network.Params
    encoder: ISBNEncoder
    root_labels: NDArray[np.bool_]
    other_labels: NDArray[np.bool_]
    relations: bool = True


@dataclass(frozen=True, slots=True)
class Step:
    """What ``N`` configurations decide from: latent states ``hidden`` ``(N, H)``, ``valid``
    moves ``(N, 4)``, allowed LEFT and RIGHT labels ``left_mask``, ``right_mask`` ``(N, L)``."""

    hidden: NDArray[np.floating]
    valid: NDArray[np.bool_]
    left_mask: NDArray[np.bool_]
    right_mask: NDArray[np.bool_]

    def decisions(self, params: network.Params) -> tuple[NDArray[np.floating], ...]:
        """Log-probabilities of the moves ``(N, 4)`` and LEFT/RIGHT labels ``(N, L)``
        (:func:`parsing.isbn.network.decisions`)."""
        return network.decisions(params, self.hidden, self.valid, self.left_mask, self.right_mask)


def latent_step(model: Model, frontier: Sequence[tuple[int, Hypothesis]], table: IntArray, offsets: IntArray,
                states: StateTable, restrict: Restrict | None) -> Step:
    """The latent states of the ``N`` hypotheses of ``frontier`` (``(sentence, hypothesis)``
    pairs, sentences indexing ``offsets``) with their move and label masks; the states are
    added to ``states`` and recorded in the hypotheses' ``last_top`` / ``last_front``."""
    n = len(frontier)
    positions = np.empty((n, N_POSITIONS), dtype=np.int64)
    labels = np.empty((n, 5), dtype=np.int64)
    pointers = np.empty((n, structure.N_RELATIONS), dtype=np.int64)
    valid = np.empty((n, system.N_MOVES), dtype=bool)
    previous = np.empty(n, dtype=np.int64)
    owner = np.empty(n, dtype=np.int64)
    root_top = np.empty(n, dtype=bool)
    forced = np.full((n, 2), -1, dtype=np.int64)
    for i, (sentence, hypothesis) in enumerate(frontier):
        state = hypothesis.state
        positions[i], labels[i], pointers[i] = structure.describe(
            state, hypothesis.last_top, hypothesis.last_front)
        valid[i] = system.valid_moves(state)
        if restrict is not None:
            valid[i], forced[i, 0], forced[i, 1] = restrict(sentence, state, valid[i])
        previous[i] = hypothesis.previous
        owner[i] = sentence
        root_top[i] = state.stack[-1] == 0
    if not model.relations:
        pointers[:] = -1
    rows = np.where(positions >= 0, offsets[owner][:, None] + positions, 0)
    ids = model.encoder.feature_ids(table, rows, labels, previous)
    hidden = network.hidden_step(model.params, ids, states.linked(pointers))
    steps = states.add(hidden).tolist()
    for (_, hypothesis), step in zip(frontier, steps, strict=True):
        structure.record(hypothesis.state, step, hypothesis.last_top, hypothesis.last_front)
    left_mask = np.broadcast_to(model.other_labels, (n, len(model.other_labels))).copy()
    right_mask = np.where(root_top[:, None], model.root_labels, model.other_labels)
    for column, mask in ((0, left_mask), (1, right_mask)):
        for i in np.flatnonzero(forced[:, column] >= 0).tolist():
            label = int(forced[i, column])
            if mask[i, label]:
                mask[i] = False
                mask[i, label] = True
    return Step(hidden, valid, left_mask, right_mask)


def _top(scores: NDArray[np.floating], k: int) -> IntArray:
    """Indices of the ``k`` largest finite entries of a flat array, best first."""
    finite = np.flatnonzero(np.isfinite(scores))
    if len(finite) > k:
        finite = finite[np.argpartition(-scores[finite], k - 1)[:k]]
    order: IntArray = finite[np.argsort(-scores[finite], kind="stable")]
    return order


def beam_search(model: Model, lengths: Sequence[int], table: IntArray, offsets: IntArray, *,
                beam: int, k_labels: int, restrict: Restrict | None = None) -> list[list[Hypothesis]]:
    """Final hypotheses of each sentence (at most ``beam``, best first).

    Args:
        lengths: words of each sentence; ``table``, ``offsets``: their token table and ROOT
            rows (:meth:`~parsing.isbn.encoding.ISBNEncoder.tokens`).
        beam: hypotheses kept after each consumed word (1: greedy).
        k_labels: labels tried per arc.
        restrict: constrained decoding's pruning (:data:`Restrict`), or None.
    """
    hidden = model.params["J"].shape[1]
    states = StateTable(hidden, model.params["J"].dtype)
    beams: list[list[Hypothesis]] = []
    for n in lengths:
        last_top, last_front = structure.new_records(n)
        beams.append([Hypothesis(system.start(n), last_top, last_front, 0.0, system.N_MOVES)])
    n_labels = len(model.root_labels)
    k = max(1, min(k_labels, n_labels))
    for word in range(max(lengths, default=0)):
        active = [s for s, n in enumerate(lengths) if word < n]
        frontier = [(s, hypothesis) for s in active for hypothesis in beams[s]]
        pools: dict[int, list[tuple[float, Hypothesis, int, int]]] = {s: [] for s in active}
        while frontier:
            moves, left, right = latent_step(model, frontier, table, offsets, states, restrict).decisions(
                model.params)
            base = np.array([hypothesis.log_prob for _, hypothesis in frontier])[:, None]
            best_left = np.argsort(-left, axis=1)[:, :k]
            best_right = np.argsort(-right, axis=1)[:, :k]
            consume = np.concatenate([moves[:, [system.SHIFT]], moves[:, [system.RIGHT]]
                                      + np.take_along_axis(right, best_right, axis=1)], axis=1) + base
            stay = np.concatenate([moves[:, [system.REDUCE]], moves[:, [system.LEFT]]
                                   + np.take_along_axis(left, best_left, axis=1)], axis=1) + base
            width = consume.shape[1]
            next_frontier: list[tuple[int, Hypothesis]] = []
            start = 0
            while start < len(frontier):
                sentence = frontier[start][0]
                stop = start
                while stop < len(frontier) and frontier[stop][0] == sentence:
                    stop += 1
                pool = pools[sentence]
                for flat in _top(consume[start:stop].ravel(), beam).tolist():
                    i, column = divmod(flat, width)
                    move, label = (system.SHIFT, -1) if column == 0 else (
                        system.RIGHT, int(best_right[start + i, column - 1]))
                    pool.append((float(consume[start + i, column]), frontier[start + i][1], move, label))
                pool.sort(key=lambda candidate: -candidate[0])
                del pool[beam:]
                floor = pool[-1][0] if len(pool) >= beam else -np.inf
                for flat in _top(stay[start:stop].ravel(), beam).tolist():
                    i, column = divmod(flat, width)
                    score = float(stay[start + i, column])
                    if score <= floor:
                        break
                    move, label = (system.REDUCE, -1) if column == 0 else (
                        system.LEFT, int(best_left[start + i, column - 1]))
                    next_frontier.append((sentence, frontier[start + i][1].extended(move, label, score)))
                start = stop
            frontier = next_frontier
        for sentence in active:
            beams[sentence] = [parent.extended(move, label, score)
                               for score, parent, move, label in pools[sentence]]
    return beams
