"""Re-tokenized real sentences pass the UD validator as the originals do (issue #32): on UD
English-EWT dev (multiword tokens, enhanced DEPS) and Welsh-CCG dev, splitting a word, merging
two words and cutting a sentence in two add no format, tree, metadata or enhanced-graph problem
(levels 1 and 2 of :func:`app.services.ud_checks.ud_warnings`, the checks the editor and the
validation report run)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from app.services.ud_checks import ud_warnings
from parsing import tokens_edit as te
from parsing.conllu_io import FORM, ID, ConlluSentence, read_conllu

Rows = list[list[str]]


def serious(comments: list[str], rows: Rows, language: str) -> Counter[str]:
    """Level 1-2 problems of the sentence, by test (``# text`` written from the tokens)."""
    raw = ConlluSentence(te.with_comment(comments, "text", te.surface_text(rows)), rows)
    return Counter(w["test"] for w in ud_warnings(raw, language) if w["level"] <= 2)


def edited(rows: Rows, n: int, long_words: list[int]) -> list[tuple[str, Rows]]:
    """The sentence after each edit tried on it (an edit refused, e.g. across a multiword token's
    edge or on a one-word sentence, is left out)."""
    edits: list[tuple[str, Callable[[], list[Rows]]]] = [
        ("merge", lambda: [te.merge_words(rows, max(1, n // 3)).rows]),
        ("cut", lambda: [part.rows for part in te.split_sentence(rows, max(1, n // 2))]),
    ]
    if long_words:
        edits.append(("split", lambda: [te.split_word(rows, long_words[-1], 1).rows]))
    found = []
    for name, edit in edits:
        try:
            found += [(name, result) for result in edit()]
        except te.TokenEditError:
            continue
    return found


@pytest.mark.parametrize(("path", "language"), [("UD_English-EWT/en_ewt-ud-dev.conllu", "en"),
                                                ("UD_Welsh-CCG/cy_ccg-ud-dev.conllu", "cy")])
def test_edits_of_real_sentences_add_no_validator_problem(ud_dir: Path, path: str, language: str) -> None:
    sentences = [s for s in read_conllu(ud_dir / path) if not any("." in r[ID] for r in s.rows)][:150]
    added: Counter[tuple[str, str]] = Counter()
    tried = 0
    for sentence in sentences:
        before = serious(sentence.comments, sentence.rows, language)
        n = len(sentence.words)
        long_words = [w for w in range(1, n + 1) if len(sentence.words[w - 1][FORM]) >= 2]
        for name, rows in edited(sentence.rows, n, long_words):
            tried += 1
            added.update((name, test) for test in (serious(sentence.comments, rows, language) - before))
    assert tried > 120
    assert not added, added
