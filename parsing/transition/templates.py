"""Feature templates of the transition parsers (Zhang & Nivre 2011, simplified).

A configuration is read as a small vector of integer *atoms*: the form, UPOS, lemma,
FEATS and arc-label ids of 11 positions (``s0 s1 s2 b0 b1 b2``, the leftmost and
rightmost children of ``s0`` and ``s1``, the leftmost child of ``b0``), the bucketed
distance ``s0``–``b0`` and valencies. Every template names up to four atoms; all
templates of a configuration are hashed at once with one :func:`~parsing.features.hash_columns`
call over columns gathered from the atom vector.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.features import hash_columns
from parsing.transition.state import NONE, State

ABSENT = -2
"""Value of every attribute of a missing position (an empty slot, a word without children)."""

POSITIONS = ("s0", "s1", "s2", "b0", "b1", "b2", "s0l", "s0r", "s1l", "s1r", "b0l")
WORD_ATTRIBUTES = ("w", "p", "m", "f")
"""Form, UPOS, lemma, FEATS: the rows of a sentence's atom matrix."""
EXTRAS = ("d", "s0.vl", "s0.vr", "s1.vl", "s1.vr", "b0.vl", "_")

TEMPLATES: tuple[str, ...] = (
    # single positions
    "s0.w", "s0.p", "s0.w s0.p", "s0.m", "s0.f s0.p", "s0.l s0.p",
    "s1.w", "s1.p", "s1.w s1.p", "s1.m", "s1.l s1.p",
    "s2.w", "s2.p",
    "b0.w", "b0.p", "b0.w b0.p", "b0.m", "b0.f b0.p",
    "b1.w", "b1.p", "b1.w b1.p",
    "b2.w", "b2.p",
    # pairs
    "s0.w s0.p b0.w b0.p", "s0.w s0.p b0.w", "s0.w b0.w b0.p", "s0.w s0.p b0.p", "s0.p b0.w b0.p",
    "s0.w b0.w", "s0.p b0.p", "s0.m b0.m", "s0.f b0.f", "b0.p b1.p",
    "s0.w s1.w", "s0.p s1.p", "s0.w s1.p", "s0.p s1.w", "s0.f s1.f",
    # triples
    "b0.p b1.p b2.p", "s0.p b0.p b1.p", "s1.p s0.p b0.p", "s2.p s1.p s0.p",
    "s0.p s0l.p b0.p", "s0.p s0r.p b0.p", "s0.p b0.p b0l.p", "s1.p s1l.p s0.p", "s1.p s1r.p s0.p",
    # distance
    "s0.w d", "s0.p d", "b0.w d", "b0.p d", "s0.w b0.w d", "s0.p b0.p d",
    # valency
    "s0.w s0.vr", "s0.p s0.vr", "s0.w s0.vl", "s0.p s0.vl", "b0.w b0.vl", "b0.p b0.vl",
    "s1.p s1.vl", "s1.p s1.vr",
    # children
    "s0l.w", "s0l.p", "s0l.l", "s0r.w", "s0r.p", "s0r.l", "b0l.w", "b0l.p", "b0l.l",
    "s1l.p", "s1l.l", "s1r.p", "s1r.l",
    # label sets
    "s0.p s0l.l s0r.l", "s0.w s0l.l s0r.l", "b0.p b0l.l", "s1.p s1l.l s1r.l",
)  # fmt: skip

_N = len(POSITIONS)


def _atom_index(name: str) -> int:
    if name in EXTRAS:
        return len(WORD_ATTRIBUTES) * _N + _N + EXTRAS.index(name)
    position, attribute = name.split(".")
    slot = POSITIONS.index(position)
    if attribute == "l":
        return len(WORD_ATTRIBUTES) * _N + slot
    return WORD_ATTRIBUTES.index(attribute) * _N + slot


def _columns() -> NDArray[np.int64]:
    table = np.full((len(TEMPLATES), 4), _atom_index("_"), dtype=np.int64)
    for number, template in enumerate(TEMPLATES):
        names = template.split()
        table[number, : len(names)] = [_atom_index(name) for name in names]
    return table


_COLUMNS = _columns()
_C0, _C1, _C2, _C3 = (_COLUMNS[:, i].copy() for i in range(4))
_TEMPLATE_IDS = np.arange(1, len(TEMPLATES) + 1, dtype=np.int64)


def _bucket(distance: int) -> int:
    magnitude = abs(distance)
    bucket = magnitude if magnitude <= 5 else (6 if magnitude <= 10 else 7)
    return bucket if distance >= 0 else -bucket


def config_atoms(state: State, atoms: NDArray[np.int64]) -> NDArray[np.int64]:
    """The atom vector of ``state``; ``atoms`` is the sentence's ``(4, n+2)`` id matrix whose
    last column (``n+1``) is :data:`ABSENT`."""
    stack = state.stack
    depth = len(stack)
    s0 = stack[-1] if depth > 0 else NONE
    s1 = stack[-2] if depth > 1 else NONE
    s2 = stack[-3] if depth > 2 else NONE
    b0, b1, b2 = state.b(0), state.b(1), state.b(2)
    leftmost, rightmost = state.leftmost, state.rightmost
    absent = len(state.heads)
    tokens = [
        s0, s1, s2, b0, b1, b2,
        leftmost[s0] if s0 >= 0 else NONE, rightmost[s0] if s0 >= 0 else NONE,
        leftmost[s1] if s1 >= 0 else NONE, rightmost[s1] if s1 >= 0 else NONE,
        leftmost[b0] if b0 >= 0 else NONE,
    ]  # fmt: skip
    index = np.array([t if t >= 0 else absent for t in tokens], dtype=np.intp)
    labels = np.append(state.labels, ABSENT)[index]
    n_left, n_right = state.n_left, state.n_right
    extras = np.array(
        [
            _bucket(b0 - s0) if s0 >= 0 and b0 >= 0 else ABSENT,
            n_left[s0] if s0 >= 0 else ABSENT,
            n_right[s0] if s0 >= 0 else ABSENT,
            n_left[s1] if s1 >= 0 else ABSENT,
            n_right[s1] if s1 >= 0 else ABSENT,
            n_left[b0] if b0 >= 0 else ABSENT,
            0,
        ],
        dtype=np.int64,
    )
    return np.concatenate((atoms[:, index].ravel(), labels, extras))


_MIX = np.int64(0x2545F4914F6CDD1D)


def hash_atoms(atom_vectors: NDArray[np.int64], n_bits: int) -> NDArray[np.int64]:
    """Hashed feature ids of every template: ``(..., n_templates)`` for atom vectors ``(..., n_atoms)``.

    The template number and its (up to four) atoms are first folded into one integer with
    a wrapping multiply-add (cheap, few numpy calls), which :func:`hash_columns` then mixes.
    """
    with np.errstate(over="ignore"):
        key = _TEMPLATE_IDS * _MIX + atom_vectors[..., _C0]
        key = key * _MIX + atom_vectors[..., _C1]
        key = key * _MIX + atom_vectors[..., _C2]
        key = key * _MIX + atom_vectors[..., _C3]
    return hash_columns(0, key, n_bits=n_bits)


def features(state: State, atoms: NDArray[np.int64], n_bits: int) -> NDArray[np.int64]:
    """Hashed feature ids of ``state`` (one per template)."""
    return hash_atoms(config_atoms(state, atoms), n_bits)
