"""Re-tokenizing sentences: split a word in two, merge two adjacent words, add or remove a
multiword token (MWT), split a sentence in two, merge two sentences (issue #32); and carrying
any tree of the old words over to the new ones.

A sentence is its CoNLL-U token lines, ``rows`` (10 strings each, in file order, as
:attr:`parsing.conllu_io.ConlluSentence.rows`: words, MWT ranges ``1-2``). Every operation returns
one :class:`Retokenized` per resulting sentence: the new ``rows`` (their HEAD, DEPREL and DEPS
columns carried over like any tree, MISC ``SpaceAfter`` moved where it belongs) and a
:class:`WordMap` saying which old words each new word is made of. :func:`carry_tree` carries any
other tree of the old words (a parser's, an annotator's) with the same map, and
:func:`carry_column` a per-word column (tags, scores, provenance).

Trees follow the library's convention: ``heads`` has ``n+1`` entries, ``heads[0] == -1``,
``heads[d]`` the head of word ``d`` (0 = ROOT); ``deprels`` too, ``deprels[0] == ""``.

What happens to the arcs:

* **split a word** (``thecat`` → ``the`` ``cat``): the first part keeps the word's arc, its
  dependents and its columns; the second part attaches to the first as ``dep`` (a new arc, to be
  checked). The first part gets ``SpaceAfter=No`` (the text does not change).
* **merge two words**: the merged word keeps the arc of the part whose head is outside the pair
  (the other part's arc was between them), and the dependents of both. When both parts had a
  head outside the pair, the second part's arc is lost.
* **MWT** add or remove: the words and arcs do not change; ``SpaceAfter=No`` moves between the
  range line and its last word.
* **split a sentence** after word ``k``: arcs that cross the cut are lost.
* **merge two sentences**: the second sentence's root attaches to the first's as ``parataxis``.

A lost arc never leaves a word without a head: :func:`as_tree` attaches every word whose arc
could not be kept to the sentence's root (``dep``), keeps one root and breaks any cycle a merge
made, so the result is always a tree with one root; :attr:`Carried.changed` lists the words whose
arc is not the old tree's (to be checked by a person).

Refused (:class:`TokenEditError`, naming the field): a word number outside the sentence, a split
point outside the form or next to a space, a merge across a multiword token's edge, an MWT over
words already in one, a sentence cut inside a multiword token, and any sentence with empty nodes
(``3.1``: enhanced UD's extra nodes would need renumbering too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from parsing.conllu_io import DEPREL, DEPS, FORM, HEAD, ID, LEMMA, MISC, UPOS
from parsing.trees import find_cycle

Row = list[str]
"""One CoNLL-U token line, 10 columns."""

_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_SPACE = re.compile(r"\s")
SPACE_AFTER_NO = "SpaceAfter=No"
T = TypeVar("T")


class TokenEditError(ValueError):
    """An edit that cannot be made: ``field`` names the argument at fault, the message says why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


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


@dataclass(frozen=True, slots=True)
class Retokenized:
    """One sentence after an edit: its ``rows`` and the ``words`` map from the old words."""

    rows: list[Row]
    words: WordMap

    @property
    def n_words(self) -> int:
        """The number of (syntactic) words."""
        return len(self.words)


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
    """Carry a tree of the old words (``n+1`` entries each) over to the new words (see the module
    docstring); always a tree with one root.

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


# --- rows ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Layout:
    """A sentence's word rows and MWT ranges ``(first, last, row)`` (row IDs rewritten on output)."""

    words: list[Row]
    ranges: list[tuple[int, int, Row]]

    def range_of(self, word: int) -> tuple[int, int, Row] | None:
        return next((r for r in self.ranges if r[0] <= word <= r[1]), None)

    def rows(self) -> list[Row]:
        out: list[Row] = []
        starts = {first: (first, last, row) for first, last, row in self.ranges}
        for number, word in enumerate(self.words, start=1):
            if number in starts:
                first, last, row = starts[number]
                out.append([f"{first}-{last}", *row[1:]])
            out.append([str(number), *word[1:]])
        return out


def _layout(rows: Sequence[Sequence[str]]) -> _Layout:
    words: list[Row] = []
    ranges: list[tuple[int, int, Row]] = []
    for row in rows:
        if len(row) != 10:
            raise TokenEditError("rows", f"a token line has {len(row)} columns, not 10")
        if _WORD_ID.fullmatch(row[ID]):
            words.append(list(row))
        elif match := _RANGE_ID.fullmatch(row[ID]):
            ranges.append((int(match.group(1)), int(match.group(2)), list(row)))
        else:
            raise TokenEditError(
                "rows",
                f"the sentence has an empty node ({row[ID]}): "
                "sentences with empty nodes cannot be re-tokenized",
            )
    if not words:
        raise TokenEditError("rows", "the sentence has no words")
    return _Layout(words, ranges)


def _misc_items(misc: str) -> list[str]:
    return [item for item in misc.split("|") if item not in ("", "_")]


def _misc(items: Sequence[str]) -> str:
    return "|".join(items) or "_"


def _without_space_after(misc: str) -> str:
    return _misc([item for item in _misc_items(misc) if not item.startswith("SpaceAfter=")])


def _space_after_of(misc: str) -> list[str]:
    return [item for item in _misc_items(misc) if item.startswith("SpaceAfter=")]


def _with_space_after(misc: str, items: Sequence[str]) -> str:
    return _misc([*_misc_items(_without_space_after(misc)), *items])


def _check_word(layout: _Layout, word: int, name: str) -> None:
    if not 1 <= word <= len(layout.words):
        raise TokenEditError(name, f"word {word} is not in the sentence (words 1 to {len(layout.words)})")


def _tree_of_rows(words: Sequence[Row]) -> tuple[list[int], list[str]] | None:
    """The rows' own tree (HEAD, DEPREL); None when no word has a numeric HEAD (raw text). Words
    without one beside words with one (two sentences merged, one of them raw) hang from the
    root (:func:`as_tree`)."""
    numeric = [bool(_WORD_ID.fullmatch(w[HEAD]) or w[HEAD] == "0") for w in words]
    if not any(numeric):
        return None
    heads: list[int | None] = [
        -1,
        *(int(w[HEAD]) if ok else None for w, ok in zip(words, numeric, strict=True)),
    ]
    labels = ["", *(w[DEPREL] if ok else "dep" for w, ok in zip(words, numeric, strict=True))]
    if all(numeric):
        return [-1, *(int(w[HEAD]) for w in words)], labels
    whole = as_tree(heads, labels)
    return whole.heads, whole.deprels


def _finish(old_words: Sequence[Row], layout: _Layout, words: WordMap) -> Retokenized:
    """Write the carried HEAD, DEPREL and DEPS into ``layout``'s words (made from ``old_words``)."""
    tree = _tree_of_rows(old_words)
    carried = carry_tree(*tree, words) if tree is not None else None
    for number, row in enumerate(layout.words, start=1):
        if carried is not None:
            row[HEAD], row[DEPREL] = str(carried.heads[number]), carried.deprels[number]
        elif not words.sources[number - 1]:
            row[HEAD], row[DEPREL] = "_", "_"
    if any(w[DEPS] != "_" for w in old_words):
        _carry_deps(old_words, layout.words, words)
    return Retokenized(layout.rows(), words)


def _carry_deps(old_words: Sequence[Row], new_words: list[Row], words: WordMap) -> None:
    """Renumber the enhanced graph (DEPS) with the word map: edges to words no longer in the
    sentence and edges a merge turned into self-loops are dropped; a word left without any
    (a new word) gets its basic arc, and so does every word the cut left unreachable from ROOT
    (a relative clause's cycle whose way to the root was in the other part): the basic tree
    reaches every word, so the enhanced graph stays connected."""
    to_new = words.old_to_new()
    graph: list[set[tuple[int, str]]] = []
    for number, olds in enumerate(words.sources, start=1):
        edges: set[tuple[int, str]] = set()
        for old in olds:
            for item in old_words[old - 1][DEPS].split("|"):
                head, sep, label = item.partition(":")
                if not sep or not head.isdigit():
                    continue
                target = to_new.get(int(head))
                if target is not None and target != number:
                    edges.add((target, label))
        row = new_words[number - 1]
        if row[HEAD] != "_":
            basic = (int(row[HEAD]), row[DEPREL])
            if basic[0] == 0:  # the root: under ROOT in the enhanced graph too
                edges.add(basic)
            else:  # only the root hangs from ROOT (a merged sentence's second root no longer does)
                edges = {edge for edge in edges if edge[0] != 0} or {basic}
        graph.append(edges)
    if all(row[HEAD] != "_" for row in new_words):
        reached = _reachable(graph)
        for number, row in enumerate(new_words, start=1):
            if number not in reached:
                graph[number - 1].add((int(row[HEAD]), row[DEPREL]))
    for row, edges in zip(new_words, graph, strict=True):
        row[DEPS] = "|".join(f"{head}:{label}" for head, label in sorted(edges)) or "_"


def _reachable(graph: Sequence[set[tuple[int, str]]]) -> set[int]:
    """The words reachable from ROOT along the edges (``graph[w - 1]``: word w's incoming edges)."""
    below: dict[int, list[int]] = {}
    for number, edges in enumerate(graph, start=1):
        for head, _ in edges:
            below.setdefault(head, []).append(number)
    reached: set[int] = set()
    todo = [0]
    while todo:
        for child in below.get(todo.pop(), ()):
            if child not in reached:
                reached.add(child)
                todo.append(child)
    return reached


def split_word(rows: Sequence[Sequence[str]], word: int, at: int) -> Retokenized:
    """Split ``word`` into two words: its form's first ``at`` characters and the rest.

    The first part keeps the word's columns and arc (LEMMA becomes its form unless ``_``); the
    second gets its form as LEMMA, UPOS ``X`` (``_`` where the word had none), ``_`` XPOS and
    FEATS, the word's ``SpaceAfter`` and an arc to the first part (``dep``). Inside an MWT the
    range grows by one word.

    :raise TokenEditError: ``word`` or ``at`` (1 .. len(form) - 1, not next to a space) wrong.
    """
    layout = _layout(rows)
    _check_word(layout, word, "word")
    old = layout.words[word - 1]
    form = old[FORM]
    if not 1 <= at < len(form):
        raise TokenEditError("at", f"{form!r} can be split after character 1 to {len(form) - 1}, not {at}")
    left, right = form[:at], form[at:]
    if _SPACE.search(left[-1] + right[0]):
        raise TokenEditError(
            "at", f"splitting {form!r} after character {at} leaves a part that begins or ends with a space"
        )
    inside = layout.range_of(word) is not None
    first = list(old)
    first[FORM] = left
    first[LEMMA] = left if old[LEMMA] != "_" else "_"
    first[MISC] = (
        _without_space_after(old[MISC]) if inside else _with_space_after(old[MISC], [SPACE_AFTER_NO])
    )
    second = [
        "",
        right,
        right if old[LEMMA] != "_" else "_",
        "X" if old[UPOS] != "_" else "_",
        "_",
        "_",
        "_",
        "_",
        "_",
        _misc([] if inside else _space_after_of(old[MISC])),
    ]
    new_words = (
        [list(w) for w in layout.words[: word - 1]] + [first, second] + [list(w) for w in layout.words[word:]]
    )
    ranges = [(a if a <= word else a + 1, b if b < word else b + 1, row) for a, b, row in layout.ranges]
    sources = (
        tuple((w,) for w in range(1, word + 1))
        + ((),)
        + tuple((w,) for w in range(word + 1, len(layout.words) + 1))
    )
    return _finish(layout.words, _Layout(new_words, ranges), WordMap(sources, {word + 1: (word, "dep")}))


def merge_words(rows: Sequence[Sequence[str]], word: int) -> Retokenized:
    """Merge ``word`` and ``word + 1`` into one word: the forms joined (inside an MWT of just these
    two words, the MWT's surface form, and the range line goes), LEMMA joined too (``_`` when
    either is ``_``), UPOS, XPOS and FEATS of the part that keeps its arc, the first part's MISC
    with the second's ``SpaceAfter``.

    :raise TokenEditError: ``word`` has no next word, or the two are not in the same MWT (or both
        in none).
    """
    layout = _layout(rows)
    _check_word(layout, word, "word")
    if word == len(layout.words):
        raise TokenEditError("word", f"word {word} is the last word: there is no next word to merge it with")
    here, there = layout.range_of(word), layout.range_of(word + 1)
    if here is not there:
        edge = here or there
        assert edge is not None
        raise TokenEditError(
            "word",
            f"words {word} and {word + 1} are not in the same multiword token "
            f"({edge[0]}-{edge[1]}): remove it first",
        )
    one, two = layout.words[word - 1], layout.words[word]
    sources = (
        tuple((w,) for w in range(1, word))
        + ((word, word + 1),)
        + tuple((w,) for w in range(word + 2, len(layout.words) + 1))
    )
    words = WordMap(sources)
    tree = _tree_of_rows(layout.words)
    keeper = two if tree is not None and tree[0][word] == word + 1 else one
    merged = list(keeper)
    merged[MISC] = _with_space_after(one[MISC], _space_after_of(two[MISC]))
    merged[FORM] = one[FORM] + two[FORM]
    merged[LEMMA] = one[LEMMA] + two[LEMMA] if "_" not in (one[LEMMA], two[LEMMA]) else "_"
    ranges: list[tuple[int, int, Row]] = []
    for a, b, row in layout.ranges:
        if (a, b) == (word, word + 1):  # the MWT was these two words: its surface form is the word's
            merged[FORM] = row[FORM]
            merged[MISC] = _with_space_after(one[MISC], _space_after_of(row[MISC]))
            continue
        ranges.append((a if a <= word else a - 1, b if b <= word else b - 1, row))
    new_words = (
        [list(w) for w in layout.words[: word - 1]] + [merged] + [list(w) for w in layout.words[word + 1 :]]
    )
    return _finish(layout.words, _Layout(new_words, ranges), words)


def add_multiword(rows: Sequence[Sequence[str]], first: int, last: int, form: str) -> Retokenized:
    """Make words ``first..last`` one multiword token written ``form`` (a range line ``first-last``
    before them); the last word's ``SpaceAfter`` moves to the range line, the words keep none.

    :raise TokenEditError: ``first``/``last`` not two or more words of the sentence, a word
        already in an MWT, or ``form`` empty or with a space.
    """
    layout = _layout(rows)
    _check_word(layout, first, "first")
    _check_word(layout, last, "last")
    if last <= first:
        raise TokenEditError(
            "last", f"a multiword token spans two words or more: {last} must be after {first}"
        )
    taken = next((r for r in layout.ranges if r[0] <= last and first <= r[1]), None)
    if taken is not None:
        raise TokenEditError("first", f"words {taken[0]}-{taken[1]} already are a multiword token")
    if not form or _SPACE.search(form):
        raise TokenEditError("form", "give the token's surface form, without spaces")
    space = _space_after_of(layout.words[last - 1][MISC])
    words = [list(w) for w in layout.words]
    for number in range(first, last + 1):
        words[number - 1][MISC] = _without_space_after(words[number - 1][MISC])
    row = ["", form, "_", "_", "_", "_", "_", "_", "_", _misc(space)]
    ranges = sorted([*layout.ranges, (first, last, row)], key=lambda r: r[0])
    identity = WordMap(tuple((w,) for w in range(1, len(words) + 1)))
    return _finish(layout.words, _Layout(words, ranges), identity)


def remove_multiword(rows: Sequence[Sequence[str]], first: int) -> Retokenized:
    """Remove the multiword token whose range starts at word ``first``: its words become tokens
    of their own, written together (``SpaceAfter=No`` on all but the last, which takes the
    range line's ``SpaceAfter``).

    :raise TokenEditError: no multiword token starts at ``first``.
    """
    layout = _layout(rows)
    found = next((r for r in layout.ranges if r[0] == first), None)
    if found is None:
        starts = ", ".join(str(r[0]) for r in layout.ranges) or "none"
        raise TokenEditError("first", f"no multiword token starts at word {first} (they start at: {starts})")
    a, b, row = found
    words = [list(w) for w in layout.words]
    for number in range(a, b):
        words[number - 1][MISC] = _with_space_after(words[number - 1][MISC], [SPACE_AFTER_NO])
    words[b - 1][MISC] = _with_space_after(words[b - 1][MISC], _space_after_of(row[MISC]))
    identity = WordMap(tuple((w,) for w in range(1, len(words) + 1)))
    return _finish(layout.words, _Layout(words, [r for r in layout.ranges if r is not found]), identity)


def split_sentence(rows: Sequence[Sequence[str]], after: int) -> tuple[Retokenized, Retokenized]:
    """Cut the sentence after word ``after``: words ``1..after`` and ``after+1..n`` (renumbered
    from 1). Arcs across the cut are lost (:func:`as_tree` re-attaches those words). The word
    maps of both parts refer to the old sentence's words.

    :raise TokenEditError: ``after`` not in 1..n-1, or inside a multiword token.
    """
    layout = _layout(rows)
    n = len(layout.words)
    if not 1 <= after < n:
        raise TokenEditError("after", f"cut after word 1 to {n - 1}, not {after}")
    cut = next((r for r in layout.ranges if r[0] <= after < r[1]), None)
    if cut is not None:
        raise TokenEditError("after", f"word {after} is inside multiword token {cut[0]}-{cut[1]}")
    first = _Layout([list(w) for w in layout.words[:after]], [r for r in layout.ranges if r[1] <= after])
    second = _Layout(
        [list(w) for w in layout.words[after:]],
        [(a - after, b - after, row) for a, b, row in layout.ranges if a > after],
    )
    return (
        _finish(layout.words, first, WordMap(tuple((w,) for w in range(1, after + 1)))),
        _finish(layout.words, second, WordMap(tuple((w,) for w in range(after + 1, n + 1)))),
    )


def join_rows(first: Sequence[Sequence[str]], second: Sequence[Sequence[str]]) -> list[Row]:
    """The rows of two sentences as one sentence's *old* rows: the second's IDs, HEADs and DEPS
    heads numbered on after the first's words (its root stays under ROOT). This is the old
    numbering :func:`merge_sentences`'s word map refers to; trees are joined the same way by
    :func:`join_trees`."""
    offset = len(_layout(first).words)
    rows = [list(row) for row in first]
    for row in _layout(second).rows():
        moved = list(row)
        if _RANGE_ID.fullmatch(row[ID]):
            a, b = row[ID].split("-")
            moved[ID] = f"{int(a) + offset}-{int(b) + offset}"
        else:
            moved[ID] = str(int(row[ID]) + offset)
            if _WORD_ID.fullmatch(row[HEAD]):
                moved[HEAD] = str(int(row[HEAD]) + offset)
            if row[DEPS] != "_":
                moved[DEPS] = "|".join(_shift_edge(item, offset) for item in row[DEPS].split("|"))
        rows.append(moved)
    return rows


def _shift_edge(item: str, offset: int) -> str:
    head, sep, label = item.partition(":")
    return f"{int(head) + offset}:{label}" if sep and head.isdigit() and head != "0" else item


def join_trees(
    first: tuple[Sequence[int], Sequence[str]], second: tuple[Sequence[int], Sequence[str]]
) -> tuple[list[int], list[str]]:
    """Two trees (``n+1`` entries each) as one head graph over the joined words (two roots):
    the old tree :func:`merge_sentences`'s word map carries."""
    offset = len(first[0]) - 1
    heads = [*first[0], *(h + offset if h > 0 else h for h in second[0][1:])]
    return heads, [*first[1], *second[1][1:]]


def merge_sentences(first: Sequence[Sequence[str]], second: Sequence[Sequence[str]]) -> Retokenized:
    """One sentence of ``first``'s words then ``second``'s; the second's root attaches to the
    first's root as ``parataxis``. The word map refers to the joined old words
    (:func:`join_rows`; carry other trees joined by :func:`join_trees`)."""
    joined = join_rows(first, second)
    layout = _layout(joined)
    words = WordMap(tuple((w,) for w in range(1, len(layout.words) + 1)), reattach="parataxis")
    return _finish(layout.words, _Layout([list(w) for w in layout.words], layout.ranges), words)


def surface_text(rows: Sequence[Sequence[str]]) -> str:
    """The sentence's text as its tokens write it: MWT surface forms and words outside MWTs,
    separated by a space unless the token's MISC has ``SpaceAfter=No`` (the ``# text`` the UD
    validator expects).

    Examples:
        >>> surface_text([["1-2", "del", *"_" * 7, "_"], ["1", "de", *"_" * 8], ["2", "el", *"_" * 8],
        ...               ["3", "mar", *"_" * 7, "SpaceAfter=No"], ["4", ".", *"_" * 8]])
        'del mar.'
    """
    layout = _layout(rows)
    starts = {a: (b, row) for a, b, row in layout.ranges}
    parts: list[str] = []
    number = 1
    while number <= len(layout.words):
        last, row = starts.get(number, (number, layout.words[number - 1]))
        parts.append(row[FORM])
        if last < len(layout.words) and SPACE_AFTER_NO not in _misc_items(row[MISC]):
            parts.append(" ")
        number = last + 1
    return "".join(parts)


def with_comment(comments: Sequence[str], key: str, value: str) -> list[str]:
    """``comments`` with ``# key = value`` replacing the ``key`` comment (added after
    ``# sent_id`` or at the end when there is none).

    Examples:
        >>> with_comment(["# sent_id = a", "# text = x y"], "text", "xy")
        ['# sent_id = a', '# text = xy']
    """
    line = f"# {key} = {value}"
    out = list(comments)
    for index, comment in enumerate(out):
        name, sep, _ = comment[1:].partition("=")
        if comment.startswith("#") and sep and name.strip() == key:
            out[index] = line
            return out
    after = next((i + 1 for i, c in enumerate(out) if c[1:].partition("=")[0].strip() == "sent_id"), len(out))
    out.insert(after, line)
    return out


__all__ = [
    "Carried",
    "Retokenized",
    "TokenEditError",
    "WordMap",
    "add_multiword",
    "as_tree",
    "carry_column",
    "carry_tree",
    "join_rows",
    "join_trees",
    "merge_sentences",
    "merge_words",
    "remove_multiword",
    "split_sentence",
    "split_word",
    "surface_text",
    "with_comment",
]
