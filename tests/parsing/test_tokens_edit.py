"""Re-tokenizing sentences (:mod:`parsing.tokens_edit`) on real UD trees (English-EWT dev: multiword
tokens and enhanced DEPS; Welsh-CCG dev: multiword tokens), and on small hand-made ones.

Every result must read back as CoNLL-U with one tree and one root, the text its tokens write must
stay the sentence's text where the operation keeps it, and undoing an operation by its inverse
must give the arcs back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parsing.conllu_io import (
    DEPREL,
    DEPS,
    FORM,
    HEAD,
    ID,
    MISC,
    ConlluSentence,
    format_conllu,
    parse_conllu,
    read_conllu,
)
from parsing.tokens_edit import (
    Carried,
    TokenEditError,
    WordMap,
    add_multiword,
    as_tree,
    carry_column,
    carry_tree,
    join_trees,
    merge_sentences,
    merge_words,
    remove_multiword,
    split_sentence,
    split_word,
    surface_text,
    with_comment,
)

SENTENCES = 150
"""Sentences of each file checked (the operations are tried at every word of each)."""


def _real(ud_root: Path, path: str) -> list[ConlluSentence]:
    found = [s for s in read_conllu(ud_root / path) if not any("." in row[ID] for row in s.rows)]
    return found[:SENTENCES]


@pytest.fixture(scope="module")
def ewt(ud_root: Path) -> list[ConlluSentence]:
    return _real(ud_root, "UD_English-EWT/en_ewt-ud-dev.conllu")


@pytest.fixture(scope="module")
def welsh(ud_root: Path) -> list[ConlluSentence]:
    return _real(ud_root, "UD_Welsh-CCG/cy_ccg-ud-dev.conllu")


def words(rows: list[list[str]]) -> list[list[str]]:
    return [row for row in rows if row[ID].isdigit()]


def tree(rows: list[list[str]]) -> list[tuple[str, str]]:
    return [(row[HEAD], row[DEPREL]) for row in words(rows)]


def reads_back(rows: list[list[str]], text: str | None = None) -> ConlluSentence:
    """The rows as CoNLL-U: read back with every tree check (one root, no cycle, heads in range)."""
    comments = ["# sent_id = t", f"# text = {text if text is not None else surface_text(rows)}"]
    (sentence,) = parse_conllu(format_conllu([ConlluSentence(comments, rows)]), single_root=True)
    ids = [row[ID] for row in sentence.words]
    assert ids == [str(i) for i in range(1, len(ids) + 1)]
    below: dict[int, list[int]] = {}
    for row in rows:
        if row[DEPS] != "_":
            edges = [item.split(":")[0] for item in row[DEPS].split("|")]
            assert all(0 <= int(head) <= len(ids) for head in edges), row
            assert [int(h) for h in edges] == sorted(int(h) for h in edges), row
            for head in edges:
                below.setdefault(int(head), []).append(int(row[ID]))
    if below:  # the enhanced graph reaches every word from ROOT (UD: unconnected-egraph)
        reached, todo = set(), [0]
        while todo:
            for child in below.get(todo.pop(), []):
                if child not in reached:
                    reached.add(child)
                    todo.append(child)
        assert reached == set(range(1, len(ids) + 1)), sorted(set(range(1, len(ids) + 1)) - reached)
    return sentence


def test_surface_text_is_the_text_of_real_sentences(
    ewt: list[ConlluSentence], welsh: list[ConlluSentence]
) -> None:
    for sentence in ewt + welsh:
        assert surface_text(sentence.rows) == sentence.text, sentence.sent_id


def test_split_then_merge_gives_the_word_and_its_arcs_back(ewt: list[ConlluSentence]) -> None:
    tried = 0
    for sentence in ewt:
        for number, row in enumerate(sentence.words, start=1):
            if len(row[FORM]) < 2 or " " in row[FORM]:
                continue
            split = split_word(sentence.rows, number, 1)
            assert split.n_words == len(sentence.words) + 1
            reads_back(split.rows, sentence.text)  # the text does not change: SpaceAfter=No on the first part
            first, second = words(split.rows)[number - 1 : number + 1]
            assert first[FORM] + second[FORM] == row[FORM]
            assert (second[HEAD], second[DEPREL]) == (str(number), "dep")
            back = merge_words(split.rows, number)
            assert tree(back.rows) == tree(sentence.rows), (sentence.sent_id, number)
            assert [w[FORM] for w in words(back.rows)] == [w[FORM] for w in sentence.words]
            assert [w[DEPS] for w in words(back.rows)] == [w[DEPS] for w in sentence.words]
            assert surface_text(back.rows) == sentence.text
            tried += 1
    assert tried > 1000


def test_merging_any_two_words_keeps_a_tree(ewt: list[ConlluSentence], welsh: list[ConlluSentence]) -> None:
    merged = refused = 0
    for sentence in ewt + welsh:
        old = [(int(row[HEAD]), row[DEPREL]) for row in sentence.words]
        for number in range(1, len(sentence.words)):
            try:
                result = merge_words(sentence.rows, number)
            except TokenEditError as error:
                assert error.field == "word" and "multiword token" in str(error)
                refused += 1
                continue
            reads_back(result.rows)
            merged += 1
            carried = carry_tree([-1, *(h for h, _ in old)], ["", *(d for _, d in old)], result.words)
            # the merged word keeps the arc of the part whose head is outside the pair
            one, two = old[number - 1], old[number]
            expected = one if one[0] != number + 1 else two
            if expected[0] not in (number, number + 1) and number not in carried.changed:
                want = expected[0] - (1 if expected[0] > number + 1 else 0)
                assert carried.heads[number] == (want if want else 0)
            # every word not in the pair keeps its label
            for w in range(1, len(old) + 1):
                if w in (number, number + 1):
                    continue
                new = w if w < number else w - 1
                if new not in carried.changed:
                    assert carried.deprels[new] == old[w - 1][1]
    assert merged > 2000 and refused > 0


def test_cutting_a_sentence_keeps_the_arcs_inside_each_part(ewt: list[ConlluSentence]) -> None:
    cuts = 0
    for sentence in ewt[:60]:
        n = len(sentence.words)
        heads = [int(row[HEAD]) for row in sentence.words]
        for after in range(1, n):
            try:
                first, second = split_sentence(sentence.rows, after)
            except TokenEditError as error:
                assert error.field == "after"
                continue
            cuts += 1
            reads_back(first.rows)
            reads_back(second.rows)
            assert first.n_words + second.n_words == n
            for word in range(1, n + 1):
                head = heads[word - 1]
                inside = (head == 0 or head <= after) if word <= after else head > after
                part, number = (first, word) if word <= after else (second, word - after)
                row = words(part.rows)[number - 1]
                if inside and head != 0 and row[DEPREL] != "dep":
                    assert int(row[HEAD]) == (head if word <= after else head - after)
            joined = merge_sentences(first.rows, second.rows)
            reads_back(joined.rows)
            assert [w[FORM] for w in words(joined.rows)] == [w[FORM] for w in sentence.words]
            assert surface_text(joined.rows) == sentence.text
    assert cuts > 500


def test_removing_and_adding_a_multiword_token_gives_the_lines_back(
    ewt: list[ConlluSentence], welsh: list[ConlluSentence]
) -> None:
    checked = 0
    for sentence in ewt + welsh:
        for row in sentence.rows:
            if "-" not in row[ID]:
                continue
            first, last = (int(x) for x in row[ID].split("-"))
            removed = remove_multiword(sentence.rows, first)
            assert len(removed.rows) == len(sentence.rows) - 1
            assert tree(removed.rows) == tree(sentence.rows)
            reads_back(removed.rows)
            inner = [w[MISC] for w in words(removed.rows)[first - 1 : last - 1]]
            assert all("SpaceAfter=No" in misc for misc in inner)
            again = add_multiword(removed.rows, first, last, row[FORM])
            assert again.rows == [list(r) for r in sentence.rows], sentence.sent_id
            checked += 1
    assert checked > 100


def test_refusals_name_the_field(ewt: list[ConlluSentence]) -> None:
    rows = ewt[0].rows
    n = len(ewt[0].words)
    cases = [
        (lambda: split_word(rows, 0, 1), "word"),
        (lambda: split_word(rows, n + 1, 1), "word"),
        (lambda: split_word(rows, 1, 0), "at"),
        (lambda: split_word(rows, 1, 99), "at"),
        (lambda: merge_words(rows, n), "word"),
        (lambda: add_multiword(rows, 2, 2, "x"), "last"),
        (lambda: add_multiword(rows, 1, 2, "a b"), "form"),
        (lambda: add_multiword(rows, 1, 2, ""), "form"),
        (lambda: remove_multiword(rows, 1), "first"),
        (lambda: split_sentence(rows, n), "after"),
        (lambda: split_sentence(rows, 0), "after"),
    ]
    for call, field in cases:
        with pytest.raises(TokenEditError) as caught:
            call()
        assert caught.value.field == field
    with_empty = [*rows, ["8.1", "x", "_", "_", "_", "_", "_", "_", "_", "_"]]
    with pytest.raises(TokenEditError, match="empty node"):
        merge_words(with_empty, 1)


MWT_ROWS = [
    ["1", "Vamos", "ir", "VERB", "_", "_", "0", "root", "_", "_"],
    ["2-3", "do", "_", "_", "_", "_", "_", "_", "_", "_"],
    ["2", "de", "de", "ADP", "_", "_", "4", "case", "_", "_"],
    ["3", "o", "o", "DET", "_", "_", "4", "det", "_", "_"],
    ["4", "mar", "mar", "NOUN", "_", "_", "1", "obl", "_", "SpaceAfter=No"],
    ["5", ".", ".", "PUNCT", "_", "_", "1", "punct", "_", "_"],
]


def test_multiword_tokens_move_with_splits_and_merges() -> None:
    assert surface_text(MWT_ROWS) == "Vamos do mar."
    split = split_word(MWT_ROWS, 2, 1)  # inside the MWT: the range grows, no SpaceAfter inside it
    assert [r[ID] for r in split.rows] == ["1", "2-4", "2", "3", "4", "5", "6"]
    assert split.rows[2][MISC] == "_" and surface_text(split.rows) == "Vamos do mar."
    merged = merge_words(MWT_ROWS, 2)  # the two words of the MWT: one word written as the MWT
    assert [r[ID] for r in merged.rows] == ["1", "2", "3", "4"]
    assert merged.rows[1][FORM] == "do" and merged.rows[1][HEAD] == "3" and merged.rows[1][DEPREL] == "case"
    with pytest.raises(TokenEditError, match="same multiword token"):
        merge_words(MWT_ROWS, 3)
    with pytest.raises(TokenEditError, match="inside multiword token"):
        split_sentence(MWT_ROWS, 2)
    with pytest.raises(TokenEditError, match="already are a multiword token"):
        add_multiword(MWT_ROWS, 3, 4, "omar")


def test_as_tree_repairs_lost_arcs_and_cycles() -> None:
    fixed = as_tree([-1, 3, None, 0, 0], ["", "nsubj", "obj", "root", "root"])
    assert fixed.heads == [-1, 3, 3, 0, 3] and fixed.deprels[2] == "dep" and fixed.changed == [2, 4]
    no_root = as_tree([-1, None, 1, None], ["", "nsubj", "obj", "punct"])  # the bigger headless part roots
    assert no_root.heads == [-1, 0, 1, 1] and no_root.deprels[1] == "root"
    cycle = as_tree([-1, 2, 3, 1, 0], ["", "a", "b", "c", "root"], changed=[3])
    assert cycle.heads == [-1, 2, 3, 4, 0] and cycle.changed == [3]


def test_a_merge_that_would_make_a_cycle_is_repaired() -> None:
    # 1 <- 2 (nsubj), 2 -> 3? here: word 1's head is 3, word 3's head is 2: merging 1 and 2 makes
    # {1,2} head 3 while 3 hangs from {1,2}: a cycle, cut at the merged word.
    words_map = WordMap(((1, 2), (3,)))
    carried = carry_tree([-1, 3, 0, 2], ["", "obj", "root", "xcomp"], words_map)
    assert carried.heads[1:] in ([0, 1], [2, 0]) and carried.changed
    assert sorted(h for h in carried.heads[1:]).count(0) == 1


def test_carry_column_and_join() -> None:
    carried = Carried([-1, 0, 1, 1], ["", "root", "dep", "obj"], [None, 1, None, 2], [2])
    assert carry_column(["VERB", "NOUN"], carried, "X") == ["VERB", "X", "NOUN"]
    heads, labels = join_trees(([-1, 0, 1], ["", "root", "obj"]), ([-1, 2, 0], ["", "nsubj", "root"]))
    assert heads == [-1, 0, 1, 4, 0] and labels == ["", "root", "obj", "nsubj", "root"]
    assert with_comment(["# newdoc", "# sent_id = a"], "text", "b") == [
        "# newdoc",
        "# sent_id = a",
        "# text = b",
    ]
