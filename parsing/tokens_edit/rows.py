"""A sentence's CoNLL-U token lines for re-tokenizing (:mod:`parsing.tokens_edit`): the rows split
into words and multiword-token ranges (``_Layout``), :class:`TokenEditError`, the result of an edit
(:class:`Retokenized`: its HEAD, DEPREL and DEPS carried over by the word map) and
:func:`surface_text` (the sentence's ``# text`` from its tokens).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from parsing.conllu_io import DEPREL, DEPS, FORM, HEAD, ID, MISC
from parsing.tokens_edit.carry import WordMap, as_tree, carry_tree
from parsing.tokens_edit.misc import SPACE_AFTER_NO, _misc_items

Row = list[str]
"""One CoNLL-U token line, 10 columns."""

_WORD_ID = re.compile(r"[1-9][0-9]*")

_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")


class TokenEditError(ValueError):
    """An edit that cannot be made: ``field`` names the argument at fault, the message says why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


@dataclass(frozen=True, slots=True)
class Retokenized:
    """One sentence after an edit: its ``rows`` and the ``words`` map from the old words."""

    rows: list[Row]
    words: WordMap

    @property
    def n_words(self) -> int:
        """The number of (syntactic) words."""
        return len(self.words)


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
