"""Feature templates of the transition parsers (Zhang & Nivre 2011, simplified).

A configuration is read as a small vector of integer *atoms*: the form, UPOS, lemma,
FEATS (and, for a parser with word clusters, cluster path ids: :data:`CLUSTER_TEMPLATES`) and
arc-label ids of 11 positions (``s0 s1 s2 b0 b1 b2``, the leftmost and
rightmost children of ``s0`` and ``s1``, the leftmost child of ``b0``), the bucketed
distance ``s0``–``b0`` and valencies. Every template names up to four atoms; all
templates of a configuration are hashed at once with one :func:`~parsing.features.hash_columns`
call over columns gathered from the atom vector.

Prediction parses a batch of sentences in lockstep: their states keep their arrays in one
:class:`StateBank`, so :func:`bank_atoms` builds the atom vectors of every unfinished state
with a few numpy calls, equal row for row to :func:`config_atoms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.features import bucket_distance, hash_columns
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

CLUSTER_ATTRIBUTES = ("c4", "c6", "c")
"""Word-cluster rows appended to the atom matrix by a parser with clusters: 4-bit and 6-bit path
prefixes and the full path (:meth:`~parsing.clusters.lexicon.ClusterLexicon.code_rows`)."""

CLUSTER_TEMPLATES: tuple[str, ...] = (
    # cluster only: Koo's (hc) (mc) (hc4) (mc4) (hc,mc) (hc4,mc4) (hc6,mc6), s0 and b0 as the pair
    "s0.c", "b0.c", "s0.c4", "b0.c4", "s0.c6", "b0.c6", "s0.c b0.c", "s0.c4 b0.c4", "s0.c6 b0.c6",
    # hybrid cluster/UPOS, both ways round (either word may become the head)
    "s0.p b0.c4", "s0.p b0.c6", "s0.c4 b0.p", "s0.c6 b0.p",
    "s0.p b0.c b0.p", "s0.p b0.c4 b0.p", "s0.c s0.p b0.p", "s0.c4 s0.p b0.p",
    # context, after the sibling templates (hc4,sc4,mc4) and (hc6,sc6,mc6)
    "s1.c4", "b1.c4", "s1.c4 s0.c4 b0.c4", "s0.c4 b0.c4 b1.c4", "s0.c6 b0.c6 b1.c6",
    "s0.p s0r.c4 b0.c4", "s0.c4 b0l.c4 b0.p",
)  # fmt: skip
"""Koo et al. (2008) cluster templates (the Razavi digest's §2.4) read over the arc candidates
``s0``–``b0`` of a configuration; added to :data:`TEMPLATES` for a parser with clusters."""

_N = len(POSITIONS)


@dataclass(frozen=True, slots=True)
class TemplateSet:
    """Templates compiled against an atom layout: for each template, the atom-vector columns of
    its (up to four) atoms (``columns``, four arrays of shape ``(n_templates,)``) and its number
    (``ids``, ``1..n_templates``)."""

    columns: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]
    ids: NDArray[np.int64]

    @classmethod
    def compile(cls, templates: tuple[str, ...], attributes: tuple[str, ...]) -> TemplateSet:
        """``templates`` over atom vectors whose word rows are ``attributes``."""
        table = np.full((len(templates), 4), _atom_index("_", attributes), dtype=np.int64)
        for number, template in enumerate(templates):
            names = template.split()
            table[number, : len(names)] = [_atom_index(name, attributes) for name in names]
        c0, c1, c2, c3 = (table[:, i].copy() for i in range(4))
        return cls((c0, c1, c2, c3), np.arange(1, len(templates) + 1, dtype=np.int64))


def _atom_index(name: str, attributes: tuple[str, ...]) -> int:
    if name in EXTRAS:
        return len(attributes) * _N + _N + EXTRAS.index(name)
    position, attribute = name.split(".")
    slot = POSITIONS.index(position)
    if attribute == "l":
        return len(attributes) * _N + slot
    return attributes.index(attribute) * _N + slot


BASE = TemplateSet.compile(TEMPLATES, WORD_ATTRIBUTES)
"""The templates of a parser without clusters (atom matrix rows :data:`WORD_ATTRIBUTES`)."""
WITH_CLUSTERS = TemplateSet.compile(TEMPLATES + CLUSTER_TEMPLATES, WORD_ATTRIBUTES + CLUSTER_ATTRIBUTES)
"""The templates of a parser with clusters (rows :data:`WORD_ATTRIBUTES` + :data:`CLUSTER_ATTRIBUTES`)."""


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


def hash_atoms(atom_vectors: NDArray[np.int64], n_bits: int,
               templates: TemplateSet = BASE) -> NDArray[np.int64]:
    """Hashed feature ids of every template: ``(..., n_templates)`` for atom vectors ``(..., n_atoms)``.

    The template number and its (up to four) atoms are first folded into one integer with
    a wrapping multiply-add (cheap, few numpy calls), which :func:`hash_columns` then mixes.
    ``templates`` must match the atom layout (:data:`BASE` or :data:`WITH_CLUSTERS`).
    """
    c0, c1, c2, c3 = templates.columns
    with np.errstate(over="ignore"):
        key = templates.ids * _MIX + atom_vectors[..., c0]
        key = key * _MIX + atom_vectors[..., c1]
        key = key * _MIX + atom_vectors[..., c2]
        key = key * _MIX + atom_vectors[..., c3]
    return hash_columns(0, key, n_bits=n_bits)


def features(state: State, atoms: NDArray[np.int64], n_bits: int, templates: TemplateSet = BASE
             ) -> NDArray[np.int64]:
    """Hashed feature ids of ``state`` (one per template of ``templates``)."""
    return hash_atoms(config_atoms(state, atoms), n_bits, templates)


# ---------------------------------------------------------------------- batches of states


def stack_buffer_tokens(state: State) -> tuple[int, int, int, int, int, int]:
    """``s0 s1 s2 b0 b1 b2`` of ``state`` (``-1`` for an empty slot), as in :func:`config_atoms`."""
    stack = state.stack
    depth = len(stack)
    return (
        stack[-1] if depth > 0 else NONE,
        stack[-2] if depth > 1 else NONE,
        stack[-3] if depth > 2 else NONE,
        state.b(0),
        state.b(1),
        state.b(2),
    )


_SIDE = np.array([0, 1, 0, 1, 0], dtype=np.intp)
"""For ``s0l s0r s1l s1r b0l`` (and the valencies ``s0.vl s0.vr s1.vl s1.vr b0.vl``): 0 left, 1 right."""
_PARENT = np.array([0, 0, 1, 1, 3], dtype=np.intp)
"""For the same five: their word's column among ``s0 s1 s2 b0 b1 b2``."""


@dataclass(slots=True)
class StateBank:
    """The arrays of a batch of states, sentence after sentence in shared storage.

    Sentence ``i`` (``n`` words) owns columns ``start[i] .. start[i]+n+1``: its words
    ``0..n``, then its *absent* slot ``absent[i] = start[i]+n+1`` where every attribute is
    :data:`ABSENT` (and there is no child), which a missing position reads.

    Attributes:
        atoms: ``(4, total)`` form, UPOS, lemma, FEATS ids (the sentences' atom matrices).
        labels: ``(total,)`` arc label ids (``-1`` until attached).
        children: ``(2, total)`` leftmost and rightmost child, as word indices (``-1``: none).
        valency: ``(2, total)`` number of left and right children.
        start, absent: ``(n_sentences,)`` first and absent column of each sentence.
    """

    atoms: NDArray[np.int64]
    labels: NDArray[np.intp]
    children: NDArray[np.intp]
    valency: NDArray[np.intp]
    start: NDArray[np.intp]
    absent: NDArray[np.intp]

    @classmethod
    def build(cls, atoms: Sequence[NDArray[np.int64]]) -> StateBank:
        """Storage for sentences given by their ``(4, n+2)`` atom matrices (last column absent)."""
        sizes = np.array([a.shape[1] for a in atoms], dtype=np.intp)
        start = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.intp)
        total = int(sizes.sum())
        return cls(
            atoms=np.concatenate(atoms, axis=1) if atoms else np.zeros((4, 0), dtype=np.int64),
            labels=np.full(total, ABSENT, dtype=np.intp),
            children=np.full((2, total), NONE, dtype=np.intp),
            valency=np.full((2, total), ABSENT, dtype=np.intp),
            start=start,
            absent=start + sizes - 1,
        )

    def bind(self, sentence: int, state: State) -> None:
        """Copy ``state``'s labels, children and valencies into sentence ``sentence``'s columns
        and make the state use views of them (so its moves update the bank in place)."""
        begin = int(self.start[sentence])
        end = begin + len(state.heads)
        self.labels[begin:end] = state.labels
        self.children[0, begin:end], self.children[1, begin:end] = state.leftmost, state.rightmost
        self.valency[0, begin:end], self.valency[1, begin:end] = state.n_left, state.n_right
        state.labels = self.labels[begin:end]
        state.leftmost, state.rightmost = self.children[0, begin:end], self.children[1, begin:end]
        state.n_left, state.n_right = self.valency[0, begin:end], self.valency[1, begin:end]


def bank_atoms(bank: StateBank, sentences: NDArray[np.intp], tokens: NDArray[np.intp]) -> NDArray[np.int64]:
    """The atom vectors of a batch of states, ``(m, n_atoms)``; row ``j`` equals
    :func:`config_atoms` of the state of sentence ``sentences[j]``.

    Args:
        bank: the states' storage (each state bound with :meth:`StateBank.bind`).
        sentences: ``(m,)`` each state's sentence number in the bank.
        tokens: ``(m, 6)`` each state's :func:`stack_buffer_tokens`.
    """
    start = bank.start[sentences][:, None]
    absent = bank.absent[sentences][:, None]
    columns = np.where(tokens >= 0, tokens + start, absent)  # (m, 6)
    parents = columns[:, _PARENT]  # (m, 5)
    kids = bank.children[_SIDE, parents]
    positions = np.concatenate((columns, np.where(kids >= 0, kids + start, absent)), axis=1)  # (m, 11)
    words = bank.atoms[:, positions].transpose(1, 0, 2).reshape(len(tokens), -1)  # (m, 11 * rows)
    s0, b0 = tokens[:, 0], tokens[:, 3]
    distance = np.where((s0 >= 0) & (b0 >= 0), bucket_distance(b0 - s0), ABSENT)
    return np.concatenate(
        (
            words,
            bank.labels[positions],
            distance[:, None],
            bank.valency[_SIDE, parents],
            np.zeros((len(tokens), 1), dtype=np.int64),
        ),
        axis=1,
        dtype=np.int64,
    )
