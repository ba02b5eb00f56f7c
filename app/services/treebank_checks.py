"""The UD validator over a whole treebank (issue #32): every sentence of one source and split,
checked as :mod:`app.services.ud_checks` checks one sentence in the editor, plus the one check
that needs the whole treebank and costs nothing: sentence ids must be unique.

Run by the ``validate`` job (:mod:`app.jobs.check_tasks`); its result is the report
(:func:`validate_treebank`'s dict), drawn by the validation page (:mod:`app.views.checks`).
Levels: 1–3 always, 4–5 when the validator knows the treebank's language
(:func:`app.services.ud_checks.levels_for`). Sentences without a tree from the source are
counted (``without_tree``), not checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from app.models import Sentence, Treebank
from app.services import DbSession
from app.services.exports import sentence_conllu
from app.services.search import check_source
from app.services.sources import check_split, load_trees, split_sentence_ids
from app.services.ud_checks import levels_for, ud_warnings
from parsing.conllu_io import FORM, ID

MAX_INCIDENTS = 20_000
"""Incidents listed in a report at most (the counts cover them all: ``truncated`` says so)."""
BATCH = 250
"""Sentences loaded per query (and per progress report)."""

Report = dict[str, Any]
"""``{source, split, language, levels, sentences, without_tree, total, truncated,
tests: [{test, level, count, sentences}], incidents: [{sentence_id, sent_id, word, form, test,
level, message}]}``; ``tests`` by level, then most frequent first."""


def validate_treebank(
    session: DbSession, treebank: Treebank, *, source: str = "gold", split: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """The validation report of ``treebank``'s ``source`` trees (one ``split``, or all).

    :raise SourceError: an unknown source or split (before anything is checked).
    """
    check_source(session, treebank, source)
    split = check_split(split)
    language = treebank.language or ""
    ids = split_sentence_ids(session, treebank, split)
    incidents: list[dict[str, Any]] = []
    checked = 0
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        trees = load_trees(session, treebank, chunk, source).trees
        order = {sid: index for index, sid in enumerate(chunk)}
        sentences = session.scalars(select(Sentence).where(Sentence.id.in_(list(trees))))
        for sentence in sorted(sentences, key=lambda row: order[row.id]):
            incidents += _sentence_incidents(session, sentence, trees[sentence.id], language)
            checked += 1
        if progress is not None:
            progress(min(start + BATCH, len(ids)), len(ids))
    incidents += _duplicate_ids(session, ids)
    return _report(incidents, source=source, split=split, language=language, checked=checked,
                   without_tree=len(ids) - checked)


def _sentence_incidents(
    session: DbSession, sentence: Sentence, tree: Any, language: str
) -> list[dict[str, Any]]:
    """The validator's messages on one sentence, each with its word's form (a validator
    failure is one incident, as in the editor)."""
    try:
        raw = sentence_conllu(session, sentence, tree)
        found = ud_warnings(raw, language)
    except Exception as error:  # a tree without heads, or a bug in the checker: one incident
        return [_incident(sentence, 0, "", 0, "validator-failed", f"the UD validator failed: {error}")]
    forms = {row[ID]: row[FORM] for row in raw.rows}
    return [_incident(sentence, item["word"], forms.get(str(item["word"]), ""), item["level"], item["test"],
                      item["message"]) for item in found]


def _incident(
    sentence: Sentence, word: int, form: str, level: int, test: str, message: str
) -> dict[str, Any]:
    return {"sentence_id": sentence.id, "sent_id": sentence.sent_id, "word": word, "form": form,
            "level": level, "test": test, "message": message}


def _duplicate_ids(session: DbSession, ids: list[int]) -> list[dict[str, Any]]:
    """One ``non-unique-sent-id`` incident (level 2, as the validator names it) on every
    sentence whose ``sent_id`` an earlier sentence of the checked ones has."""
    seen: set[str] = set()
    found = []
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        rows = {sid: sent_id for sid, sent_id in session.execute(
            select(Sentence.id, Sentence.sent_id).where(Sentence.id.in_(chunk)))}
        for sid in chunk:
            sent_id = rows.get(sid)
            if sent_id and sent_id in seen:
                found.append({"sentence_id": sid, "sent_id": sent_id, "word": 0, "form": "", "level": 2,
                              "test": "non-unique-sent-id",
                              "message": f"Non-unique sent_id attribute {sent_id!r}"})
            elif sent_id:
                seen.add(sent_id)
    return found


def _report(incidents: list[dict[str, Any]], *, source: str, split: str | None, language: str, checked: int,
            without_tree: int) -> Report:
    counts = Counter((item["level"], item["test"]) for item in incidents)
    where: dict[tuple[int, str], set[int]] = {}
    for item in incidents:
        where.setdefault((item["level"], item["test"]), set()).add(item["sentence_id"])
    sentences = {key: len(found) for key, found in where.items()}
    tests = [{"test": test, "level": level, "count": count, "sentences": sentences[(level, test)]}
             for (level, test), count in sorted(counts.items(),
                                                key=lambda pair: (pair[0][0], -pair[1], pair[0][1]))]
    return {"source": source, "split": split, "language": language, "levels": levels_for(language),
            "sentences": checked, "without_tree": without_tree, "total": len(incidents),
            "truncated": len(incidents) > MAX_INCIDENTS, "tests": tests,
            "incidents": incidents[:MAX_INCIDENTS]}


def incidents_by_test(report: Report) -> dict[str, list[dict[str, Any]]]:
    """The report's incidents grouped by test id, in document order."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for item in report.get("incidents") or []:
        grouped.setdefault(str(item["test"]), []).append(item)
    return grouped
