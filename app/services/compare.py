"""Compare two sources of a treebank (member vs member, member vs gold, ensemble vs reviewed,
``ensemble@3`` vs ``ensemble@2``; see :mod:`app.services.sources` for the names).

On the sentences both sources have a tree for: how often they agree, the label confusion matrix
(A's universal label against B's) and the sentences they differ on. When a reference (``gold`` or
``reviewed``) has a tree for those sentences too, each source is scored against it (CoNLL 2018
conventions) and the difference is tested with the paired tests of
:mod:`parsing.scorer.significance` (bootstrap and approximate randomisation over sentences,
McNemar over arcs); when one of the two *is* the reference, the other's score against it is the
comparison and there is nothing to test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import select

from app.models import Sentence, Treebank
from app.services import DbSession
from app.services.sources import (
    REFERENCES,
    SourceError,
    load_trees,
    reference_sentences,
    split_sentence_ids,
    words_of,
)
from parsing.scorer.compare import Agreement, Difference, pair_report
from parsing.scorer.metrics import Evaluation, arc_tables, evaluate_table
from parsing.scorer.significance import PairedComparison, compare_tables
from parsing.types import Parse
from parsing.types import Sentence as ParsingSentence

RESAMPLES = 2000
"""Bootstrap samples and randomisation trials of the web comparison (seeded: reproducible)."""


@dataclass(frozen=True)
class DifferingSentence:
    """A sentence the two sources differ on, with its words that differ."""

    sentence_id: int
    sent_id: str | None
    text: str | None
    difference: Difference


@dataclass
class Comparison:
    """Everything the compare page shows about sources ``a`` and ``b``."""

    a: str
    b: str
    against: str
    split: str | None
    sentences: int
    """Sentences with a tree from both sources."""
    agreement: Agreement
    confusion: Counter[tuple[str, str]]
    differing: list[DifferingSentence]
    scored_sentences: int = 0
    """Of those, sentences with a reference tree too (what the scores and the tests use)."""
    scores: dict[str, Evaluation] = field(default_factory=dict)
    tests: dict[str, PairedComparison] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        """Every universal label in the confusion matrix, sorted."""
        return sorted({label for pair in self.confusion for label in pair})


def compare_sources(
    session: DbSession, treebank: Treebank, a: str, b: str, *, split: str | None = None,
    against: str = "gold", resamples: int = RESAMPLES,
) -> Comparison:
    """Compare sources ``a`` and ``b`` of ``treebank`` (one split, or all) against ``against``.

    :raise SourceError: the same source twice, an unknown split or reference, a malformed name.
    """
    if a == b:
        raise SourceError("choose two different sources")
    if against not in REFERENCES:
        raise SourceError(f"against must be one of {', '.join(REFERENCES)}, not {against!r}")
    ids = split_sentence_ids(session, treebank, split)
    words = words_of(session, ids)
    first, second = load_trees(session, treebank, ids, a), load_trees(session, treebank, ids, b)
    both = [sid for sid in ids if sid in first.trees and sid in second.trees
            and len(first.trees[sid].heads) == len(second.trees[sid].heads) == len(words[sid])]
    parses_a = [first.parse(sid) for sid in both]
    parses_b = [second.parse(sid) for sid in both]
    info = {sid: (sent_id, text) for sid, sent_id, text in session.execute(
        select(Sentence.id, Sentence.sent_id, Sentence.text).where(Sentence.id.in_(both)))} if both else {}
    pair = pair_report(parses_a, parses_b)
    result = Comparison(
        a, b, against, split, len(both), pair.agreement, pair.confusion,
        [DifferingSentence(both[d.index], *info[both[d.index]], d) for d in pair.differences])
    _score(result, reference_sentences(words, load_trees(session, treebank, both, against)), both,
           dict(zip(both, parses_a, strict=True)), dict(zip(both, parses_b, strict=True)), resamples)
    return result


def _score(result: Comparison, gold: Mapping[int, ParsingSentence], both: list[int],
           parses_a: Mapping[int, Parse], parses_b: Mapping[int, Parse], resamples: int) -> None:
    """Score both sources on the sentences with a reference tree, and test the difference."""
    scored = [sid for sid in both if sid in gold]
    result.scored_sentences = len(scored)
    if not scored:
        return
    reference = [gold[sid] for sid in scored]
    system_a, system_b = [parses_a[sid] for sid in scored], [parses_b[sid] for sid in scored]
    table_a, table_b = arc_tables(reference, [system_a, system_b])  # each made once, gold lined up once
    result.scores = {result.a: evaluate_table(table_a), result.b: evaluate_table(table_b)}
    if result.against not in (result.a, result.b):
        result.tests = compare_tables(table_a, table_b, resamples=resamples, seed=0)
