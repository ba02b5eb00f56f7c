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
from itertools import chain

import numpy as np

from parsing.scorer.metrics import universal_labels
from parsing.scorer.types import ArcTable, BoolArray, IntArray, StrArray
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


def _flat(trees: Sequence[Tree]) -> tuple[IntArray, StrArray, IntArray]:
    """Heads ``(W,)`` and universal labels ``(W,)`` of words 1..n of every tree, concatenated,
    and each tree's number of words ``(S,)``."""
    lengths = np.array([len(tree) for tree in trees], dtype=np.intp)
    if not trees:
        return np.zeros(0, dtype=np.intp), universal_labels([]), lengths
    heads = np.concatenate([np.asarray(tree.heads[1:], dtype=np.intp) for tree in trees])
    return heads, universal_labels(tree.deprels for tree in trees), lengths


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
    gold_heads, gold_labels, lengths = _flat(gold)
    heads = np.stack([_flat(system)[0] for system in systems])  # shape (systems, W)
    labels = np.stack([_flat(system)[1] for system in systems])
    raw = np.array([list(chain.from_iterable(tree.deprels[1:] for tree in system)) for system in systems],
                   dtype=object).reshape(len(systems), len(gold_heads))
    right_head = heads == gold_heads
    right_arc = right_head & (labels == gold_labels)
    chosen = np.where(right_arc.any(axis=0), right_arc.argmax(axis=0),
                      np.where(right_head.any(axis=0), right_head.argmax(axis=0), 0))  # shape (W,)
    words = np.arange(len(gold_heads))
    chosen_heads, chosen_labels = heads[chosen, words], raw[chosen, words].tolist()
    result, offset = [], 0
    for n in lengths.tolist():
        result.append(Parse(heads=np.array([NO_HEAD, *chosen_heads[offset:offset + n]], dtype=np.intp),
                            deprels=["", *chosen_labels[offset:offset + n]]))
        offset += n
    return result


def oracle_table(tables: Sequence[ArcTable]) -> ArcTable:
    """The arc table of :func:`oracle_parses` made from the systems' arc tables over the same gold
    words (same order): the same choice per word (the first system with the right head and
    universal label, else the first with the right head, else the first), without building parses.

    Examples:
        >>> from parsing.scorer.metrics import arc_table
        >>> gold = [Sentence.from_words(["a", "b"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> one = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> two = [Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> oracle_table([arc_table(gold, two), arc_table(gold, one)]).system_deprels.tolist()
        ['obj', 'root']
    """
    if not tables:
        raise ValueError("the oracle needs at least one system")
    if len({len(table) for table in tables}) != 1:
        raise ValueError("every table must score the same words")
    right_head = np.stack([table.head_correct for table in tables])  # shape (systems, W)
    right_arc = np.stack([table.label_correct for table in tables])
    chosen = np.where(right_arc.any(axis=0), right_arc.argmax(axis=0),
                      np.where(right_head.any(axis=0), right_head.argmax(axis=0), 0))  # shape (W,)
    words = np.arange(len(chosen))
    first = tables[0]
    return ArcTable(
        first.sentence, first.position, first.sentence_lengths, first.gold_heads,
        np.stack([table.system_heads for table in tables])[chosen, words], first.gold_deprels,
        np.stack([table.system_deprels for table in tables])[chosen, words], first.gold_upos, None,
    )  # fmt: skip


def agreement(first: Sequence[Tree], second: Sequence[Tree]) -> Agreement:
    """How often two parsers agree, word by word, over parallel lists of parses.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])]
        >>> b = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> agreement(a, b)
        Agreement(words=2, same_head=2, same_arc=1)
    """
    return pair_report(first, second).agreement


def agreement_matrix(systems: Mapping[str, Sequence[Tree]]) -> dict[tuple[str, str], Agreement]:
    """:func:`agreement` of every pair of systems, both ways round (``(a, b)`` and ``(b, a)``),
    each system's words lined up once.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])]
        >>> b = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> agreement_matrix({"a": a, "b": b})[("b", "a")]
        Agreement(words=2, same_head=2, same_arc=1)
    """
    names = list(systems)
    for name in names[1:]:
        _check_parallel(systems[names[0]], systems[name])
    flat = {name: _flat(trees) for name, trees in systems.items()}
    result = {}
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            same_head = flat[first][0] == flat[second][0]
            same_arc = same_head & (flat[first][1] == flat[second][1])
            result[(first, second)] = result[(second, first)] = Agreement(
                len(same_head), int(same_head.sum()), int(same_arc.sum()))
    return result


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
    return pair_report(first, second).confusion


def differences(first: Sequence[Tree], second: Sequence[Tree]) -> list[Difference]:
    """The sentences whose trees differ (another head, or the same head with another universal
    label on some word), in list order.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])] * 2
        >>> b = [a[0], Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> differences(a, b)
        [Difference(index=1, words=2, heads=2, labels=0)]
    """
    return pair_report(first, second).differences


@dataclass(frozen=True, slots=True)
class PairReport:
    """:func:`agreement`, :func:`label_confusion` and :func:`differences` of two parsers."""

    agreement: Agreement
    confusion: Counter[tuple[str, str]]
    differences: list[Difference]


def pair_report(first: Sequence[Tree], second: Sequence[Tree]) -> PairReport:
    """Agreement, label confusion and differing sentences of two parsers over parallel lists,
    each parser's words lined up once.

    Examples:
        >>> a = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "nsubj", "root"])]
        >>> b = [Parse(heads=np.array([-1, 2, 0]), deprels=["", "obj", "root"])]
        >>> pair_report(a, b).differences
        [Difference(index=0, words=2, heads=0, labels=1)]
    """
    _check_parallel(first, second)
    heads_a, labels_a, lengths = _flat(first)
    heads_b, labels_b, _ = _flat(second)
    same_head, same_label = heads_a == heads_b, labels_a == labels_b
    agreed = Agreement(len(heads_a), int(same_head.sum()), int((same_head & same_label).sum()))
    confusion = Counter(zip(labels_a.tolist(), labels_b.tolist(), strict=True))
    sentence = np.repeat(np.arange(len(lengths)), lengths)  # shape (W,): each word's sentence
    heads = np.bincount(sentence[~same_head], minlength=len(lengths))
    labels = np.bincount(sentence[same_head & ~same_label], minlength=len(lengths))
    differing = [Difference(index, int(lengths[index]), int(heads[index]), int(labels[index]))
                 for index in np.flatnonzero((heads > 0) | (labels > 0)).tolist()]
    return PairReport(agreed, confusion, differing)


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
