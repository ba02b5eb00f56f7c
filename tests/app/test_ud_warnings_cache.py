"""The UD validator's warnings are kept per sentence text (app.services.ud_checks): opening a
sentence again skips the validator, and what a caller does with the list never leaks back."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest
from flask import Flask
from sqlalchemy.orm import Session

from app.models import Treebank, User
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


def test_a_web_worker_builds_its_validators_before_it_serves(
    app: Flask, session: Session, user: User,
) -> None:
    """gunicorn.conf.py's post_worker_init warms the validator of every treebank language (and
    levels 1–3), so no first request waits 1–2 s for one under the lock."""
    session.add(Treebank(name="wolof warm", language="wo", created_by_id=user.id))
    session.add(Treebank(name="no language warm", language="", created_by_id=user.id))
    session.commit()
    ud_checks._validator.cache_clear()
    hook = runpy.run_path(str(Path(__file__).resolve().parents[2] / "gunicorn.conf.py"))
    hook["post_worker_init"](SimpleNamespace(wsgi=app))
    warmed = ud_checks._validator.cache_info().misses
    assert warmed >= 2
    ud_checks.ud_warnings(sentence(ROWS), "wo")  # the first sentences opened: no validator built
    ud_checks.ud_warnings(sentence(ROWS), "")
    assert ud_checks._validator.cache_info().misses == warmed

