"""The scoreboard of a treebank (or split): every parser, the ensemble, the oracle and the external
parsers scored against ``gold`` or ``reviewed`` trees, and which source to trust for what.

Scores follow the CoNLL 2018 conventions of :func:`parsing.scorer.metrics.evaluate` (the numbers
of ``python -m parsing evaluate`` on exported files). Each source is scored on the sentences
that have both a reference tree and a tree from it; the *oracle* (a word is right when any
parser has it right, :func:`parsing.scorer.compare.oracle_table`), the agreement matrix and the
unique-correct arcs use the sentences every parser has a tree for (``common``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import select

from app.models import Treebank
from app.parser_models import ExternalParser
from app.services import DbSession
from app.services.sources import (
    REFERENCES,
    SourceError,
    Trees,
    check_split,
    load_trees,
    parser_sources,
    reference_sentences,
    split_sentence_ids,
    words_of,
)
from parsing.scorer.breakdowns import by_arc_direction
from parsing.scorer.compare import Agreement, agreement_matrix, best_per_row, oracle_table, unique_correct
from parsing.scorer.intervals import bootstrap_intervals
from parsing.scorer.metrics import Evaluation, arc_table, arc_tables, evaluate_table
from parsing.scorer.report import evaluation_to_dict
from parsing.scorer.types import ArcTable, Attachment
from parsing.types import Sentence as ParsingSentence

ORACLE = "oracle"
"""The oracle's name on the scoreboard."""

MIN_WORDS_FOR_BEST = 5
"""A breakdown cell backed by fewer words is never marked best."""


@dataclass(frozen=True)
class SourceScore:
    """One row of the scoreboard: a source, what kind it is, its rounds and its evaluation."""

    name: str
    kind: str
    """``member`` (trained by arcvote), ``external``, ``ensemble``, ``oracle`` or ``reference``."""
    evaluation: Evaluation
    rounds: list[int]
    by_direction: dict[str, Attachment]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    """95% bootstrap interval over sentences of ``UAS`` and ``LAS``, in %."""

    def percent(self, metric: str) -> float:
        """``UAS``, ``LAS`` or ``CLAS`` (F1), in %."""
        score = {"UAS": self.evaluation.uas, "LAS": self.evaluation.las, "CLAS": self.evaluation.clas}[metric]
        return 100.0 * score.f1


@dataclass
class Scoreboard:
    """Everything the scoreboard page and ``treebank scoreboard`` show."""

    treebank: Treebank
    split: str | None
    against: str
    reference_sentences: int
    sources: list[SourceScore]
    common_sentences: int = 0
    agreement: dict[tuple[str, str], Agreement] = field(default_factory=dict)
    unique: dict[str, tuple[int, int]] = field(default_factory=dict)
    label_correct: dict[str, int] = field(default_factory=dict)

    @property
    def parsers(self) -> list[str]:
        """Members and external parsers (the oracle's and the agreement matrix's sources)."""
        return [s.name for s in self.sources if s.kind in ("member", "external")]

    def label_percent(self, name: str) -> float:
        """Label accuracy (universal label right, whatever the head) of source ``name``, in %."""
        words = next(s.evaluation.words for s in self.sources if s.name == name)
        return 100.0 * self.label_correct.get(name, 0) / words if words else 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` contract: ``{"against", "sources": {NAME: {"UAS", "LAS", "CLAS", "words"}}}``
        with the percentages of ``python -m parsing evaluate --json``."""
        sources = {}
        for source in self.sources:
            report = evaluation_to_dict(source.evaluation, breakdowns=())
            sources[source.name] = {key: report[key] for key in ("UAS", "LAS", "CLAS", "words")}
        return {"against": self.against, "sources": sources}


def scoreboard(
    session: DbSession, treebank: Treebank, *, split: str | None = None, against: str = "gold"
) -> Scoreboard:
    """Score every source of ``treebank`` (one split, or all) against ``against``.

    :raise SourceError: an unknown split or reference.
    """
    if against not in REFERENCES:
        raise SourceError(f"against must be one of {', '.join(REFERENCES)}, not {against!r}")
    split = check_split(split)
    ids = split_sentence_ids(session, treebank, split)
    words = words_of(session, ids)
    gold = reference_sentences(words, load_trees(session, treebank, ids, against))
    board = Scoreboard(treebank, split, against, len(gold), [])
    if not gold:
        return board
    scored = [sid for sid in ids if sid in gold]
    external = set(session.scalars(
        select(ExternalParser.label).where(ExternalParser.treebank_id == treebank.id)))
    names = parser_sources(session, scored)
    trees = {name: load_trees(session, treebank, scored, name) for name in names}
    kinds = {name: "external" if name in external else "member" for name in names}
    extra = ["ensemble"] + (["gold"] if against == "reviewed" else [])
    for name in extra:
        trees[name] = load_trees(session, treebank, scored, name)
        kinds[name] = "ensemble" if name == "ensemble" else "reference"
    tables = _score_sources(board, gold, scored, trees, kinds)
    _compare_parsers(board, gold, [sid for sid in scored if all(sid in trees[n].trees for n in names)],
                     {name: trees[name] for name in names}, tables)
    _add_intervals(board, tables)
    order = {"ensemble": 0, "oracle": 1, "member": 2, "external": 3, "reference": 4}
    board.sources.sort(key=lambda s: (order[s.kind], s.name))
    return board


@dataclass(frozen=True)
class ScoredTable:
    """The sentences (ids, in order) a source was scored on and its arc table over them."""

    sentence_ids: tuple[int, ...]
    table: ArcTable


def _score_sources(board: Scoreboard, gold: Mapping[int, ParsingSentence], scored: Sequence[int],
                   trees: Mapping[str, Trees], kinds: Mapping[str, str]) -> dict[str, ScoredTable]:
    """Score each source on the scored sentences it has a whole tree for (sources with the same
    sentences share one lining-up of the gold words); a source with none is left out."""
    have: dict[tuple[int, ...], list[str]] = {}
    for name, source in trees.items():
        ids = tuple(sid for sid in scored
                    if sid in source.trees and len(source.trees[sid].heads) == len(gold[sid]))
        if ids:
            have.setdefault(ids, []).append(name)
    tables = {}
    for ids, names in have.items():
        systems = [[trees[name].parse(sid) for sid in ids] for name in names]
        for name, table in zip(names, arc_tables([gold[sid] for sid in ids], systems), strict=True):
            rounds = [] if kinds[name] == "external" else trees[name].round_numbers  # uploads: no round
            _add_table(board, name, kinds[name], table, rounds)
            tables[name] = ScoredTable(ids, table)
    return tables


def _add_table(board: Scoreboard, name: str, kind: str, table: ArcTable, rounds: list[int]) -> SourceScore:
    """Score one source (its bootstrap intervals come later, from :func:`_add_intervals`)."""
    entry = SourceScore(name, kind, evaluate_table(table), rounds, by_arc_direction(table))
    board.sources.append(entry)
    board.label_correct[name] = int((table.gold_deprels == table.system_deprels).sum())
    return entry


def _add_intervals(board: Scoreboard, tables: Mapping[str, ScoredTable]) -> None:
    """Each source's ``{"UAS": (low, high), "LAS": ...}`` in %: bootstrap over the sentences it was
    scored on. Sources scored on the same sentences share one set of resamples (each interval is
    the one :func:`~parsing.scorer.intervals.bootstrap_interval` gives it alone)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for name, scored in tables.items():
        groups.setdefault(scored.sentence_ids, []).append(name)
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for ids, names in groups.items():
        words = np.bincount(tables[names[0]].table.sentence, minlength=len(ids))
        if words.sum() == 0:
            continue
        correct = [np.bincount(t.sentence[mask], minlength=len(ids)) for t in (tables[n].table for n in names)
                   for mask in (t.head_correct, t.label_correct)]  # UAS, LAS of each source in turn
        ends = iter(bootstrap_intervals(np.stack(correct), words))
        for name in names:
            intervals[name] = {metric: (100.0 * low, 100.0 * high) for metric, (low, high) in
                               zip(("UAS", "LAS"), (next(ends), next(ends)), strict=True)}
    board.sources = [replace(s, intervals=intervals.get(s.name, {})) for s in board.sources]


def _compare_parsers(board: Scoreboard, gold: Mapping[int, ParsingSentence], common: list[int],
                     trees: Mapping[str, Trees], tables: dict[str, ScoredTable]) -> None:
    """The oracle, agreement matrix and unique-correct arcs over the ``common`` sentences."""
    board.common_sentences = len(common)
    if not common or not trees:
        return
    references = [gold[sid] for sid in common]
    parses = {name: [source.parse(sid) for sid in common] for name, source in trees.items()}
    same = tuple(common)
    on_common = {name: tables[name].table if name in tables and tables[name].sentence_ids == same
                 else arc_table(references, parses[name]) for name in parses}
    if len(parses) > 1:
        oracle = oracle_table(list(on_common.values()))
        _add_table(board, ORACLE, "oracle", oracle, [])
        tables[ORACLE] = ScoredTable(same, oracle)
    board.agreement = agreement_matrix(parses)
    board.unique = unique_correct(on_common)


@dataclass(frozen=True)
class Breakdown:
    """A "which source to trust for what" table: ``values[row][source]`` (%), the words behind
    each value, and the best sources of each row (the oracle and references never count)."""

    title: str
    rows: list[str]
    columns: list[str]
    values: dict[str, dict[str, float | None]]
    words: dict[str, dict[str, int]]
    best: dict[str, set[str]]


def breakdowns(board: Scoreboard, metric: str = "LAS") -> list[Breakdown]:
    """Accuracy by gold UPOS, by relation (labelled F1) and by arc direction and length."""
    columns = [s.name for s in board.sources]

    def attachment_table(title: str, groups: Mapping[str, Mapping[str, Attachment]]) -> Breakdown:
        rows = list(dict.fromkeys(row for by_row in groups.values() for row in by_row))
        values = {row: {name: (100.0 * (g[row].las if metric == "LAS" else g[row].uas)
                               if row in g and g[row].words else None) for name, g in groups.items()}
                  for row in rows}
        words = {row: {name: g[row].words if row in g else 0 for name, g in groups.items()} for row in rows}
        return _breakdown(board, title, rows, columns, values, words)

    upos = attachment_table(f"{metric} by UPOS", {s.name: s.evaluation.by_upos for s in board.sources})
    direction = attachment_table(f"{metric} by arc direction and length",
                                 {s.name: s.by_direction for s in board.sources})
    relations = sorted({rel for s in board.sources
                        for rel, score in s.evaluation.by_deprel.items() if score.gold})
    values = {rel: {s.name: 100.0 * s.evaluation.by_deprel[rel].f1 if rel in s.evaluation.by_deprel else None
                    for s in board.sources} for rel in relations}
    words = {rel: {s.name: s.evaluation.by_deprel[rel].gold if rel in s.evaluation.by_deprel else 0
                   for s in board.sources} for rel in relations}
    relation = _breakdown(board, "Labelled F1 by relation", relations, columns, values, words)
    return [upos, relation, direction]


def _breakdown(board: Scoreboard, title: str, rows: list[str], columns: list[str],
               values: dict[str, dict[str, float | None]], words: dict[str, dict[str, int]]) -> Breakdown:
    candidates = {s.name for s in board.sources if s.kind in ("member", "external", "ensemble")}
    best = best_per_row({row: {c: v for c, v in values[row].items() if c in candidates} for row in rows},
                        min_words=MIN_WORDS_FOR_BEST, words=words)
    return Breakdown(title, rows, columns, values, words, best)


def summary_rows(board: Scoreboard) -> list[list[object]]:
    """The scoreboard table: source, kind, rounds, sentences, words, UAS, LAS, CLAS, label (%)."""
    return [[s.name, s.kind, " ".join(str(n) for n in s.rounds), s.evaluation.sentences, s.evaluation.words,
             _round(s.percent("UAS")), _round(s.percent("LAS")), _round(s.percent("CLAS")),
             _round(board.label_percent(s.name))] for s in board.sources]


SUMMARY_HEADER = ["source", "kind", "rounds", "sentences", "words", "UAS", "LAS", "CLAS", "label"]


def _round(value: float | None) -> float | str:
    return "" if value is None else round(value, 2)


def breakdown_rows(table: Breakdown) -> tuple[list[str], list[list[object]]]:
    """CSV header and rows of a breakdown: the row, then each source's value and words."""
    header = [table.title.split(" by ")[-1],
              *(f"{c} {kind}" for c in table.columns for kind in ("%", "words"))]
    rows: list[list[object]] = [
        [row, *(cell for c in table.columns
                for cell in (_round(table.values[row].get(c)), table.words[row].get(c, 0)))]
        for row in table.rows]
    return header, rows


def agreement_rows(board: Scoreboard) -> tuple[list[str], list[list[object]]]:
    """The agreement matrix (same head, %) with each parser's unique-correct heads and arcs."""
    names = board.parsers
    header = ["parser", *names, "unique heads", "unique arcs"]
    rows = [[first, *(100.0 if first == second else _round(board.agreement[(first, second)].unlabelled * 100)
                      if (first, second) in board.agreement else "" for second in names),
             *board.unique.get(first, ("", ""))] for first in names]
    return header, rows


def to_csv(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A table as CSV text (one header line)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
