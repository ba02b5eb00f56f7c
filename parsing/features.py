"""Shared feature machinery: string vocabularies and stable, vectorised feature hashing.

Parsers turn a sentence's columns into integer ids once (:class:`Vocabulary`), then build
every feature of every candidate (arc or configuration) at once with :func:`hash_columns`,
which mixes a template number and integer columns into indices of a weight vector of
``2**n_bits`` entries. The hash is a fixed 64-bit mix (not Python's salted ``hash``), so a
saved model gives identical output in any process.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

UNKNOWN = 0
"""Id of a value not seen in training (or seen fewer than ``min_count`` times)."""

_MULTIPLIER = np.uint64(0x100000001B3)
_SEED = np.uint64(0xCBF29CE484222325)
_MIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_SHIFT = np.uint64(33)


class Vocabulary:
    """A frozen map from strings to dense ids ``1..len``; unknown strings get :data:`UNKNOWN`.

    Examples:
        >>> vocab = Vocabulary.build(["a", "b", "a"], min_count=1)
        >>> vocab.ids(["a", "z"]).tolist()
        [1, 0]
    """

    def __init__(self, index: dict[str, int]) -> None:
        self.index = index

    @classmethod
    def build(cls, values: Iterable[str], *, min_count: int = 1) -> Vocabulary:
        """Vocabulary of the values seen at least ``min_count`` times, most frequent first."""
        counts = Counter(values)
        kept = sorted((v for v, c in counts.items() if c >= min_count), key=lambda v: (-counts[v], v))
        return cls({value: number for number, value in enumerate(kept, start=1)})

    def extended(self, values: Iterable[str], *, min_count: int = 1) -> Vocabulary:
        """A new vocabulary keeping every id of this one and giving the values seen at least
        ``min_count`` times in ``values`` but not known here the next ids, most frequent
        first (for warm starts: weights indexed by the old ids stay valid).

        Examples:
            >>> Vocabulary.build(["a", "b"]).extended(["c", "a", "c", "d"]).index
            {'a': 1, 'b': 2, 'c': 3, 'd': 4}
        """
        counts = Counter(v for v in values if v not in self.index)
        kept = sorted((v for v, c in counts.items() if c >= min_count), key=lambda v: (-counts[v], v))
        return Vocabulary({**self.index, **{v: n for n, v in enumerate(kept, start=len(self.index) + 1)}})

    def __len__(self) -> int:
        """Number of ids including :data:`UNKNOWN`."""
        return len(self.index) + 1

    def ids(self, values: Sequence[str]) -> NDArray[np.int64]:
        """Ids of ``values``, shape ``(len(values),)``."""
        get = self.index.get
        return np.fromiter((get(v, UNKNOWN) for v in values), dtype=np.int64, count=len(values))


def hash_columns(template: int, *columns: NDArray[np.int64] | int, n_bits: int) -> NDArray[np.int64]:
    """Feature indices for one template, vectorised over candidates.

    Args:
        template: the template's number; distinct templates land in different places.
        columns: integer arrays of one shape (or scalars, broadcast); each candidate's values.
        n_bits: the weight vector has ``2**n_bits`` entries.

    Returns:
        Indices in ``[0, 2**n_bits)``, the broadcast shape of ``columns``.

    Examples:
        >>> a = hash_columns(3, np.array([1, 2]), np.array([5, 5]), n_bits=20)
        >>> a.shape, bool(a[0] != a[1])
        ((2,), True)
    """
    arrays = [np.asarray(c, dtype=np.int64) for c in columns]
    shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
    with np.errstate(over="ignore"):
        h = np.full(shape, _SEED ^ np.uint64(template), dtype=np.uint64) * _MULTIPLIER
        for column in arrays:
            h = (h ^ column.astype(np.uint64)) * _MULTIPLIER
        h ^= h >> _SHIFT
        h *= _MIX_1
        h ^= h >> _SHIFT
        h *= _MIX_2
        h ^= h >> _SHIFT
    mask = np.uint64((1 << n_bits) - 1)
    return (h & mask).astype(np.int64)


def bucket_distance(distance: NDArray[np.int64]) -> NDArray[np.int64]:
    """Signed distance ``head - dep`` bucketed: exact up to 5, then 6-10 and 11+ per side.

    Examples:
        >>> bucket_distance(np.array([-12, -3, 1, 7])).tolist()
        [-7, -3, 1, 6]
    """
    magnitude = np.abs(distance)
    bucket = np.where(magnitude <= 5, magnitude, np.where(magnitude <= 10, 6, 7))
    return np.sign(distance) * bucket
