"""Malformed CoNLL-U the importer used to accept (issue #31, row 12): each refused, naming its line."""

from __future__ import annotations

import pytest

from parsing.conllu_io import ConlluError, parse_conllu

OK = "1\tA\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("# c\n1\tA\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\t_\tX\t_\t_\t0\troot\t_\t_\n\n", 3,
     "a second root: words 1 and 2 both have HEAD 0"),
    ("1-5\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\t_\tX\t_\t_\t0\troot\t_\t_\n\n", 1,
     "multiword range 1-5 goes past the sentence's last word (1)"),
    ("1\tA\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\t_\tX\t_\t_\t\uff10\tdep\t_\t_\n\n", 2,
     "HEAD '\uff10' is not an integer"),
    ("1\tA\t_\tX\t_\t_\t0\tro ot\t_\t_\n\n", 1, "column DEPREL 'ro ot' has a space"),
    (OK + "1\tA\x00\t_\tX\t_\t_\t0\troot\t_\t_\n\n", 4, "holds a NUL character (U+0000)"),
    ("# text = a\x00\n" + OK, 1, "holds a NUL character"),
])
def test_malformed_rows_are_refused_naming_the_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(ConlluError) as refused:
        parse_conllu(text, source="f.conllu")
    assert str(refused.value).startswith(f"f.conllu, line {line}: {problem}")


def test_what_stays_accepted() -> None:
    assert len(parse_conllu(OK)) == 1
    spaced = "1\tNew York\tNew York\tPROPN\tNNP NNP\t_\t0\troot\t_\tSpaceAfter=No\n\n"  # FORM, LEMMA, XPOS
    assert parse_conllu(spaced)[0].words[0][1] == "New York"
    blank = "1\tA\t_\tX\t_\t_\t_\t_\t_\t_\n2\tb\t_\tX\t_\t_\t_\t_\t_\t_\n\n"  # raw text: no heads
    assert len(parse_conllu(blank)) == 1
    assert len(parse_conllu("1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + OK)) == 1
    two_roots = "1\tA\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\t_\tX\t_\t_\t0\troot\t_\t_\n\n"
    assert len(parse_conllu(two_roots, single_root=False)) == 1  # a parser's output is scored as it is
