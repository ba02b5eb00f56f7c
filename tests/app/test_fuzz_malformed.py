"""Hypothesis on the importer with the malformed files of issue #31's row 12: any valid file
given a second root, a multiword range past its sentence's last word, a HEAD in non-ASCII digits,
a space inside DEPREL or a NUL character is refused, naming the changed line, and stores nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from app.models import User
from app.services.imports import import_conllu
from parsing.conllu_io import ConlluError
from tests.app.test_fuzz_import import FUZZ, _rows, fuzz_session, valid_conllu  # noqa: F401  (fixture)

PROBLEMS = {"two-roots": "a second root", "range": "goes past the sentence's last word",
            "digit": "is not an integer", "deprel": "has a space", "nul": "NUL character"}
DIGITS = ["\uff10", "\uff11", "\u0663", "\u0967", "\u00b2"]
"""Digits that are not ASCII: fullwidth 0 and 1, Arabic-Indic 3, Devanagari 1, superscript 2."""


def _block(lines: list[str], at: int) -> list[int]:
    """Indexes of the token lines of the sentence holding line ``at``."""
    start, end = at, at
    while start > 0 and lines[start - 1] and not lines[start - 1].startswith("#"):
        start -= 1
    while end + 1 < len(lines) and lines[end + 1]:
        end += 1
    return list(range(start, end + 1))


@st.composite
def malformed(draw: st.DrawFn) -> tuple[str, int, str]:
    """``(file, 1-based line to be named, kind)``: a valid file with one row-12 fault."""
    lines = draw(valid_conllu()).split("\n")
    rows = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
    kind = draw(st.sampled_from(sorted(PROBLEMS)))
    at = draw(st.sampled_from(rows))
    columns = lines[at].split("\t")
    block = _block(lines, at)
    dependents = [i for i in block if lines[i].split("\t")[6] != "0"]
    if kind == "two-roots" and dependents:
        at = draw(st.sampled_from(dependents))
        root = next(i for i in block if lines[i].split("\t")[6] == "0")
        columns = lines[at].split("\t")
        columns[6] = "0"
        lines[at] = "\t".join(columns)
        return "\n".join(lines), max(at, root) + 1, kind
    if kind == "range":
        lines.insert(at, f"{columns[0]}-{len(block) + 1}\tmany\t_\t_\t_\t_\t_\t_\t_\t_")
        return "\n".join(lines), at + 1, kind
    if kind == "digit":
        columns[6] = draw(st.sampled_from(DIGITS))
    elif kind == "nul":
        columns[1] = columns[1][:1] + "\x00" + columns[1][1:]
    else:
        kind = "deprel"
        columns[7] = columns[7][:1] + draw(st.sampled_from([" ", "\u00a0", "\u2003"])) + columns[7][1:]
    lines[at] = "\t".join(columns)
    return "\n".join(lines), at + 1, kind


@FUZZ
@given(case=malformed())
def test_row_12_faults_are_refused_naming_their_line(fuzz_session: tuple[Session, User],  # noqa: F811
                                                     case: tuple[str, int, str]) -> None:
    text, line, kind = case
    session, user = fuzz_session
    savepoint = session.begin_nested()
    before = _rows(session)
    try:
        try:
            import_conllu(session, data=text.encode(), filename="bad.conllu", treebank_name="bad",
                          split="train", user=user)
        except ConlluError as error:
            assert (error.line, kind) == (line, kind), str(error)
            assert PROBLEMS[kind] in error.problem, str(error)
            assert _rows(session) == before
        else:
            raise AssertionError(f"a file with a {kind} fault at line {line} was imported")
    finally:
        savepoint.rollback()
