"""Carrying a tree and per-word columns of a sentence's old words over to its re-tokenized words
(:mod:`parsing.tokens_edit`): :class:`WordMap` (which old words each new word is made of),
:func:`carry_tree`, :func:`carry_column`, and :func:`as_tree`, which makes any head graph with lost
arcs a tree with one root (:class:`Carried`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from parsing.trees import find_cycle

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class WordMap:
    """Where the words of a re-tokenized sentence come from.

    ``sources[v - 1]`` are the old words (1-based) new word ``v`` is made of: one for a word kept
    (or the first part of a split word), two for merged words, none for a new word. A new word's
    arc is ``new_arcs[v]`` (head in the new numbering, label). Words whose arc is lost are
    attached to the root with ``reattach``.
    """

    sources: tuple[tuple[int, ...], ...]
    new_arcs: Mapping[int, tuple[int, str]] = field(default_factory=dict)
    reattach: str = "dep"

    def __len__(self) -> int:
        return len(self.sources)

    def old_to_new(self) -> dict[int, int]:
        """Old word → the new word it is (part of); ROOT 0 → 0; old words not here are absent."""
        mapping = {0: 0}
        for new, olds in enumerate(self.sources, start=1):
            for old in olds:
                mapping[old] = new
        return mapping


@dataclass(frozen=True, slots=True)
class Carried:
    """A tree carried over to the new words.

    ``heads``/``deprels``: the new tree (``n+1`` entries each, index 0 = ROOT). ``origin[v]``: the
    old word whose arc and columns new word ``v`` carries (``None`` for a new word; entry 0 is
    ``None``). ``changed``: the new words whose arc is not the old tree's (sorted).
    """

    heads: list[int]
    deprels: list[str]
    origin: list[int | None]
    changed: list[int]


def _is_root(label: str) -> bool:
    return label.split(":")[0] == "root"


def as_tree(
    heads: Sequence[int | None], deprels: Sequence[str], *, changed: Sequence[int] = (), reattach: str = "dep"
) -> Carried:
    """Make ``heads`` a tree with exactly one word under ROOT, changing as few arcs as possible.

    ``heads``/``deprels``: ``n+1`` entries (index 0 ignored); ``None`` = no head (the arc was
    lost). The root is the word under ROOT labelled ``root`` (else the first under ROOT, else
    the headless word with the most words below it); every other headless word, every other
    word under ROOT, and one word of each cycle (a ``changed`` one when the cycle has one) is
    attached to it with ``reattach``. A word labelled ``root`` that is not under ROOT becomes
    ``reattach``. ``origin`` is the identity; ``changed`` lists ``changed`` and every word fixed.

    Examples:
        >>> as_tree([-1, 0, None, 0], ["", "root", "obj", "root"]).heads
        [-1, 0, 1, 1]
        >>> as_tree([-1, 2, 1], ["", "nsubj", "obj"]).changed  # a cycle, no root
        [1]
    """
    n = len(heads) - 1
    if n < 1 or len(deprels) != n + 1:
        raise ValueError("heads and deprels need n+1 entries, n >= 1")
    head: list[int | None] = [-1, *heads[1:]]
    label = ["", *deprels[1:]]
    fixed = set(changed)
    under_root = [w for w in range(1, n + 1) if head[w] == 0]
    if under_root:
        root = next((w for w in under_root if _is_root(label[w])), under_root[0])
    else:
        root = _best_headless(head, fixed)
    if head[root] != 0 or not _is_root(label[root]):
        fixed.add(root)
    head[root], label[root] = 0, "root"
    for word in range(1, n + 1):
        if word != root and (head[word] is None or head[word] == 0):
            head[word], label[word] = root, reattach
            fixed.add(word)
    while (cycle := find_cycle([-1, *(h if h is not None else -1 for h in head[1:])])) is not None:
        word = next((w for w in cycle if w in fixed), cycle[0])
        head[word], label[word] = root, reattach
        fixed.add(word)
    for word in range(1, n + 1):
        if word != root and _is_root(label[word]):
            label[word] = reattach
            fixed.add(word)
    final = [-1, *(int(h) for h in head[1:] if h is not None)]
    assert len(final) == n + 1
    return Carried(final, label, [None, *range(1, n + 1)], sorted(fixed))


def _best_headless(head: list[int | None], fixed: set[int]) -> int:
    """The headless word with the most words below it (the first on a tie); without any headless
    word (every word on a cycle or below one), a word of the first cycle is cut loose."""
    n = len(head) - 1
    headless = [w for w in range(1, n + 1) if head[w] is None]
    if not headless:
        cycle = find_cycle([-1, *(h if h is not None else -1 for h in head[1:])])
        assert cycle is not None, "a head graph without ROOT arcs or headless words has a cycle"
        word = next((w for w in cycle if w in fixed), cycle[0])
        head[word] = None
        return word
    below = dict.fromkeys(headless, 0)
    for word in range(1, n + 1):
        seen: set[int] = set()
        node: int | None = word
        while node is not None and node > 0 and node not in seen and head[node] is not None:
            seen.add(node)
            node = head[node]
        if node is not None and node in below:
            below[node] += 1
    return max(headless, key=lambda w: (below[w], -w))


def carry_tree(heads: Sequence[int], deprels: Sequence[str], words: WordMap) -> Carried:
    """Carry a tree of the old words (``n+1`` entries each) over to the new words (see
    :mod:`parsing.tokens_edit`); always a tree with one root.

    Examples:
        >>> split = WordMap(((1,), (), (2,)), {2: (1, "dep")})  # word 1 split in two
        >>> carry_tree([-1, 2, 0], ["", "nsubj", "root"], split).heads
        [-1, 3, 1, 0]
    """
    to_new = words.old_to_new()
    n = len(words)
    new_heads: list[int | None] = [-1] + [None] * n
    new_labels = [""] * (n + 1)
    origin: list[int | None] = [None] * (n + 1)
    changed: list[int] = []
    for new, olds in enumerate(words.sources, start=1):
        if not olds:
            new_heads[new], new_labels[new] = words.new_arcs[new]
            changed.append(new)
            continue
        outside = [old for old in olds if to_new.get(heads[old]) != new]
        primary = outside[0] if outside else olds[0]
        origin[new] = primary
        target = to_new.get(heads[primary])
        if len(outside) > 1 or target is None or target == new:
            changed.append(new)
        if target is not None and target != new:
            new_heads[new], new_labels[new] = target, deprels[primary]
        else:
            new_labels[new] = deprels[primary]
    tree = as_tree(new_heads, new_labels, changed=changed, reattach=words.reattach)
    return Carried(tree.heads, tree.deprels, origin, tree.changed)


def carry_column(values: Sequence[T], carried: Carried, fill: T) -> list[T]:
    """A per-word column of the old words (``n`` values, word 1 first, no ROOT entry) for the new
    words: each new word takes the value of the old word it carries (:attr:`Carried.origin`),
    a new word ``fill``.

    Examples:
        >>> tree = Carried([-1, 0, 1], ["", "root", "dep"], [None, 1, None], [2])
        >>> carry_column(["NOUN"], tree, "X")
        ['NOUN', 'X']
    """
    return [values[old - 1] if old is not None else fill for old in carried.origin[1:]]
