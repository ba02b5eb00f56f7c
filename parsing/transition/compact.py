"""Compact forms of a fitted transition parser's tables, read exactly as the dense ones.

A fitted :class:`~parsing.transition.parser.TransitionParser` holds a bucket → row map over
all ``2**n_bits`` hash buckets (16 MB at 22 bits, a few percent of them used) and a weight
matrix ``(n_rows, n_classes)`` of which about 3% of entries are non-zero (a feature row is
updated for the few classes it was ever wrong or right about). :class:`BucketRows` keeps only
the used buckets, :class:`SparseRows` only the non-zero weights; indexing either gives exactly
what indexing the dense array gives (``rows[buckets]``, ``weights[rows]``), so the decoder's
scores (summed over the same dense ``(m, templates, classes)`` block) are bit for bit the same.

Training works on dense arrays; :meth:`TransitionParser.fit` ends with the compact forms, and
a warm start turns them dense again (:meth:`BucketRows.dense`, :meth:`SparseRows.dense`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64] | NDArray[np.int32] | NDArray[np.intp]


@dataclass(frozen=True, slots=True, eq=False)
class BucketRows:
    """A bucket → row map storing only the buckets that have a row.

    Attributes:
        buckets: the used buckets, sorted, shape ``(k,)`` int32.
        rows: their rows, shape ``(k,)`` int32 (every other bucket maps to row 0).
        size: number of buckets (``2**n_bits``).

    Examples:
        >>> dense = np.array([0, 3, 0, 0, 1, 2], dtype=np.int32)
        >>> compact = BucketRows.from_dense(dense)
        >>> compact[np.array([[1, 2], [5, 4]])].tolist(), compact.dense().tolist() == dense.tolist()
        ([[3, 0], [2, 1]], True)
    """

    buckets: NDArray[np.int32]
    rows: NDArray[np.int32]
    size: int

    @classmethod
    def from_dense(cls, rows: NDArray[np.int32]) -> BucketRows:
        """The compact form of a dense map ``rows`` (shape ``(2**n_bits,)``, 0: no row)."""
        used = np.flatnonzero(rows).astype(np.int32)
        return cls(used, rows[used].astype(np.int32), len(rows))

    def __getitem__(self, buckets: IntArray) -> NDArray[np.int32]:
        """The row of every bucket (any shape), as the dense map's ``rows[buckets]``."""
        if not len(self.buckets):
            return np.zeros(np.shape(buckets), dtype=np.int32)
        where = np.minimum(np.searchsorted(self.buckets, buckets), len(self.buckets) - 1)
        found = np.where(self.buckets[where] == buckets, self.rows[where], 0)
        return found.astype(np.int32)

    def max(self) -> int:
        """The highest row."""
        return int(self.rows.max(initial=0))

    def __array__(self, dtype: object = None, copy: object = None) -> NDArray[np.int32]:
        """``np.asarray`` gives :meth:`dense` (so arrays and compact maps compare)."""
        return self.dense()

    def dense(self) -> NDArray[np.int32]:
        """The dense map, shape ``(size,)``."""
        rows = np.zeros(self.size, dtype=np.int32)
        rows[self.buckets] = self.rows
        return rows


@dataclass(frozen=True, slots=True, eq=False)
class SparseRows:
    """A weight matrix ``(n_rows, n_classes)`` storing its non-zero entries row by row (CSR).

    Attributes:
        starts: row ``r``'s entries are ``starts[r]:starts[r+1]``, shape ``(n_rows + 1,)``.
        columns: their columns, ``int32``.
        values: their values, in the dense matrix's dtype.
        n_columns: number of columns.

    Examples:
        >>> dense = np.array([[0, 0, 0], [1, 0, 2], [0, 3, 0]], dtype=np.float32)
        >>> compact = SparseRows.from_dense(dense)
        >>> bool((compact[np.array([[2, 1], [0, 2]])] == dense[np.array([[2, 1], [0, 2]])]).all())
        True
    """

    starts: NDArray[np.int64]
    columns: NDArray[np.int32]
    values: NDArray[np.float32]
    n_columns: int

    @classmethod
    def from_dense(cls, weights: NDArray[np.float32]) -> SparseRows:
        """The compact form of ``weights`` (shape ``(n_rows, n_classes)``)."""
        rows, columns = np.nonzero(weights)
        starts = np.zeros(len(weights) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(weights)), out=starts[1:])
        return cls(starts, columns.astype(np.int32), weights[rows, columns], weights.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_classes)``, as the dense matrix's."""
        return len(self.starts) - 1, self.n_columns

    def __getitem__(self, rows: IntArray) -> NDArray[np.float32]:
        """The dense rows ``rows`` (any shape ``S``), shape ``S + (n_classes,)``: exactly
        the dense matrix's ``weights[rows]``."""
        flat = np.asarray(rows, dtype=np.int64).reshape(-1)
        first = self.starts[flat]
        counts = self.starts[flat + 1] - first
        out = np.zeros((len(flat), self.n_columns), dtype=self.values.dtype)
        total = int(counts.sum())
        if total:
            owner = np.repeat(np.arange(len(flat)), counts)
            offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            entries = np.repeat(first, counts) + offsets
            out[owner, self.columns[entries]] = self.values[entries]
        return out.reshape(*np.shape(rows), self.n_columns)

    def __array__(self, dtype: object = None, copy: object = None) -> NDArray[np.float32]:
        """``np.asarray`` gives :meth:`dense` (so arrays and compact matrices compare)."""
        return self.dense()

    def dense(self) -> NDArray[np.float32]:
        """The dense matrix."""
        return self[np.arange(len(self.starts) - 1)]
