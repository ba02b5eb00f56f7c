"""The rule tokenizer: sentences, words, and CoNLL-U that gives its ``# text`` back."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsing.conllu_io import FORM, MISC, format_conllu, parse_conllu, read_conllu
from parsing.tokenize import sentences_from_text, split_sentences, tokenize

LANGUAGES = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG",
             "UD_Welsh-CCG", "UD_Wolof-WTB")


def rebuilt(tokens: list[tuple[str, bool]]) -> str:
    """The text the words and their SpaceAfter stand for."""
    return "".join(form + (" " if space else "") for form, space in tokens).rstrip(" ")


def text_of_rows(rows: list[list[str]]) -> str:
    """The text a CoNLL-U sentence's FORM and MISC SpaceAfter=No stand for."""
    return "".join(row[FORM] + ("" if "SpaceAfter=No" in row[MISC] else " ") for row in rows).rstrip(" ")


def forms(sentence: str) -> list[str]:
    return [form for form, _ in tokenize(sentence)]


@pytest.mark.parametrize("treebank", LANGUAGES)
def test_real_sentences_give_their_text_back(ud_root: Path, treebank: str) -> None:
    """Every # text of a real test file, tokenized and written as CoNLL-U, reads back the same."""
    path = next((ud_root / treebank).glob("*-ud-test.conllu"))
    texts = [" ".join(s.text.split()) for s in read_conllu(path) if s.text]
    assert len(texts) > 50
    sentences = sentences_from_text("\n".join(texts), one_per_line=True, sent_id_prefix="t-")
    assert [s.text for s in sentences] == texts
    reread = parse_conllu(format_conllu(sentences))
    for sentence, text in zip(reread, texts, strict=True):
        assert text_of_rows(sentence.rows) == text
        assert all(" " not in row[FORM] and row[FORM] for row in sentence.rows)


@pytest.mark.parametrize("treebank", ["UD_Tamil-TTB", "UD_Telugu-MTG"])
def test_indic_marks_stay_inside_words(ud_root: Path, treebank: str) -> None:
    """No word of a Tamil or Telugu sentence starts with a combining mark (a split syllable)."""
    import unicodedata

    path = next((ud_root / treebank).glob("*-ud-test.conllu"))
    for raw in read_conllu(path)[:200]:
        for form in forms(raw.text or ""):
            assert not unicodedata.category(form[0]).startswith("M"), (form, raw.text)


def test_words_and_space_after() -> None:
    tokens = tokenize("“Well,” she said (twice): it's 3.5 km, not 1,000!")
    assert rebuilt(tokens) == "“Well,” she said (twice): it's 3.5 km, not 1,000!"
    assert [f for f, _ in tokens] == ["“", "Well", ",", "”", "she", "said", "(", "twice", ")", ":",
                                       "it's", "3.5", "km", ",", "not", "1,000", "!"]
    assert tokens[0] == ("“", False) and tokens[3] == ("”", True)


def test_apostrophes_hyphens_urls_and_addresses() -> None:
    assert forms("l'homme well-known 'quoted'") == ["l'homme", "well-known", "'", "quoted", "'"]
    assert forms("See https://example.org/a_b?x=1. Or www.ud.org, mail a.b+c@uni.ac.za.") == [
        "See", "https://example.org/a_b?x=1", ".", "Or", "www.ud.org", ",", "mail",
        "a.b+c@uni.ac.za", "."]
    assert forms("Wait... what?!") == ["Wait", "...", "what", "?", "!"]
    assert forms("12.03.2024, 3.") == ["12.03.2024", ",", "3", "."]


def test_indic_and_joiner_characters_stay_in_words() -> None:
    hindi = "क्षत्रिय"  # virama (Mn) between consonants
    malayalam = "ന്\u200dറെ"  # zero-width joiner inside the word
    assert forms(f"{hindi} {malayalam}।") == [hindi, malayalam, "।"]


def test_running_text_is_cut_at_terminators_with_their_closing_quotes() -> None:
    text = ('He said "Go home." Then he left! Did J. R. R. Tolkien pay 3.5 euros? '
            "Yes, e.g. twice, i.e. often, in the U.S. So it goes…  Done")
    assert split_sentences(text) == [
        'He said "Go home."', "Then he left!",
        "Did J. R. R. Tolkien pay 3.5 euros?",
        "Yes, e.g. twice, i.e. often, in the U.S. So it goes…", "Done"]


def test_other_scripts_terminators_and_paragraphs() -> None:
    assert split_sentences("राम घर गया। सीता आई॥ کیا ہوا؟ ٹھیک ہے۔") == [
        "राम घर गया।", "सीता आई॥", "کیا ہوا؟", "ٹھیک ہے۔"]
    assert split_sentences("今日は晴れ。明日は雨！本当？") == ["今日は晴れ。", "明日は雨！", "本当？"]
    assert split_sentences("ሰላም ነው። እንዴት ነህ፧") == ["ሰላም ነው።", "እንዴት ነህ፧"]
    assert split_sentences("A Heading\n\nFirst line\nwraps here. Next.") == [
        "A Heading", "First line wraps here.", "Next."]


def test_conllu_from_text_has_ids_text_and_blank_columns() -> None:
    sentences = sentences_from_text("Hi, you.\n\n  Two\tspaces  here \n", one_per_line=True,
                                    sent_id_prefix="notes-")
    assert [s.sent_id for s in sentences] == ["notes-1", "notes-2"]
    assert [s.text for s in sentences] == ["Hi, you.", "Two spaces here"]
    assert sentences[0].rows == [
        ["1", "Hi", "_", "_", "_", "_", "_", "_", "_", "SpaceAfter=No"],
        ["2", ",", "_", "_", "_", "_", "_", "_", "_", "_"],
        ["3", "you", "_", "_", "_", "_", "_", "_", "_", "SpaceAfter=No"],
        ["4", ".", "_", "_", "_", "_", "_", "_", "_", "_"],
    ]
    assert parse_conllu(format_conllu(sentences))[1].words[2][FORM] == "here"
    running = sentences_from_text("One. Two.", one_per_line=False, sent_id_prefix="r")
    assert [s.text for s in running] == ["One.", "Two."]
