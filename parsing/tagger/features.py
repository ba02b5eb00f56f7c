"""Feature extraction of :mod:`parsing.tagger.model`: stable hashed feature keys per word.

Each word *type* is hashed once into a row of 64-bit keys (form, lowercase form, prefixes
and suffixes of length 1-4, shape, length, flags; ``blake2b``, stable across processes,
unlike the salted built-in ``hash``). A sentence's feature keys are then gathered from the
rows of the word and its neighbours (offsets ±1, ±2, sentence-boundary rows outside the
sentence) and mixed for all positions at once with numpy. :func:`lookup` turns keys into
row ids of a fitted, sorted key table.

Conventions: a :class:`~parsing.types.Sentence` has positions ``0..n``; position 0 is ROOT
and is never featurised, so the forms passed here exclude ROOT and row ``i`` of
:func:`sentence_keys`, shape ``(n, n_templates)``, is word ``i+1``.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

Keys = NDArray[np.uint64]
Ids = NDArray[np.intp]

# Columns of a word type's key row (see _type_keys).
_FORM, _LOWER, _P1, _P2, _P3, _P4, _S1, _S2, _S3, _S4, _SHAPE, _LENGTH, _FLAGS = range(13)
_N_TYPE_KEYS = 13
_PAD = 2  # sentence-boundary rows before and after the words

# (offset, type-key column) of the single templates ...
_SINGLE_TEMPLATES: tuple[tuple[int, int], ...] = (
    (0, _FORM), (0, _LOWER), (0, _P1), (0, _P2), (0, _P3), (0, _P4),
    (0, _S1), (0, _S2), (0, _S3), (0, _S4), (0, _SHAPE), (0, _LENGTH), (0, _FLAGS),
    (-1, _LOWER), (-2, _LOWER), (1, _LOWER), (2, _LOWER),
    (-1, _S1), (-1, _S2), (-1, _S3), (1, _S1), (1, _S2), (1, _S3),
    (-2, _S3), (2, _S3), (-1, _SHAPE), (1, _SHAPE),
)  # fmt: skip
# ... and of the conjoined pairs.
_PAIR_TEMPLATES: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((-1, _LOWER), (0, _LOWER)),
    ((0, _LOWER), (1, _LOWER)),
    ((-1, _S3), (0, _S3)),
    ((0, _S3), (1, _S3)),
)

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SH30, _SH27, _SH31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _hash64(text: str) -> int:
    """A stable 64-bit hash of ``text`` (the same in every process and on every machine)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _mix(keys: Keys) -> Keys:
    """SplitMix64's finaliser applied elementwise: spreads combined keys over 64 bits."""
    keys = keys ^ (keys >> _SH30)
    keys = keys * _M1
    keys = keys ^ (keys >> _SH27)
    keys = keys * _M2
    return keys ^ (keys >> _SH31)


_SINGLE_SALTS = np.array([_hash64(f"single{i}") for i in range(len(_SINGLE_TEMPLATES))],
                         dtype=np.uint64)
_PAIR_SALTS = np.array([_hash64(f"pair{i}") for i in range(len(_PAIR_TEMPLATES))],
                       dtype=np.uint64)
_BIAS_KEY = _hash64("bias")
_BOUNDARY_ROWS = np.array(
    [[_hash64(f"{column}\x1f<boundary{row}>") for column in range(_N_TYPE_KEYS)]
     for row in range(2 * _PAD)],
    dtype=np.uint64,
)


def _char_class(char: str) -> str:
    category = unicodedata.category(char)
    if category[0] == "L":
        return "X" if char.isupper() else "x" if char.islower() else "a"
    if category[0] == "M":
        return "a"
    if category[0] == "N":
        return "d"
    return char


def word_shape(form: str) -> str:
    """The word's character classes with repeats collapsed (``X`` upper, ``x`` lower,
    ``a`` uncased letter or mark, ``d`` digit, other characters as they are).

    Examples:
        >>> word_shape("McDonald's"), word_shape("1,200"), word_shape("e-mail")
        ("XxXx'x", 'd,d', 'x-x')
    """
    classes: list[str] = []
    for char in form:
        char_class = _char_class(char)
        if not classes or classes[-1] != char_class:
            classes.append(char_class)
    return "".join(classes)


@lru_cache(maxsize=1 << 17)
def _type_keys(form: str) -> tuple[int, ...]:
    """The 64-bit keys of one word type's own features, indexed by the ``_FORM``... columns."""
    lower = form.lower()
    flags = "".join(
        "1" if flag else "0"
        for flag in (
            form[:1].isupper(),
            form.isupper(),
            any(char.isdigit() for char in form),
            "-" in form,
            not any(char.isalnum() for char in form),
        )
    )
    values = (
        form, lower, lower[:1], lower[:2], lower[:3], lower[:4],
        lower[-1:], lower[-2:], lower[-3:], lower[-4:],
        word_shape(form), str(min(len(form), 12)), flags,
    )  # fmt: skip
    return tuple(_hash64(f"{column}\x1f{value}") for column, value in enumerate(values))


def sentence_keys(forms: Sequence[str]) -> Keys:
    """Feature keys of every word of a sentence.

    Args:
        forms: the words' forms, ROOT excluded (``n`` strings).

    Returns:
        Shape ``(n, n_templates)``: row ``i`` holds word ``i+1``'s feature keys.
    """
    return batch_keys([forms])


def batch_keys(sentences: Sequence[Sequence[str]]) -> Keys:
    """Feature keys of every word of several sentences at once (the fast path).

    Args:
        sentences: each sentence's forms, ROOT excluded.

    Returns:
        Shape ``(sum of n, n_templates)``: the sentences' :func:`sentence_keys`, stacked.
    """
    lengths = np.array([len(forms) for forms in sentences], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(lengths + 2 * _PAD)[:-1]]).astype(np.intp)
    rows = np.empty((int(lengths.sum()) + 2 * _PAD * len(lengths), _N_TYPE_KEYS), dtype=np.uint64)
    pad = np.arange(_PAD)
    rows[(starts[:, None] + pad).ravel()] = np.tile(_BOUNDARY_ROWS[:_PAD], (len(lengths), 1))
    rows[(starts[:, None] + lengths[:, None] + _PAD + pad).ravel()] = np.tile(
        _BOUNDARY_ROWS[_PAD:], (len(lengths), 1))
    # centre[w]: the row of word w; words of sentence k sit at starts[k] + _PAD + 0..n_k-1
    centre = (np.repeat(starts + _PAD - np.cumsum(lengths) + lengths, lengths)
              + np.arange(int(lengths.sum())))[:, None]
    if len(centre):
        rows[centre[:, 0]] = np.array([_type_keys(f) for forms in sentences for f in forms],
                                      dtype=np.uint64)
    singles = _mix(rows[centre + _SINGLE_OFFSETS, _SINGLE_COLUMNS] ^ _SINGLE_SALTS)
    pairs = _mix(_mix(rows[centre + _LEFT_OFFSETS, _LEFT_COLUMNS] ^ _PAIR_SALTS)
                 ^ rows[centre + _RIGHT_OFFSETS, _RIGHT_COLUMNS])
    bias = np.full((len(centre), 1), _BIAS_KEY, dtype=np.uint64)
    return np.concatenate([bias, singles, pairs], axis=1)


_SINGLE_OFFSETS = np.array([offset for offset, _ in _SINGLE_TEMPLATES])
_SINGLE_COLUMNS = np.array([column for _, column in _SINGLE_TEMPLATES])
(_LEFT_OFFSETS, _LEFT_COLUMNS), (_RIGHT_OFFSETS, _RIGHT_COLUMNS) = (
    np.array([pair[side] for pair in _PAIR_TEMPLATES]).T for side in (0, 1)
)


def lookup(table: Keys, keys: Keys) -> Ids:
    """Row ids of ``keys`` in the sorted ``table`` (+1); 0 for keys not in the table."""
    position = np.searchsorted(table, keys)
    position = np.minimum(position, max(len(table) - 1, 0))
    found = table[position] == keys if len(table) else np.zeros(keys.shape, dtype=bool)
    return np.where(found, position + 1, 0).astype(np.intp)
