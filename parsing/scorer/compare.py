"""Comparing several parsers on the same sentences: the oracle, agreement, unique-correct arcs,
label confusion, the sentences two parses differ on, and the best source per table row.

Conventions (of :mod:`parsing.scorer.metrics`): index 0 is ROOT; ``heads`` has shape ``(n+1,)``
with ``heads[0] == -1``; labels are compared on their universal part (``nmod:poss`` is
``nmod``). Every function takes parallel lists: one :class:`~parsing.types.Parse` (or
:class:`~parsing.types.Sentence`) per sentence, the same sentences in the same order, with the
same number of words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from parsing.scorer.metrics import universal
from parsing.scorer.types import ArcTable, BoolArray
from parsing.types import NO_HEAD, Parse, Sentence

Tree = Sentence | Parse


@dataclass(frozen=True, slots=True)
class Agreement:
    """How often two parsers chose the same head (and the same universal label) for a word."""

    words: int
    same_head: int
    same_arc: int

    @property
    def unlabelled(self) -> float:
        """Fraction of words with the same head (0 without words)."""
        return self.same_head / self.words if self.words else 0.0

    @property
    def labelled(self) -> float:
        """Fraction of words with the same head and universal label (0 without words)."""
        return self.same_arc / self.words if self.words else 0.0


@dataclass(frozen=True, slots=True)
class Difference:
    """One sentence two parses differ on: its index in the lists and how many words differ."""

    index: int
    words: int
    heads: int
    labels: int
    """Words with the same head but another universal label."""


def _check_parallel(first: Sequence[Tree], second: Sequence[Tree]) -> None:
    if len(first) != len(second):
        raise ValueError(f"{len(first)} sentences against {len(second)}")
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        if len(a) != len(b):
            raise ValueError(f"sentence {index + 1}: {len(a)} words against {len(b)}")


def oracle_parses(gold: Sequence[Sentence], systems: Sequence[Sequence[Tree]]) -> list[Parse]:
    """The oracle's parse of each sentence: every word takes the arc of a system that got it right.

    For each word, the first system with the right head and universal label, else the first with
    the right head, else the first system. So the oracle's UAS (LAS) counts a word as right when
    any system has its head (head and label) right: an upper bound of what choosing among the
    systems per word could reach.

    Args:
        gold: the reference sentences, with trees.
        systems: one list of parses per system, each parallel to ``gold``.

    Returns:
        One parse per gold sentence.

    Examples:
        >>> gold = [Sentence.from_words(["a", "b"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> one = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> two = [Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> oracle = oracle_parses(gold, [two, one])[0]
        >>> oracle.heads.tolist(), oracle.deprels
        ([-1, 2, 0], ['', 'obj', 'root'])
    """
    if not systems:
        raise ValueError("the oracle needs at least one system")
    for system in systems:
        _check_parallel(gold, system)
    result = []
    for index, sentence in enumerate(gold):
        trees = [system[index] for system in systems]
        heads = np.full(len(sentence) + 1, NO_HEAD, dtype=np.intp)
        deprels = [""] * (len(sentence) + 1)
        for word in range(1, len(sentence) + 1):
            right_head = [t for t in trees if t.heads[word] == sentence.heads[word]]
            right_arc = [t for t in right_head
                         if universal(t.deprels[word]) == universal(sentence.deprels[word])]
            chosen = (right_arc or right_head or trees)[0]
            heads[word], deprels[word] = chosen.heads[word], chosen.deprels[word]
        result.append(Parse(heads=heads, deprels=deprels))
    return result


def agreement(first: Sequence[Tree], second: Sequence[Tree]) -> Agreement:
    """How often two parsers agree, word by word, over parallel lists of parses.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])]
        >>> b = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> agreement(a, b)
        Agreement(words=2, same_head=2, same_arc=1)
    """
    _check_parallel(first, second)
    words = same_head = same_arc = 0
    for a, b in zip(first, second, strict=True):
        heads = a.heads[1:] == b.heads[1:]
        labels = np.array([universal(x) == universal(y)
                           for x, y in zip(a.deprels[1:], b.deprels[1:], strict=True)], dtype=bool)
        words += len(a)
        same_head += int(heads.sum())
        same_arc += int((heads & labels).sum())
    return Agreement(words, same_head, same_arc)


def unique_correct(tables: Mapping[str, ArcTable]) -> dict[str, tuple[int, int]]:
    """Per system, ``(heads, arcs)`` it alone got right: words whose head (head and universal
    label) no other system in ``tables`` got right.

    Args:
        tables: system name -> its arc table against the same gold words (same order).

    Examples:
        >>> from parsing.scorer.metrics import arc_table
        >>> gold = [Sentence.from_words(["a", "b"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> one = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> two = [Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> unique_correct({"one": arc_table(gold, one), "two": arc_table(gold, two)})
        {'one': (2, 1), 'two': (0, 0)}
    """
    names = list(tables)
    if not names:
        return {}
    sizes = {len(table) for table in tables.values()}
    if len(sizes) != 1:
        raise ValueError("every table must score the same words")
    heads = np.stack([tables[name].head_correct for name in names])  # shape (systems, W)
    arcs = np.stack([tables[name].label_correct for name in names])
    result = {}
    for row, name in enumerate(names):
        others = np.delete(np.arange(len(names)), row)
        alone_heads: BoolArray = heads[row] & ~heads[others].any(axis=0)
        alone_arcs: BoolArray = arcs[row] & ~arcs[others].any(axis=0)
        result[name] = (int(alone_heads.sum()), int(alone_arcs.sum()))
    return result


def label_confusion(first: Sequence[Tree], second: Sequence[Tree]) -> Counter[tuple[str, str]]:
    """Counts of ``(first's universal label, second's universal label)`` over every word.

    The diagonal is where the two agree on the label (whatever the heads).

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])]
        >>> b = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> sorted(label_confusion(a, b).items())
        [(('nsubj', 'obj'), 1), (('root', 'root'), 1)]
    """
    _check_parallel(first, second)
    return Counter((universal(x), universal(y)) for a, b in zip(first, second, strict=True)
                   for x, y in zip(a.deprels[1:], b.deprels[1:], strict=True))


def differences(first: Sequence[Tree], second: Sequence[Tree]) -> list[Difference]:
    """The sentences whose trees differ (another head, or the same head with another universal
    label on some word), in list order.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])] * 2
        >>> b = [a[0], Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> differences(a, b)
        [Difference(index=1, words=2, heads=2, labels=0)]
    """
    _check_parallel(first, second)
    found = []
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        heads = a.heads[1:] != b.heads[1:]
        labels = sum(1 for word in np.flatnonzero(~heads)
                     if universal(a.deprels[word + 1]) != universal(b.deprels[word + 1]))
        if heads.any() or labels:
            found.append(Difference(index, len(a), int(heads.sum()), labels))
    return found


def best_per_row(table: Mapping[str, Mapping[str, float | None]], *, min_words: int = 1,
                 words: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, set[str]]:
    """The best column(s) of each row: ``row -> {columns with the highest value}``.

    Args:
        table: row -> column -> value (None: no value, never best).
        min_words: with ``words`` (row -> column -> words behind the value), a value backed by
            fewer words is not a candidate.
        words: the counts for ``min_words``.

    Examples:
        >>> best = best_per_row({"NOUN": {"a": 80.0, "b": 90.0, "c": 90.0}, "X": {"a": None}})
        >>> sorted(best["NOUN"]), best["X"]
        (['b', 'c'], set())
    """
    best: dict[str, set[str]] = {}
    for row, values in table.items():
        counts = (words or {}).get(row, {})
        candidates = {column: value for column, value in values.items() if value is not None
                      and (words is None or counts.get(column, 0) >= min_words)}
        top = max(candidates.values(), default=None)
        best[row] = {column for column, value in candidates.items() if value == top}
    return best
