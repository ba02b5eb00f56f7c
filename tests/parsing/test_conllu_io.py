"""CoNLL-U reading, checking and writing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import (
    ConlluError,
    decode_utf8,
    format_conllu,
    parse_conllu,
    read_conllu,
    to_sentence,
    to_tokenlist,
    with_parse,
)
from parsing.types import Parse

GOOD = (
    "# sent_id = s1\n"
    "# text = Don't go\n"
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDo\tdo\tAUX\t_\t_\t3\taux\t_\t_\n"
    "2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t_\t_\n"
    "3\tgo\tgo\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
    "3.1\tgone\t_\t_\t_\t_\t_\t_\t3:x\t_\n"
    "\n"
)


def test_round_trip_keeps_every_line() -> None:
    assert format_conllu(parse_conllu(GOOD)) == GOOD


def test_all_ud_files_round_trip_byte_for_byte(ud_root: Path) -> None:
    files = sorted(ud_root.glob("*/*.conllu"))
    assert len(files) >= 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert format_conllu(read_conllu(path)) == text, path.name


def test_sentence_arrays_skip_ranges_and_empty_nodes() -> None:
    sentence = to_sentence(parse_conllu(GOOD)[0])
    assert sentence.forms[1:] == ["Do", "n't", "go"]
    assert sentence.heads.tolist() == [-1, 3, 3, 0]
    assert sentence.deprels == ["", "aux", "advmod", "root"]
    assert sentence.sent_id == "s1"


def test_with_parse_changes_only_head_and_deprel() -> None:
    raw = parse_conllu(GOOD)[0]
    parse = Parse(heads=np.array([-1, 2, 0, 2]), deprels=["", "x", "root", "y"])
    out = format_conllu([with_parse(raw, parse)])
    assert "1\tDo\tdo\tAUX\t_\t_\t2\tx\t_\t_\n" in out
    assert "3\tgo\tgo\tVERB\t_\t_\t2\ty\t_\tSpaceAfter=No\n" in out
    assert out.count("\n") == GOOD.count("\n")
    assert "3.1\tgone" in out and "1-2\tDon't" in out
    assert format_conllu([raw]) == GOOD  # the original is untouched


def test_with_parse_writes_predicted_lemmas_xpos_and_feats_only_with_tags() -> None:
    raw = parse_conllu(GOOD)[0]
    extras: dict[str, object] = {"lemmas": ["<ROOT>", "DO", "not", "GO"],
                                 "xpos": ["<ROOT>", "VB", "RB", "VB"], "feats": ["<ROOT>", "A=1", "_", "B=2"]}
    parse = Parse(heads=np.array([-1, 2, 0, 2]), deprels=["", "x", "root", "y"],
                  upos=["<ROOT>", "VERB", "PART", "VERB"], extras=extras)
    tagged = format_conllu([with_parse(raw, parse, tags=True)])
    assert "1\tDo\tDO\tVERB\tVB\tA=1\t2\tx\t_\t_\n" in tagged
    assert "3\tgo\tGO\tVERB\tVB\tB=2\t2\ty\t_\tSpaceAfter=No\n" in tagged
    assert "1\tDo\tdo\tAUX\t_\t_\t2\tx\t_\t_\n" in format_conllu([with_parse(raw, parse)])
    extras["lemmas"] = ["<ROOT>", "", "not", "GO"]  # a predicted empty value is written as _
    assert "1\tDo\t_\tVERB\tVB\tA=1\t2\tx\t_\t_\n" in format_conllu([with_parse(raw, parse, tags=True)])


def test_raw_text_without_heads_is_accepted() -> None:
    raw = parse_conllu("1\tHi\t_\t_\t_\t_\t_\t_\t_\t_\n2\tyou\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    assert to_sentence(raw[0]).heads.tolist() == [-1, -1, -1]
    assert not to_sentence(raw[0]).has_tree


def test_tokenlist_interop() -> None:
    tokens = to_tokenlist(parse_conllu(GOOD)[0])
    assert tokens.metadata["sent_id"] == "s1"
    assert [t["form"] for t in tokens] == ["Don't", "Do", "n't", "go", "gone"]


def _row(token_id: str, head: str = "0", deprel: str = "root") -> str:
    return f"{token_id}\tw\t_\tX\t_\t_\t{head}\t{deprel}\t_\t_\n"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 0, "empty"),
        ("1\tw\t_\tX\t_\t_\t0\n\n", 1, "expected 10 tab-separated columns, found 7"),
        ("# c\n" + _row("1") + _row("2", "x", "dep") + "\n", 3, "HEAD 'x' is not an integer"),
        (_row("1") + _row("2", "5", "dep") + "\n", 2, "HEAD 5 is out of range"),
        (_row("1", "2", "dep") + _row("2", "1", "dep") + "\n", 1, "cycle: 1 -> 2 -> 1"),
        (_row("1") + _row("1", "1", "dep") + "\n", 2, "duplicate word ID 1"),
        (_row("1") + _row("3", "1", "dep") + "\n", 2, "out-of-order word ID 3"),
        (_row("1") + "\n# orphan\n", 3, "comment lines with no token lines"),
        (_row("1", "1") + "\n", 1, "its own head"),
        (_row("1") + " \n", 2, "blank line must be empty"),
        (_row("1") + "# late\n\n", 2, "comment line inside"),
        (_row("1") + _row("2", "_", "dep") + "\n", 2, "HEAD is _ while other words"),
        (_row("1-1") + _row("1") + "\n", 1, "bad multiword range"),
        (_row("x") + "\n", 1, "is not a word, range or empty-node ID"),
        ("1\t\t_\tX\t_\t_\t0\troot\t_\t_\n\n", 1, "column FORM is empty"),
    ],
)
def test_malformed_input_names_line_and_problem(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ConlluError) as caught:
        parse_conllu(text, source="bad.conllu")
    assert caught.value.line == line
    assert fragment in caught.value.problem
    assert str(caught.value).startswith("bad.conllu")


@pytest.mark.parametrize("ending", ["", "\n"])
def test_last_sentence_may_omit_its_blank_line(ending: str) -> None:
    text = _row("1") + "\n" + _row("1").rstrip("\n") + ending
    sentences = parse_conllu(text)
    assert len(sentences) == 2
    assert format_conllu(sentences) == _row("1") + "\n" + _row("1") + "\n"


def test_last_sentence_is_still_checked() -> None:
    with pytest.raises(ConlluError, match="line 3: HEAD 9 is out of range"):
        parse_conllu(_row("1") + "\n" + _row("1", "9"))


def test_trees_are_not_checked_when_asked() -> None:
    text = _row("1", "2", "dep") + _row("2", "1", "dep") + "\n"
    assert len(parse_conllu(text, check_trees=False)) == 1


def test_bad_encoding_names_the_line() -> None:
    data = _row("1").encode() + b"\n" + b"1\tw\xff\t_\tX\t_\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(ConlluError, match=r"line 3: not UTF-8 \(byte 0xff\)"):
        decode_utf8(data, source="f")


def test_byte_order_mark_is_refused() -> None:
    with pytest.raises(ConlluError, match="byte-order mark"):
        decode_utf8("\ufeff".encode() + _row("1").encode())
