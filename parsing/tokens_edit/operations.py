"""The re-tokenizing operations on a sentence's CoNLL-U token lines (:mod:`parsing.tokens_edit`):
split or merge words, add or remove a multiword token, split a sentence, merge two (with
:func:`join_rows`/:func:`join_trees`, the old numbering a merge's word map refers to).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from parsing.conllu_io import DEPS, FORM, HEAD, ID, LEMMA, MISC, UPOS
from parsing.tokens_edit.carry import WordMap
from parsing.tokens_edit.misc import (
    SPACE_AFTER_NO,
    _misc,
    _space_after_of,
    _with_space_after,
    _without_space_after,
)
from parsing.tokens_edit.rows import (
    _RANGE_ID,
    _WORD_ID,
    Retokenized,
    Row,
    TokenEditError,
    _check_word,
    _finish,
    _Layout,
    _layout,
    _tree_of_rows,
)

_SPACE = re.compile(r"\s")


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
