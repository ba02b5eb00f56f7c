"""The explicit features of the ISBN parser (Titov 2008 §5.2, the B-terms of eq. 3.10).

Every feature is a row of one embedding table ``E``; its contribution to a step's hidden
pre-activation is that row. A *template* is a (configuration position, attribute) pair:

* top of the stack ``s0``: FORM, LEMMA, UPOS and each FEATS component (up to ``max_feats``);
* sub-top ``s1``: UPOS;
* front of the buffer ``b0``: FORM, LEMMA, UPOS and each FEATS component;
* head of ``s0``: FORM;
* look-ahead (not in the generative thesis model; the discriminative model may read the
  buffer): ``b1`` FORM and UPOS, ``b2`` UPOS, when ``lookahead`` is on;
* DEPREL of ``s0``, of its head, of its leftmost left and rightmost right child, and of the
  leftmost child of ``b0`` (:data:`LABEL_SLOTS`);
* with ``extended`` (not in the thesis): FORM of ``s1``, UPOS of ``s2``, ``b3``, the head of
  ``s0``, the leftmost and rightmost children of ``s0`` and the leftmost child of ``b0``, and the
  last three characters of ``s0``, ``b0`` and ``b1``;
* the previous move (:data:`N_MOVES` values plus "none"): the decision taken at the step
  just before, which the relations always link to (Titov's decision B-terms, reduced to it).

Attribute values seen fewer than ``min_count`` times in training are unknown (Titov's
frequency cut-off). Each attribute has ids ``0`` (unknown), ``1..V-1`` (known), ``V`` (no word
there) and ``V+1`` (ROOT). An absent FEATS component points at :meth:`ISBNEncoder.zero_row`,
the last row of ``E``, which stays zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.features import Vocabulary
from parsing.isbn.system import N_MOVES
from parsing.types import Sentence

IntArray = NDArray[np.int64]

FORM, LEMMA, UPOS, SUFFIX = 0, 1, 2, 3
"""Token-table columns (SUFFIX: last three characters of the lower-cased FORM); FEATS
components follow from column 4."""
_FIXED = 4

S0, S1, B0, B1, B2, HS0, S2, B3, LC_S0, RC_S0, LC_B0 = range(11)
"""Configuration positions read by the token templates (:func:`parsing.isbn.structure.describe`)."""
N_POSITIONS = 11

LABEL_SLOTS = 5
"""DEPREL of s0, head of s0, leftmost left child of s0, rightmost right child of s0, leftmost
child of b0."""


def _form(form: str) -> str:
    return form.lower()


def _suffix(form: str) -> str:
    return form.lower()[-3:]


def _components(feats: str) -> list[str]:
    return [] if feats in ("_", "") else feats.split("|")


@dataclass(frozen=True, slots=True)
class ISBNEncoder:
    """Vocabularies and the layout of the embedding table.

    Attributes:
        forms, lemmas, tags, feats, suffixes: vocabularies (lower-cased FORM, LEMMA, UPOS,
            FEATS components ``Name=Value``, last three characters of FORM), built with the
            frequency cut-off.
        n_labels: number of (pseudo-projective) labels.
        max_feats: FEATS components read per word.
        lookahead: also read ``b1`` and ``b2``.
        extended: also read the ``extended`` templates (module docstring).
    """

    forms: Vocabulary
    lemmas: Vocabulary
    tags: Vocabulary
    feats: Vocabulary
    suffixes: Vocabulary
    n_labels: int
    max_feats: int = 8
    lookahead: bool = True
    extended: bool = False

    @classmethod
    def build(cls, sentences: Sequence[Sentence], n_labels: int, *, min_count: int,
              max_feats: int = 8, lookahead: bool = True, extended: bool = False) -> ISBNEncoder:
        """Vocabularies of ``sentences`` (values seen at least ``min_count`` times; UPOS: all)."""
        words = [s for s in sentences]
        return cls(
            Vocabulary.build((_form(f) for s in words for f in s.forms[1:]), min_count=min_count),
            Vocabulary.build((lemma for s in words for lemma in s.lemmas[1:]), min_count=min_count),
            Vocabulary.build(tag for s in words for tag in s.upos[1:]),
            Vocabulary.build((c for s in words for f in s.feats[1:] for c in _components(f)),
                             min_count=min_count),
            Vocabulary.build((_suffix(f) for s in words for f in s.forms[1:]), min_count=min_count),
            n_labels, max_feats, lookahead, extended,
        )

    # --- layout --------------------------------------------------------------------

    def _column_sizes(self) -> list[int]:
        """Id-space size of each token-table column (unknown, known, none, ROOT)."""
        return [len(self.forms) + 2, len(self.lemmas) + 2, len(self.tags) + 2, len(self.suffixes) + 2,
                *[len(self.feats) + 2] * self.max_feats]

    def token_templates(self) -> list[tuple[int, int]]:
        """The (position, column) pairs read at each step."""
        word = [FORM, LEMMA, UPOS, *range(_FIXED, _FIXED + self.max_feats)]
        templates = [(S0, c) for c in word] + [(S1, UPOS)] + [(B0, c) for c in word] + [(HS0, FORM)]
        if self.lookahead:
            templates += [(B1, FORM), (B1, UPOS), (B2, UPOS)]
        if self.extended:
            templates += [(S1, FORM), (S2, UPOS), (B3, UPOS), (HS0, UPOS), (LC_S0, UPOS), (RC_S0, UPOS),
                          (LC_B0, UPOS), (S0, SUFFIX), (B0, SUFFIX), (B1, SUFFIX)]
        return templates

    def offsets(self) -> tuple[IntArray, IntArray, int, int]:
        """First ``E`` row of each token template, of each label slot, of the previous-move
        block, and the number of rows of ``E`` (the last one is :meth:`zero_row`)."""
        sizes = self._column_sizes()
        token_sizes = [sizes[column] for _, column in self.token_templates()]
        starts = np.concatenate([[0], np.cumsum(token_sizes)]).astype(np.int64)
        label_start = int(starts[-1])
        label_starts = label_start + (self.n_labels + 1) * np.arange(LABEL_SLOTS, dtype=np.int64)
        move_start = label_start + (self.n_labels + 1) * LABEL_SLOTS
        return starts[:-1], label_starts, move_start, move_start + N_MOVES + 1 + 1

    def n_rows(self) -> int:
        """Rows of ``E``."""
        return self.offsets()[3]

    def zero_row(self) -> int:
        """The row of ``E`` that stays zero (absent FEATS components)."""
        return self.n_rows() - 1

    def n_features(self) -> int:
        """Features per step: token templates, label slots, previous move."""
        return len(self.token_templates()) + LABEL_SLOTS + 1

    def word_templates(self) -> tuple[NDArray[np.bool_], NDArray[np.bool_], IntArray]:
        """Which feature columns read a FORM and which a LEMMA, shape ``(K,)`` each, and the
        ``E`` row of each column's unknown value (word dropout replaces a form by it)."""
        templates = self.token_templates()
        extra = self.n_features() - len(templates)
        columns = np.array([c for _, c in templates] + [-1] * extra)
        unknown = np.concatenate([self.offsets()[0], np.zeros(extra, dtype=np.int64)])
        return columns == FORM, columns == LEMMA, unknown

    # --- encoding ------------------------------------------------------------------

    def tokens(self, sentences: Sequence[Sentence]) -> tuple[IntArray, IntArray]:
        """The token table ``(1 + sum(n+1), 3 + max_feats)`` (row 0: no word; then each
        sentence from its ROOT) with ``-1`` for absent FEATS components, and each sentence's
        ROOT row, shape ``(S,)``."""
        sizes = self._column_sizes()
        lengths = np.array([len(s.forms) for s in sentences], dtype=np.int64)
        offsets = 1 + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        table = np.full((1 + int(lengths.sum()), _FIXED + self.max_feats), -1, dtype=np.int64)
        table[0, :_FIXED] = [size - 2 for size in sizes[:_FIXED]]
        for s, start in zip(sentences, offsets.tolist(), strict=True):
            n = len(s.forms) - 1
            rows = slice(start + 1, start + 1 + n)
            table[start, :_FIXED] = [size - 1 for size in sizes[:_FIXED]]
            table[rows, FORM] = self.forms.ids([_form(f) for f in s.forms[1:]])
            table[rows, LEMMA] = self.lemmas.ids(s.lemmas[1:])
            table[rows, UPOS] = self.tags.ids(s.upos[1:])
            table[rows, SUFFIX] = self.suffixes.ids([_suffix(f) for f in s.forms[1:]])
            for i, feats in enumerate(s.feats[1:], start=start + 1):
                parts = _components(feats)[: self.max_feats]
                if parts:
                    table[i, _FIXED : _FIXED + len(parts)] = self.feats.ids(parts)
        return table, offsets

    def feature_ids(self, table: IntArray, rows: IntArray, labels: IntArray, previous: IntArray) -> IntArray:
        """``E`` rows of the features of ``N`` steps, shape ``(N, n_features())``.

        Args:
            table: the token table of :meth:`tokens`.
            rows: token-table rows of the positions, shape ``(N, N_POSITIONS)`` (0: no word).
            labels: label ids (``0``: none, ``1..n_labels``) of the label slots, ``(N, 5)``.
            previous: the previous move (``N_MOVES``: none), shape ``(N,)``.
        """
        starts, label_starts, move_start, n_rows = self.offsets()
        templates = self.token_templates()
        positions = np.array([p for p, _ in templates], dtype=np.int64)
        columns = np.array([c for _, c in templates], dtype=np.int64)
        values = table[rows[:, positions], columns]
        token_ids = np.where(values >= 0, values + starts, n_rows - 1)
        return np.concatenate([token_ids, labels + label_starts, (previous + move_start)[:, None]], axis=1)
