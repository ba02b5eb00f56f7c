"""Agreement and adjudication of doubly annotated sentences.

A sentence is doubly annotated when it has blind assignments (:mod:`app.services.assignments`):
each of its annotators saved trees on their own branch. Once every one of them is done (saved as
reviewed), the sentence counts for **agreement** (:func:`treebank_agreement`, computed by
:mod:`parsing.scorer.agreement` over each pair's newest branch trees) and is **ready** for a
curator to **adjudicate** (:func:`adjudicate`): the chosen tree becomes the next version of the
main line, saved as reviewed, so training and export (the ``latest`` source) use it and only it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from sqlalchemy import select

from app.models import Document, Sentence, SentenceState, Treebank, TreeVersion, User
from app.services import DbSession
from app.services.assignments import blind_branches
from app.services.audit import record
from app.services.workspace import newest_trees, save_annotation
from app.team_models import Assignment
from parsing.scorer.agreement import AgreementCounts, sentence_agreement


@dataclass
class DoubleSentence:
    """One doubly annotated sentence as the adjudication list shows it: its annotators
    (user name → done), whether it is adjudicated, and on how many words the done
    annotators' trees differ (None until two are done)."""

    id: int
    sent_id: str | None
    text: str
    annotators: dict[str, bool] = field(default_factory=dict)
    adjudicated: bool = False
    differing: int | None = None

    @property
    def ready(self) -> bool:
        """Every annotator is done."""
        return bool(self.annotators) and all(self.annotators.values())


def _blind_rows(session: DbSession, treebank: Treebank) -> list[Any]:
    return list(session.execute(
        select(Assignment.sentence_id, User.username, Assignment.done_at, Sentence.sent_id, Sentence.text)
        .join(User, User.id == Assignment.user_id).join(Sentence, Sentence.id == Assignment.sentence_id)
        .join(Document, Document.id == Sentence.document_id)
        .where(Document.treebank_id == treebank.id, Assignment.blind)
        .order_by(Document.position, Sentence.position, Assignment.id)))


def _branch_trees(session: DbSession, sentence_ids: Sequence[int]) -> dict[tuple[int, str], TreeVersion]:
    """(sentence id, branch) → the newest version of every annotation line (main line: "")."""
    newest: dict[tuple[int, str], TreeVersion] = {}
    for start in range(0, len(sentence_ids), 5000):
        query = (select(TreeVersion).where(TreeVersion.sentence_id.in_(sentence_ids[start:start + 5000]),
                                           TreeVersion.kind == "annotation").order_by(TreeVersion.version))
        for tree in session.scalars(query):
            newest[(tree.sentence_id, tree.name)] = tree
    return newest


def double_sentences(session: DbSession, treebank: Treebank) -> list[DoubleSentence]:
    """The treebank's doubly annotated sentences in document order."""
    found: dict[int, DoubleSentence] = {}
    for sentence_id, name, done_at, sent_id, text in _blind_rows(session, treebank):
        entry = found.setdefault(sentence_id, DoubleSentence(sentence_id, sent_id, text or ""))
        entry.annotators[name] = done_at is not None
    trees = _branch_trees(session, list(found))
    reviewed = set(session.scalars(select(SentenceState.sentence_id).where(
        SentenceState.sentence_id.in_(list(found)), SentenceState.status == "reviewed"))) if found else set()
    for entry in found.values():
        entry.adjudicated = entry.id in reviewed and (entry.id, "") in trees
        done = [trees[(entry.id, name)] for name, ok in entry.annotators.items()
                if ok and (entry.id, name) in trees]
        if len(done) >= 2:
            entry.differing = sum(len({(t.heads[w], t.deprels[w]) for t in done}) > 1
                                  for w in range(len(done[0].heads)))
    return list(found.values())


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of annotators ``a`` and ``b`` (``a`` < ``b``) on the sentences both finished."""

    a: str
    b: str
    counts: AgreementCounts


def treebank_agreement(session: DbSession, treebank: Treebank) -> tuple[list[PairAgreement], AgreementCounts]:
    """Per annotator pair and pooled over the treebank (every pair's words added), on the doubly
    annotated sentences where both annotators of the pair are done."""
    sentences = double_sentences(session, treebank)
    trees = _branch_trees(session, [s.id for s in sentences])
    pairs: dict[tuple[str, str], AgreementCounts] = {}
    for entry in sentences:
        done = sorted(name for name, ok in entry.annotators.items() if ok and (entry.id, name) in trees)
        for a, b in combinations(done, 2):
            tree_a, tree_b = trees[(entry.id, a)], trees[(entry.id, b)]
            counts = sentence_agreement(tree_a.heads, tree_a.deprels, tree_b.heads, tree_b.deprels)
            pairs[(a, b)] = pairs.get((a, b), AgreementCounts()) + counts
    rows = [PairAgreement(a, b, counts) for (a, b), counts in sorted(pairs.items())]
    return rows, sum((row.counts for row in rows), AgreementCounts())


def candidates(session: DbSession, sentence: Sentence) -> list[tuple[str, TreeVersion]]:
    """The trees a curator picks from: each blind annotator's newest branch version (in
    assignment order), then the ensemble's."""
    trees = newest_trees(session, sentence.id)
    names = blind_branches(session, sentence.id)
    found = [(name, trees[("annotation", name)]) for name in names if ("annotation", name) in trees]
    if ("ensemble", "") in trees:
        found.append(("ensemble", trees[("ensemble", "")]))
    return found


def arc_choices(
    sources: Sequence[tuple[str, TreeVersion]], n: int, adjudicated: TreeVersion | None = None
) -> list[dict[str, Any]]:
    """Per word 1..n: the distinct arcs (``options``: ``{head, deprel, by: [sources]}``), whether
    the annotators differ (``differs``; the ensemble does not count) and the option offered
    first (``chosen``: the adjudicated tree's arc, else the annotators' majority, ties to the first)."""
    rows = []
    for w in range(n):
        options: dict[tuple[int, str], list[str]] = {}
        for name, tree in sources:
            options.setdefault((int(tree.heads[w]), str(tree.deprels[w])), []).append(name)
        annotators = Counter((int(tree.heads[w]), str(tree.deprels[w]))
                             for name, tree in sources if tree.kind == "annotation")
        chosen = annotators.most_common(1)[0][0] if annotators else next(iter(options), None)
        if adjudicated is not None:
            chosen = (int(adjudicated.heads[w]), str(adjudicated.deprels[w]))
            options.setdefault(chosen, [])
        rows.append({"word": w + 1, "differs": len(annotators) > 1, "chosen": chosen,
                     "options": [{"head": h, "deprel": d, "by": by} for (h, d), by in options.items()]})
    return rows


def adjudicate(
    session: DbSession, sentence: Sentence, *, heads: Sequence[Any], deprels: Sequence[Any],
    expected_version: int, user: User,
) -> TreeVersion:
    """Save the curator's tree as the next main-line version, reviewed, every arc's provenance
    ``human`` (the curator chose each one), and record an ``adjudicate`` event saying which
    source each arc came from (as counts).

    :raise InvalidTree, Conflict: as :func:`app.services.workspace.save_annotation`.
    """
    every_word = list(range(1, sentence.n_words + 1))
    tree = save_annotation(session, sentence, heads=heads, deprels=deprels, expected_version=expected_version,
                           user=user, status="reviewed", human_words=every_word).tree
    picked: Counter[str] = Counter()
    for name, source in candidates(session, sentence):
        picked[name] = sum(source.heads[w] == tree.heads[w] and source.deprels[w] == tree.deprels[w]
                           for w in range(sentence.n_words))
    record(session, "adjudicate", user=user, treebank=sentence.document.treebank, sentence_id=sentence.id,
           version=tree.version, agreeing_arcs=dict(picked), words=sentence.n_words)
    return tree
