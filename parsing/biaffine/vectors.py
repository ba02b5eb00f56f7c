"""Pretrained word vectors from a text ``.vec`` file (fastText / word2vec text format); no torch.

Format: an optional header line ``N DIM`` (two integers), then one word per line followed by
its ``DIM`` numbers, separated by spaces::

    2000000 300
    , 0.0123 -0.0456 ...
    the 0.0321 0.0117 ...

Files of fastText's ``cc.LANG.300.vec`` kind list the words most frequent first. The biaffine
member (:mod:`parsing.biaffine.member`, setting ``vectors=PATH``) keeps the vectors of its
training words (looked up exactly, else lower-cased) and of the file's first ``limit`` words,
so a word never seen in training still gets a vector; the kept vectors travel in its model file
(``4 * DIM`` bytes per word: 20,000 words of 300 numbers are 24 MB), and the ``.vec`` file is
not needed to parse.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from parsing.biaffine.vocab import PAD, SPECIALS, UNK, Vocabulary


@dataclass(frozen=True)
class PretrainedVectors:
    """Kept vectors: ``words[i]`` has row ``i + SPECIALS`` of :meth:`table` (rows 0 and 1, padding
    and unknown words, are zeros).

    Attributes:
        words: the kept words, in the file's order.
        matrix: their vectors, float32, shape ``(len(words), dim)``.
        source: the file they came from (for messages).
    """

    words: list[str]
    matrix: np.ndarray[Any, np.dtype[np.float32]]
    source: str = ""

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def vocabulary(self) -> Vocabulary:
        """The words as a :class:`~parsing.biaffine.vocab.Vocabulary` (padding and unknown
        first) that :func:`lookup` reads (:func:`vectors_vocabulary`)."""
        return vectors_vocabulary(self.words)

    def table(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The embedding table, shape ``(SPECIALS + len(words), dim)``: zeros for padding and
        unknown words, then :attr:`matrix`."""
        return np.concatenate([np.zeros((SPECIALS, self.dim), dtype=np.float32), self.matrix])


def vectors_vocabulary(words: list[str]) -> Vocabulary:
    """A vocabulary of vector words whose index also holds each word's lower-cased form (for
    the first word that has it, unless that form is a word of its own), so ``Paris`` in the
    file serves ``paris`` and ``PARIS`` in a sentence."""
    vocabulary = Vocabulary([PAD, UNK, *(word for word in words if word not in (PAD, UNK))])
    aliases: dict[str, int] = {}
    for i, word in enumerate(vocabulary.items[SPECIALS:], start=SPECIALS):
        aliases.setdefault(word.lower(), i)
    vocabulary.index = {**aliases, **vocabulary.index}
    return vocabulary


def lookup(vocabulary: Vocabulary, words: Collection[str] | list[str]) -> list[int]:
    """Row ids of ``words`` in a vectors vocabulary (:func:`vectors_vocabulary`): the word
    itself, else its lower-cased form, else the unknown row (1).

    Examples:
        >>> lookup(vectors_vocabulary(["the", "Paris"]), ["the", "paris", "PARIS", "The", "Rome"])
        [2, 3, 3, 2, 1]
    """
    index = vocabulary.index
    return [index.get(word) or index.get(word.lower()) or 1 for word in words]


def _lines(handle: TextIO) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=1):
        yield number, line.rstrip("\r\n")


def _header(line: str) -> int | None:
    """The dimension of a header line ``N DIM``, or None when ``line`` is a vector line."""
    parts = line.split()
    if len(parts) == 2 and all(part.isdigit() for part in parts):
        return int(parts[1])
    return None


def read_vectors(path: str | Path, wanted: Collection[str] = (), *, limit: int = 20_000) -> PretrainedVectors:
    """The vectors of ``path`` for the file's first ``limit`` words and for every word of
    ``wanted`` (the training words) found anywhere in it, exactly or lower-cased; a word listed
    twice keeps its first vector.

    Only the kept lines' numbers are read, so a file of millions of words costs one pass
    over its lines, not their memory.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a kept line whose vector has another length than the header's (or the
            first vector's) dimension, or a value that is not a number, or a file without
            vectors, naming the file and the line; ``limit`` below 0.
    """
    if limit < 0:
        raise ValueError(f"the vectors limit must be 0 or more, not {limit}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no word vectors file at {path}")
    lowered = {word.lower() for word in wanted}
    wanted_set = set(wanted)
    words: list[str] = []
    rows: list[np.ndarray[Any, np.dtype[np.float32]]] = []
    seen: set[str] = set()
    dim: int | None = None
    dim_from = "header"
    where = ""
    with path.open(encoding="utf-8", errors="strict") as handle:
        for number, line in _lines(handle):
            where = f"{path.name} line {number}"
            if not line.strip():
                continue
            if number == 1 and (header := _header(line)) is not None:
                dim = header
                if dim < 1:
                    raise ValueError(f"{where}: the header gives dimension {dim}; "
                                     "expected 'COUNT DIM' with DIM >= 1")
                continue
            word, _, rest = line.partition(" ")
            if not word:
                raise ValueError(f"{where}: a line starts with a space; expected 'WORD v1 ... vDIM'")
            keep = word not in seen and (len(words) < limit or word in wanted_set or word in lowered
                                         or word.lower() in lowered)
            if dim is not None and not keep:
                continue
            values = rest.split()
            if dim is None:
                dim, dim_from = len(values), f"vector on line {number}"
                if dim < 1:
                    raise ValueError(f"{where}: the word {word!r} has no numbers after it")
            if len(values) != dim:
                raise ValueError(f"{where}: the word {word!r} has {len(values)} numbers, but the vectors "
                                 f"have dimension {dim} (from the {dim_from})")
            if not keep:
                continue
            try:
                row = np.array([float(value) for value in values], dtype=np.float32)
            except ValueError:
                raise ValueError(f"{where}: the vector of {word!r} holds something that is not a number"
                                 ) from None
            if not np.all(np.isfinite(row)):
                raise ValueError(f"{where}: the vector of {word!r} holds an infinite or NaN value")
            seen.add(word)
            words.append(word)
            rows.append(row)
    if dim is None:
        raise ValueError(f"{path.name}: no word vectors in the file")
    matrix = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return PretrainedVectors(words, matrix.astype(np.float32, copy=False), str(path))
