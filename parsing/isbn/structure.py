"""Which earlier steps a step's latent state links to (Titov 2008 §5.2, the J-terms of eq. 3.10).

A step's state ``h_t`` is connected to the most recent earlier step in each of 7 structural
relations to its configuration (:data:`RELATIONS`). Two per-token records suffice to find them:
``last_top[w]``, the last step at which word ``w`` was on top of the stack, and
``last_front[w]``, the last step at which it was at the front of the buffer:

1. input context (same buffer): ``last_front[b0]``;
2. stack context (same stack; everything below ``s0`` is unchanged while ``s0`` is on it):
   ``last_top[s0]``;
3. rightmost right child of ``s0`` on top: ``last_top[rc(s0)]``;
4. leftmost left child of ``s0`` on top: ``last_top[lc(s0)]``;
5. leftmost child of ``b0`` on top: ``last_top[lc(b0)]``;
6. head of ``s0`` on top: ``last_top[head(s0)]``;
7. ``s0`` at the front of the buffer: ``last_front[s0]`` (right after SHIFT / RIGHT-ARC this is
   the previous step, so consecutive steps are always linked).

Steps are identified by any integers the caller chooses (rows of a hidden-state table);
``-1`` means "no such step".
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.transition.state import NONE, State

RELATIONS = ("input", "stack", "right child of top", "left child of top", "left child of front",
             "head of top", "top at front")
N_RELATIONS = len(RELATIONS)


def _at(record: NDArray[np.int64], word: int) -> int:
    return int(record[word]) if word >= 0 else -1


def describe(state: State, last_top: NDArray[np.int64], last_front: NDArray[np.int64]
             ) -> tuple[list[int], list[int], list[int]]:
    """Positions, label slots and relation pointers of a non-final configuration.

    Returns:
        positions: ``[s0, s1, b0, b1, b2, head(s0), s2, b3, lc(s0), rc(s0), lc(b0)]`` (``-1``:
            none; 0 is ROOT);
        labels: label ids + 1 (0: none) of ``s0``, ``head(s0)``, ``lc(s0)``, ``rc(s0)``, ``lc(b0)``;
        pointers: the step of each relation of :data:`RELATIONS` (``-1``: none).
    """
    stack = state.stack
    s0 = stack[-1]
    s1 = stack[-2] if len(stack) > 1 else NONE
    s2 = stack[-3] if len(stack) > 2 else NONE
    b0, b1, b2, b3 = state.b(0), state.b(1), state.b(2), state.b(3)
    head = int(state.heads[s0])
    lc_s0, rc_s0 = int(state.leftmost[s0]), int(state.rightmost[s0])
    lc_b0 = int(state.leftmost[b0]) if b0 >= 0 else NONE
    labels = state.labels
    slots = [s0, head, lc_s0, rc_s0, lc_b0]
    label_ids = [int(labels[w]) + 1 if w > 0 else 0 for w in slots]
    pointers = [_at(last_front, b0), _at(last_top, s0), _at(last_top, rc_s0), _at(last_top, lc_s0),
                _at(last_top, lc_b0), _at(last_top, head), _at(last_front, s0)]
    return [s0, s1, b0, b1, b2, head, s2, b3, lc_s0, rc_s0, lc_b0], label_ids, pointers


def record(state: State, step: int, last_top: NDArray[np.int64], last_front: NDArray[np.int64]) -> None:
    """Note, in place, that configuration ``state`` is step ``step`` (after :func:`describe`)."""
    last_top[state.stack[-1]] = step
    b0 = state.b(0)
    if b0 >= 0:
        last_front[b0] = step


def new_records(n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Empty ``last_top`` and ``last_front`` of an ``n``-word sentence, shape ``(n+1,)`` each."""
    return np.full(n + 1, -1, dtype=np.int64), np.full(n + 1, -1, dtype=np.int64)
