"""Base-feature keys and meta features of the first-order graph parser (Chen et al. 2013).

The meta features smooth *lexical* base features, so their keys must tell apart words the
labelled data never saw: they are computed from two rows appended to the parser's token table
(:func:`meta_rows`), a stable 63-bit key of each lowercased form and of each UPOS (not the
encoder's ids, which send every rare word to one unknown id). The base templates are the
paper's word-bearing first-order ones (Table 1(a), each ``[wp]`` slot expanded into its word
and POS variants, the all-POS ones left out as in the paper's final parser: §4.2.1), each
conjoined with the arc's direction:

    hw dw · hw dp · hp dw · hw · dw dp · dw · hw hp dw dp · hw hp dp · hw dw dp · hw hp dw

For every candidate arc and base template, the feature's class ``c`` in a
:class:`~parsing.meta.table.MetaTable` (Other when absent) gives three meta features (Table 2):
CORE ``[c_t]``, WithPOS ``[c_t, hp]`` and WithWORD ``[c_t, hw]``, the last only when the head
word is one of the table's ``head_words`` (the null feature otherwise).

Conventions: arrays over arcs are indexed ``[dep, head]``; index 0 is ROOT.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from parsing.features import hash_columns
from parsing.graph.templates import IntArray, null_index
from parsing.meta.table import MetaTable
from parsing.types import Heads, Sentence

META_BASE_TEMPLATES = (
    "hw dw", "hw dp", "hp dw", "hw", "dw dp", "dw", "hw hp dw dp", "hw hp dp", "hw dw dp", "hw hp dw",
)  # fmt: skip
"""Word-bearing first-order base templates (module docstring), each also conjoined with direction."""

META_ROWS = 2
"""Rows :func:`meta_rows` appends to a token table: word keys, then UPOS keys."""

_FULL_BITS = 63
_ROW = {"w": 0, "p": 1}  # offsets within the meta rows


@lru_cache(maxsize=1 << 18)
def string_key(text: str) -> int:
    """A stable 63-bit key of a string (blake2b; the same in every process).

    Examples:
        >>> string_key("dog") == string_key("dog") != string_key("dogs")
        True
    """
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little") >> 1


def word_keys(forms: Sequence[str]) -> IntArray:
    """Keys of lowercased forms, shape ``(len(forms),)``."""
    return np.fromiter((string_key(f.lower()) for f in forms), dtype=np.int64, count=len(forms))


def meta_rows(sentence: Sentence) -> IntArray:
    """The word and UPOS key rows of a sentence (ROOT included): shape ``(2, n+1)``."""
    tags = np.fromiter((string_key("\x00" + p) for p in sentence.upos), dtype=np.int64,
                       count=len(sentence.upos))
    return np.stack([word_keys(sentence.forms), tags])


def _role_keys(rows: IntArray) -> tuple[IntArray, IntArray]:
    """Per-template head-side and dependent-side keys at every position: ``(T, n+1)`` each."""
    size = rows.shape[1]
    head = np.zeros((len(META_BASE_TEMPLATES), size), np.int64)
    dep = np.zeros_like(head)
    for t, template in enumerate(META_BASE_TEMPLATES):
        fields = template.split()
        head[t] = hash_columns(1000 + t, *(rows[_ROW[f[1]]] for f in fields if f[0] == "h"),
                               np.zeros(size, np.int64), n_bits=_FULL_BITS)
        dep[t] = hash_columns(2000 + t, *(rows[_ROW[f[1]]] for f in fields if f[0] == "d"),
                              np.zeros(size, np.int64), n_bits=_FULL_BITS)
    return head, dep


def _direction_keys(direction: IntArray) -> IntArray:
    """Key of each template conjoined with a direction (``sign(head - dep)``): ``(..., T)``."""
    templates = np.arange(len(META_BASE_TEMPLATES), dtype=np.int64)
    return hash_columns(3000, templates, direction[..., None], n_bits=_FULL_BITS)


def arc_keys(rows: IntArray) -> IntArray:
    """The base feature key of every candidate arc and template: ``(n+1, n+1, T)``, ``[dep, head]``."""
    head, dep = _role_keys(rows)
    position = np.arange(rows.shape[1], dtype=np.int64)
    direction = np.sign(position[None, :] - position[:, None])
    keys: IntArray = head.T[None, :, :] ^ dep.T[:, None, :] ^ _direction_keys(direction)
    return keys


def tree_keys(rows: IntArray, heads: Heads) -> IntArray:
    """The base feature keys of a tree's arcs: ``(n, T)`` (row ``i`` is word ``i+1``'s arc)."""
    head, dep = _role_keys(rows)
    heads = np.asarray(heads)
    words = np.arange(1, len(heads))
    direction = np.sign(heads[1:] - words)
    keys: IntArray = head[:, heads[1:]].T ^ dep[:, 1:].T ^ _direction_keys(direction)
    return keys


def n_meta_arc_features() -> int:
    """Meta features per arc: ``3 * len(META_BASE_TEMPLATES)`` (CORE, WithPOS, WithWORD)."""
    return 3 * len(META_BASE_TEMPLATES)


def meta_arc_features(rows: IntArray, table: MetaTable, *, n_bits: int) -> IntArray:
    """Meta feature indices of every arc (module docstring).

    Args:
        rows: the sentence's meta rows (:func:`meta_rows`), ``(2, n+1)``.
        table: the classes of the base features.
        n_bits: weight vectors have ``2**n_bits + 1`` entries (the last is the null feature).

    Returns:
        Shape ``(n+1, n+1, 3T)``, indexed ``[dep, head]``: CORE for every template, then
        WithPOS, then WithWORD (the null feature where the head word is not a head word).
    """
    classes = table.classify(arc_keys(rows)).astype(np.int64)  # (n+1, n+1, T)
    templates = np.arange(len(META_BASE_TEMPLATES), dtype=np.int64)
    head_word, head_tag = rows[_ROW["w"]][None, :, None], rows[_ROW["p"]][None, :, None]
    core = hash_columns(4000, templates, classes, n_bits=n_bits)
    with_pos = hash_columns(4001, templates, classes, head_tag, n_bits=n_bits)
    with_word = hash_columns(4002, templates, classes, head_word, n_bits=n_bits)
    known = table.is_head_word(rows[_ROW["w"]])[None, :, None]
    with_word = np.where(known, with_word, null_index(n_bits))
    return np.concatenate([core, with_pos, with_word], axis=-1)
