"""Compact forms of a fitted transition parser's tables, read exactly as the dense ones.

A fitted :class:`~parsing.transition.parser.TransitionParser` holds a bucket → row map over
all ``2**n_bits`` hash buckets (16 MB at 22 bits, a few percent of them used) and a weight
matrix ``(n_rows, n_classes)`` of which about 3% of entries are non-zero (a feature row is
updated for the few classes it was ever wrong or right about). :class:`BucketRows` keeps only
the used buckets, :class:`SparseRows` only the non-zero weights. Looking buckets up gives
exactly the dense map's rows, and :func:`sum_rows` exactly the dense matrix's row sums, so
the decoder's scores and parses are bit for bit the same. Memory: about 25 MB instead of
about 100 MB for a member of a 20,000-word treebank; speed: about 80% of the dense tables'
(both measured on UD Wolof).

Training works on dense arrays; :meth:`TransitionParser.fit` ends with the compact forms, and
a warm start turns them dense again (:meth:`BucketRows.dense`, :meth:`SparseRows.dense`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64] | NDArray[np.int32] | NDArray[np.intp]


@dataclass(frozen=True, eq=False)
class BucketRows:
    """A bucket → row map storing only the buckets that have a row.

    Attributes:
        buckets: the used buckets, sorted, shape ``(k,)`` int32.
        rows: their rows, shape ``(k,)`` int32 (every other bucket maps to row 0).
        size: number of buckets (``2**n_bits``).

    A lookup finds a bucket among the used ones of its *block* (buckets sharing their high
    bits; about as many blocks as used buckets): a table ``(n_blocks, widest)`` of the low
    bits of each block's used buckets (rebuilt on construction, not stored, about 2 MB) is
    compared with the wanted buckets' low bits in one vectorised step.

    Examples:
        >>> dense = np.array([0, 3, 0, 0, 1, 2], dtype=np.int32)
        >>> compact = BucketRows.from_dense(dense)
        >>> compact[np.array([[1, 2], [5, 4]])].tolist(), compact.dense().tolist() == dense.tolist()
        ([[3, 0], [2, 1]], True)
    """

    buckets: NDArray[np.int32]
    rows: NDArray[np.int32]
    size: int
    _shift: int = field(init=False, repr=False)
    _starts: NDArray[np.int32] = field(init=False, repr=False)
    """Where each block's used buckets start in ``buckets``, ``(n_blocks + 1,)``."""
    _low: NDArray[np.int16] = field(init=False, repr=False)
    """Low bits of each block's used buckets, ``-1`` after the last: ``(n_blocks, widest)``."""

    def __post_init__(self) -> None:
        shift = min(15, max(0, (self.size - 1).bit_length() - len(self.buckets).bit_length() + 1))
        edges = np.arange(((self.size - 1) >> shift) + 2, dtype=np.int64) << shift
        starts = np.searchsorted(self.buckets, edges).astype(np.int32)
        counts = np.diff(starts)
        low = np.full((len(counts), max(1, int(counts.max(initial=0)))), -1, dtype=np.int16)
        slot = np.arange(len(self.buckets)) - np.repeat(starts[:-1], counts)
        low[np.repeat(np.arange(len(counts)), counts), slot] = self.buckets & ((1 << shift) - 1)
        object.__setattr__(self, "_shift", shift)
        object.__setattr__(self, "_starts", starts)
        object.__setattr__(self, "_low", low)

    @classmethod
    def from_dense(cls, rows: NDArray[np.int32]) -> BucketRows:
        """The compact form of a dense map ``rows`` (shape ``(2**n_bits,)``, 0: no row)."""
        used = np.flatnonzero(rows).astype(np.int32)
        return cls(used, rows[used].astype(np.int32), len(rows))

    def __getitem__(self, buckets: IntArray) -> NDArray[np.int32]:
        """The row of every bucket (any shape, each in ``[0, size)``), as the dense map's
        ``rows[buckets]``."""
        wanted = np.asarray(buckets, dtype=np.int64).reshape(-1)
        block = wanted >> self._shift
        low = (wanted & ((1 << self._shift) - 1)).astype(np.int16)
        same = self._low.take(block, axis=0) == low[:, None]  # at most one place per line
        widest = self._low.shape[1]
        kind = np.int8 if widest < 127 else np.int32
        slot = same.view(np.int8).astype(kind, copy=False) @ np.arange(1, widest + 1, dtype=kind)
        found = np.zeros(len(wanted), dtype=np.int32)
        hit = slot > 0
        found[hit] = self.rows[self._starts[block[hit]] + slot[hit] - 1]
        return found.reshape(np.shape(buckets))

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


DENSE_ABOVE = 8
"""Rows with more non-zero entries than this are also kept dense in memory (:class:`SparseRows`)."""


@dataclass(frozen=True, eq=False)
class SparseRows:
    """A weight matrix ``(n_rows, n_classes)`` storing its non-zero entries row by row (CSR).

    Attributes:
        starts: row ``r``'s entries are ``starts[r]:starts[r+1]``, shape ``(n_rows + 1,)``.
        columns: their columns (``int16`` below 32,768 classes, else ``int32``).
        values: their values, in the dense matrix's dtype.
        n_columns: number of columns.

    For scoring, two views are rebuilt on construction (not stored): the few rows with more
    than :data:`DENSE_ABOVE` entries (features of frequent words and tags, scored at almost
    every step; about 6% of rows) as a small dense table, and every row's first
    :data:`DENSE_ABOVE` entries as padded ``(n_rows, DENSE_ABOVE)`` arrays, so a block of
    rows is one copy from the table and one scatter.

    Examples:
        >>> dense = np.array([[0, 0, 0], [1, 0, 2], [0, 3, 0]], dtype=np.float32)
        >>> compact, rows = SparseRows.from_dense(dense), np.array([[2, 1], [0, 2]])
        >>> compact.sum_rows(rows).tolist(), bool((compact.dense() == dense).all())
        ([[1.0, 3.0, 2.0], [0.0, 3.0, 0.0]], True)
    """

    starts: NDArray[np.int32] | NDArray[np.int64]
    columns: NDArray[np.int16] | NDArray[np.int32]
    values: NDArray[np.float32]
    n_columns: int
    _long: NDArray[np.int32] = field(init=False, repr=False)
    """Row → its row in ``_table`` (0: a short row)."""
    _table: NDArray[np.float32] = field(init=False, repr=False)
    """The long rows, dense, after a row of zeros: ``(1 + n_long, n_classes)``."""
    _short_columns: NDArray[np.int16] | NDArray[np.int32] = field(init=False, repr=False)
    """Each row's first :data:`DENSE_ABOVE` entries' columns (padded): ``(n_rows, DENSE_ABOVE)``."""
    _short_values: NDArray[np.float32] = field(init=False, repr=False)
    """Their values; a long row's are rewritten over its dense copy with the same values."""

    def __post_init__(self) -> None:
        counts = np.diff(self.starts)
        owners = np.repeat(np.arange(len(counts)), counts)
        long_rows = np.flatnonzero(counts > DENSE_ABOVE)
        index = np.zeros(len(counts), dtype=np.int32)
        index[long_rows] = np.arange(1, len(long_rows) + 1, dtype=np.int32)
        table = np.zeros((len(long_rows) + 1, self.n_columns), dtype=self.values.dtype)
        mine = index[owners] > 0
        table[index[owners[mine]], self.columns[mine]] = self.values[mine]
        # every row's first DENSE_ABOVE entries, padded by repeating its first entry (writing it
        # again changes nothing); an empty row writes 0 at column 0, where its block row is 0
        place = np.arange(len(owners)) - self.starts[owners]
        first = self.starts[:-1].clip(max=max(len(self.values) - 1, 0))
        has = counts > 0
        columns = np.where(has, self.columns[first] if len(self.values) else 0, 0)
        values = np.where(has, self.values[first] if len(self.values) else 0, 0).astype(self.values.dtype)
        short_columns = np.repeat(columns[:, None], DENSE_ABOVE, axis=1).astype(self.columns.dtype)
        short_values = np.repeat(values[:, None], DENSE_ABOVE, axis=1)
        kept = place < DENSE_ABOVE
        short_columns[owners[kept], place[kept]] = self.columns[kept]
        short_values[owners[kept], place[kept]] = self.values[kept]
        object.__setattr__(self, "_long", index)
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_short_columns", short_columns)
        object.__setattr__(self, "_short_values", short_values)

    @classmethod
    def from_dense(cls, weights: NDArray[np.float32]) -> SparseRows:
        """The compact form of ``weights`` (shape ``(n_rows, n_classes)``)."""
        rows, columns = np.nonzero(weights)
        ends = np.cumsum(np.bincount(rows, minlength=len(weights)))
        bounds = np.concatenate([[0], ends])
        starts = bounds.astype(np.int32) if len(rows) < 2**31 else bounds.astype(np.int64)
        narrow = weights.shape[1] <= np.iinfo(np.int16).max
        kept = columns.astype(np.int16) if narrow else columns.astype(np.int32)
        return cls(starts, kept, weights[rows, columns], weights.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_classes)``, as the dense matrix's."""
        return len(self.starts) - 1, self.n_columns

    def sum_rows(self, rows: IntArray) -> NDArray[np.float32]:
        """Each line's rows added up, shape ``(m, n_classes)`` for ``rows`` ``(m, k)``: exactly the
        dense matrix's ``weights[rows].sum(axis=1)``, summed over the same dense ``(m, k,
        n_classes)`` block (long rows copied from the dense table, short rows' entries
        scattered into its zero row)."""
        rows = np.asarray(rows, dtype=np.int64)
        flat = rows.reshape(-1)
        block = self._table.take(self._long[flat], axis=0)
        cells = self._short_columns.take(flat, axis=0).astype(np.int64)
        cells += (np.arange(len(flat), dtype=np.int64) * self.n_columns)[:, None]
        block.reshape(-1)[cells] = self._short_values.take(flat, axis=0)
        summed: NDArray[np.float32] = block.reshape(*rows.shape, self.n_columns).sum(axis=1)
        return summed

    def __array__(self, dtype: object = None, copy: object = None) -> NDArray[np.float32]:
        """``np.asarray`` gives :meth:`dense` (so arrays and compact matrices compare)."""
        return self.dense()

    def dense(self) -> NDArray[np.float32]:
        """The dense matrix."""
        counts = np.diff(self.starts)
        weights = np.zeros(self.shape, dtype=self.values.dtype)
        weights[np.repeat(np.arange(len(counts)), counts), self.columns] = self.values
        return weights


def sum_rows(weights: NDArray[np.float32] | SparseRows, rows: IntArray) -> NDArray[np.float32]:
    """``weights[rows].sum(axis=1)`` for a dense or compact weight matrix: ``(m, n_classes)``
    for ``rows`` of shape ``(m, k)``."""
    if isinstance(weights, SparseRows):
        return weights.sum_rows(rows)
    summed: NDArray[np.float32] = weights[rows].sum(axis=1)
    return summed
