"""The UD validator's warnings are kept per sentence text (app.services.ud_checks): opening a
sentence again skips the validator, and what a caller does with the list never leaks back."""

from __future__ import annotations

import pytest

from app.services import ud_checks
from parsing.conllu_io import ConlluSentence

ROWS = [["1", "Dogs", "dog", "NOUN", "_", "_", "2", "nsubj", "_", "_"],
        ["2", "bark", "bark", "VERB", "_", "_", "0", "root", "_", "_"],
        ["3", "loudly", "loudly", "ADV", "_", "_", "2", "punct", "_", "_"]]


def sentence(rows: list[list[str]]) -> ConlluSentence:
    return ConlluSentence(comments=["# sent_id = s1", "# text = Dogs bark loudly"],
                          rows=[list(row) for row in rows])


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    ud_checks._warnings_of_text.cache_clear()


def test_the_validator_runs_once_per_sentence_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = ud_checks._validate

    def counted(raw: ConlluSentence, language: str) -> list[dict[str, object]]:
        calls.append(language)
        return real(raw, language)

    monkeypatch.setattr(ud_checks, "_validate", counted)
    first = ud_checks.ud_warnings(sentence(ROWS), "en")
    again = ud_checks.ud_warnings(sentence(ROWS), "en")
    assert first == again and any(w["word"] == 3 for w in first)  # ADV as punct: a level-3 warning
    assert len(calls) == 1
    fixed = [row[:] for row in ROWS]
    fixed[2][7] = "advmod"
    assert ud_checks.ud_warnings(sentence(fixed), "en") != first  # another text: validated again
    ud_checks.ud_warnings(sentence(ROWS), "")  # another language: validated again
    assert len(calls) == 3


def test_a_caller_changing_the_list_does_not_change_the_kept_warnings() -> None:
    first = ud_checks.ud_warnings(sentence(ROWS), "en")
    expected = [dict(w) for w in first]
    first[0]["message"] = "changed"
    first.clear()
    assert ud_checks.ud_warnings(sentence(ROWS), "en") == expected
