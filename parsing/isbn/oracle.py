"""Gold derivations for training: the static oracle's moves and each step's features and links.

The gold derivation of a (projectivised) tree fixes every configuration in advance, so each
step's explicit features and relation pointers can be computed once, before training
(:func:`derive`), and whole batches of sentences run step by step in matrix operations
(:mod:`parsing.isbn.network`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.isbn import structure, system
from parsing.isbn.encoding import N_POSITIONS, ISBNEncoder
from parsing.types import Heads

IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Derivation:
    """One sentence's gold derivation of ``T`` steps.

    Attributes:
        positions: ``(T, 11)`` configuration positions (:func:`parsing.isbn.structure.describe`).
        slot_labels: ``(T, 5)`` label-slot ids.
        pointers: ``(T, 7)`` linked earlier steps (``0..T-1``; ``-1``: none).
        valid: ``(T, 4)`` valid moves.
        moves: ``(T,)`` gold moves; labels: ``(T,)`` gold label ids of arcs (``-1`` otherwise).
        previous: ``(T,)`` the move before each step (``N_MOVES`` first).
        root_arc: ``(T,)`` whether the step's RIGHT-ARC would attach to ROOT.
    """

    positions: IntArray
    slot_labels: IntArray
    pointers: IntArray
    valid: NDArray[np.bool_]
    moves: IntArray
    labels: IntArray
    previous: IntArray
    root_arc: NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.moves)


def derive(heads: Heads, label_ids: Sequence[int]) -> Derivation:
    """The static oracle's derivation of a projective single-rooted tree.

    Args:
        heads: ``(n+1,)`` gold heads; label_ids: ``n+1`` label ids (entry 0 ignored).
    """
    n = len(heads) - 1
    state = system.start(n)
    last_top, last_front = structure.new_records(n)
    rows: list[tuple[list[int], list[int], list[int]]] = []
    valid: list[NDArray[np.bool_]] = []
    moves: list[int] = []
    labels: list[int] = []
    root_arc: list[bool] = []
    gold = np.asarray(heads, dtype=np.intp)
    while not system.is_final(state):
        rows.append(structure.describe(state, last_top, last_front))
        valid.append(system.valid_moves(state))
        move = system.oracle_move(state, gold)
        label = int(label_ids[system.dependent(state, move)]) if move in (system.LEFT, system.RIGHT) else -1
        root_arc.append(state.stack[-1] == 0)
        structure.record(state, len(moves), last_top, last_front)
        system.apply(state, move, label)
        moves.append(move)
        labels.append(label)
    move_array = np.array(moves, dtype=np.int64)
    return Derivation(
        np.array([r[0] for r in rows], dtype=np.int64).reshape(-1, N_POSITIONS),
        np.array([r[1] for r in rows], dtype=np.int64).reshape(-1, 5),
        np.array([r[2] for r in rows], dtype=np.int64).reshape(-1, structure.N_RELATIONS),
        np.array(valid, dtype=bool).reshape(-1, system.N_MOVES),
        move_array,
        np.array(labels, dtype=np.int64),
        np.concatenate([[system.N_MOVES], move_array[:-1]]).astype(np.int64),
        np.array(root_arc, dtype=bool),
    )


def replay(moves: Sequence[int], labels: Sequence[int], n: int) -> tuple[Heads, IntArray]:
    """Heads ``(n+1,)`` and label ids ``(n+1,)`` built by applying ``moves`` from the start."""
    state = system.start(n)
    for move, label in zip(moves, labels, strict=True):
        system.apply(state, int(move), int(label))
    heads = state.heads.copy()
    heads[0] = -1
    return heads, state.labels.astype(np.int64)


def feature_ids(encoder: ISBNEncoder, table: IntArray, root_row: int, derivation: Derivation) -> IntArray:
    """``E`` rows of every step's features, shape ``(T, K)``, for a sentence whose ROOT is
    row ``root_row`` of the token table ``table``."""
    rows = np.where(derivation.positions >= 0, root_row + derivation.positions, 0)
    return encoder.feature_ids(table, rows, derivation.slot_labels, derivation.previous)
