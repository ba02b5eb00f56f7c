"""The biaffine member's predicted UPOS, XPOS, FEATS and lemmas as storable columns
(:mod:`parsing.word_columns`), consistent with what ``parse`` writes to CoNLL-U."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import parsing.word_columns as word_columns
from parsing.conllu_io import FEATS, LEMMA, XPOS, load_sentences, parse_conllu, with_parse
from parsing.types import ROOT, Parse, Sentence
from parsing.word_columns import WordColumns, column_source, member_columns, predicted_columns
from tests.parsing.conftest import UD_ROOT

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"


def test_doctests() -> None:
    assert doctest.testmod(word_columns).failed == 0


def _parse(**extras: object) -> Parse:
    return Parse(np.array([-1, 2, 0]), ["", "det", "root"], upos=[ROOT, "DET", "NOUN"], extras=dict(extras))


def test_own_tags_win_over_the_tags_parsed_with_and_root_is_left_out() -> None:
    columns = predicted_columns(_parse(upos=[ROOT, "PRON", "VERB"], feats=[ROOT, "_", "Tense=Past"]))
    assert columns == WordColumns(upos=["PRON", "VERB"], feats=["_", "Tense=Past"])
    assert predicted_columns(_parse()).to_json() == {"upos": ["DET", "NOUN"]}
    assert not predicted_columns(Parse(np.array([-1, 0]), ["", "root"]))


def test_a_column_that_does_not_fit_the_tree_is_refused() -> None:
    with pytest.raises(ValueError, match="lemmas has 2 entries for 2 words"):
        predicted_columns(_parse(lemmas=[ROOT, "a"]))


def test_json_round_trip_and_refusals() -> None:
    columns = WordColumns(upos=["DET", "NOUN"], lemmas=["die", "kat"])
    assert WordColumns.from_json(columns.to_json()) == columns
    for data, message in [({"lemma": ["a"]}, "unknown column"), ({"upos": "DET"}, "list of strings"),
                          ({"upos": ["DET"], "xpos": ["a", "b"]}, "different lengths")]:
        with pytest.raises(ValueError, match=message):
            WordColumns.from_json(data)


def test_the_source_is_the_self_tagging_member() -> None:
    assert column_source(["graph1", "eager"]) is None
    assert column_source(["eager", "biaffine"]) == "biaffine"
    assert member_columns({"graph1": [_parse()]}) is None


def test_the_biaffine_members_columns_match_what_parse_writes_to_conllu() -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.member import BiaffineParser

    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    sentences: list[Sentence] = [s for s in load_sentences(AFRIKAANS)[:600] if len(s) <= 9][:36]
    member = BiaffineParser(word_dim=8, char_dim=6, char_hidden=8, hidden=16, layers=1, arc_dim=16,
                            label_dim=8, max_epochs=2, patience=2, batch_size=8)
    member.fit(sentences[:30], sentences[30:])
    test = sentences[30:]
    parses = {"biaffine": member.predict(test)}
    columns = member_columns(parses)
    assert columns is not None and len(columns) == len(test)
    raw = parse_conllu("".join(
        "".join(f"{i}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_\n" for i, form in enumerate(s.forms[1:], start=1))
        + "\n" for s in test), check_trees=False)
    for sentence, parse, found, source in zip(test, parses["biaffine"], columns, raw, strict=True):
        assert found.upos == parse.upos[1:]  # type: ignore[index]  # its own tags, parsed with
        for name in ("upos", "xpos", "feats", "lemmas"):
            values = getattr(found, name)
            assert values is not None and len(values) == len(sentence) and all(values)
        written = with_parse(source, parse, tags=True)
        assert [row[XPOS] for row in written.rows] == found.xpos
        assert [row[LEMMA] for row in written.rows] == found.lemmas
        assert [row[FEATS] for row in written.rows] == found.feats
