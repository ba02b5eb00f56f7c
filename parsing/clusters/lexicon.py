"""A word clustering as a lexicon: every word's bit-string path in a binary cluster tree.

A hierarchical clustering (Brown et al. 1992; Koo, Carreras & Collins 2008) gives each word a
path from the root of a binary tree, ``0`` for a left branch and ``1`` for a right one; a prefix
of ``k`` bits names the word's cluster at depth ``k`` (short prefixes act like coarse tags, the
full path like a word class). Words are looked up after :func:`normalize_word` (lowercased,
digits replaced by ``0``); words the clustering never saw get the path of
:data:`UNKNOWN_WORD`, the stand-in that rare words were clustered as.

A lexicon is saved without pickle through :mod:`parsing.persist` (it is in the codec's
allow-list), alone (:meth:`ClusterLexicon.save`) or inside a parser that uses it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from parsing.persist import load_model, save_model

UNKNOWN_WORD = "<unk>"
"""The stand-in for words seen fewer than a clustering's ``min_count`` times (and unseen ones)."""

PREFIX_BITS = (4, 6, None)
"""The path prefixes parsers read (Koo et al. 2008): 4 bits, 6 bits, the full path (``None``)."""

_DIGIT = re.compile(r"\d")


def normalize_word(form: str) -> str:
    """The form a clustering sees: lowercased, every digit replaced by ``0``.

    Examples:
        >>> normalize_word("Year-1984")
        'year-0000'
    """
    return _DIGIT.sub("0", form.lower())


@dataclass(slots=True)
class ClusterLexicon:
    """Normalised word → bit-string path of a binary cluster tree.

    Attributes:
        paths: the path of every clustered word (normalised), :data:`UNKNOWN_WORD` included
            when rare words were clustered; paths form a prefix code (no path is a proper
            prefix of another).
        method: how the clustering was made (``"brown"``, ``"context"``), for display.
        seed: the seed it was made with.

    Examples:
        >>> lexicon = ClusterLexicon({"the": "00", "a": "01", "run": "1"})
        >>> lexicon.path("The"), lexicon.prefix("a", 1), lexicon.prefix("run", 4)
        ('00', '0', '1')
    """

    paths: dict[str, str]
    method: str = ""
    seed: int = 0
    _codes_cache: dict[int, dict[str, int]] = field(default_factory=dict, init=False, repr=False,
                                                    compare=False)

    def __len__(self) -> int:
        """Number of clustered words."""
        return len(self.paths)

    def path(self, word: str) -> str:
        """The full path of ``word`` (normalised); unseen words get :data:`UNKNOWN_WORD`'s path,
        or ``""`` when the clustering has none."""
        return self.paths.get(normalize_word(word), self.paths.get(UNKNOWN_WORD, ""))

    def prefix(self, word: str, bits: int) -> str:
        """The first ``bits`` bits of ``word``'s path (the whole path when it is shorter)."""
        return self.path(word)[:bits]

    def codes(self, words: Sequence[str], bits: int | None = None) -> NDArray[np.int64]:
        """Integer ids of the words' path prefixes (full paths when ``bits`` is ``None``), for
        feature hashing: shape ``(len(words),)``, ``1..`` for prefixes in the lexicon (the
        same id in every process: prefixes are numbered in sorted order) and 0 for a word
        without a path."""
        key = -1 if bits is None else bits
        table = self._codes_cache.get(key)
        if table is None:
            cut = {word: path if bits is None else path[:bits] for word, path in self.paths.items()}
            number = {value: i for i, value in enumerate(sorted(set(cut.values())), start=1)}
            table = {word: number[value] for word, value in cut.items()}
            self._codes_cache[key] = table
        unknown = table.get(UNKNOWN_WORD, 0)
        return np.fromiter((table.get(normalize_word(w), unknown) for w in words), dtype=np.int64,
                           count=len(words))

    def code_rows(self, forms: Sequence[str]) -> NDArray[np.int64]:
        """The 4-bit prefix, 6-bit prefix and full path ids (:meth:`codes`) of a sentence's words
        (``forms`` without ROOT), with ``-1`` for ROOT first: shape ``(3, len(forms) + 1)``."""
        rows = [np.concatenate([[-1], self.codes(forms, bits)]) for bits in PREFIX_BITS]
        return np.stack(rows).astype(np.int64)

    def save(self, path: str | Path) -> None:
        """Write the lexicon to ``path`` (arrays plus JSON, :mod:`parsing.persist`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path) -> ClusterLexicon:
        """Read a lexicon written by :meth:`save`."""
        lexicon: ClusterLexicon = load_model(path, cls)
        return lexicon


def is_prefix_code(paths: Sequence[str]) -> bool:
    """True when the distinct paths are non-empty bit strings none of which is a proper
    prefix of another (the leaves of a binary tree).

    Examples:
        >>> is_prefix_code(["00", "01", "1", "1"]), is_prefix_code(["0", "01"])
        (True, False)
    """
    distinct = sorted(set(paths))
    if any(not p or set(p) - {"0", "1"} for p in distinct):
        return False
    return all(not b.startswith(a) for a, b in zip(distinct, distinct[1:], strict=False))
