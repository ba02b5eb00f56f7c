"""Grew rewriting rules over a treebank (issue #32): preview every change, apply them as new tree
versions in one step, revert that step.

A rule (:mod:`parsing.grew.rules`) runs on each sentence's current tree (``latest``: the newest
annotation of the main line, else the imported tree). :func:`preview_rule` lists every word it
would change, with the sentence; :func:`apply_rule` stores exactly that preview as new annotation
versions (each based on the tree it changed, refused if someone saved a newer one meanwhile) and
one ``rule-apply`` audit event naming them; :func:`revert_rule` stores, for each of them that is
still the newest, a version equal to the tree before (a ``rule-revert`` event). Rules never store
a structure that is not a tree. Callers check ``curate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from app.models import Sentence, Treebank, TreeVersion, User
from app.services import DbSession
from app.services.audit import record
from app.services.search import graphs_of
from app.services.sources import check_split, split_sentence_ids
from app.services.token_columns import stored_attributes
from app.services.trees import add_version, latest_versions
from app.team_models import AuditEvent
from parsing.grew import Corpus, Graph
from parsing.grew.rules import Tree, parse_rule, rewrite

SHOWN = ("head", "deprel", "upos", "xpos", "lemma", "feats")
"""The word fields a preview compares."""
STORED = {"upos": "upos", "xpos": "xpos", "lemma": "lemmas", "feats": "feats"}
"""Word column → the annotation version's attribute."""


class RuleError(ValueError):
    """A rule step that cannot be done (nothing to revert, already reverted, another treebank)."""


@dataclass(frozen=True)
class WordChange:
    """One word a rule changes: its id, form and the fields that differ, before → after."""

    word: int
    form: str
    before: dict[str, str]
    after: dict[str, str]


@dataclass
class SentenceChange:
    """What the rule does to one sentence (``tree``: the version it changes)."""

    sentence_id: int
    sent_id: str | None
    tree: TreeVersion
    words: list[WordChange]
    applied: int
    refused: list[str]
    result: Tree
    text: str | None = None


@dataclass
class Preview:
    """Every change a rule makes, and the matches it refused (they would not leave a tree)."""

    rule: str
    split: str | None
    changes: list[SentenceChange] = field(default_factory=list)
    refused: list[tuple[int, str | None, str]] = field(default_factory=list)

    @property
    def matches(self) -> int:
        return sum(change.applied for change in self.changes)


def preview_rule(session: DbSession, treebank: Treebank, text: str, *, split: str | None = None,
                 seconds: float | None = None) -> Preview:
    """The changes ``text`` makes to the current trees of ``treebank`` (one split or all).

    :raise GrewSyntaxError: a malformed rule (line and column in the message).
    :raise SearchTooLong: finding the matches took more than ``seconds``.
    """
    rule = parse_rule(text)
    ids = split_sentence_ids(session, treebank, check_split(split))
    trees = latest_versions(session, ids, "latest")
    graphs = graphs_of(session, [sid for sid in ids if sid in trees], trees, misc=False)
    preview = Preview(text, split or None)
    for result in rewrite(rule, Corpus([graph for _, graph in graphs]), seconds=seconds):
        sid, graph = graphs[result.sentence]
        reasons = [reason for _, reason in result.refused]
        preview.refused.extend((sid, graph.sent_id, reason) for reason in reasons)
        if result.applied:
            words = _word_changes(graph, result.tree)
            preview.changes.append(SentenceChange(sid, graph.sent_id, trees[sid], words, len(result.applied),
                                                  reasons, result.tree))
    changed = [change.sentence_id for change in preview.changes]
    texts = {sid: text for sid, text in session.execute(
        select(Sentence.id, Sentence.text).where(Sentence.id.in_(changed)))} if changed else {}
    for change in preview.changes:
        change.text = texts.get(change.sentence_id)
    return preview


def _fields(graph: Graph | Tree, word: int) -> dict[str, str]:
    features = graph.features[word]
    feats = Tree(list(graph.heads), list(graph.deprels), list(graph.features)).feats(word)
    return {"head": str(graph.heads[word]), "deprel": graph.deprels[word], "upos": features.get("upos", "_"),
            "xpos": features.get("xpos", "_"), "lemma": features.get("lemma", "_"), "feats": feats}


def _word_changes(graph: Graph, tree: Tree) -> list[WordChange]:
    changes = []
    for word in range(1, len(graph.heads)):
        before, after = _fields(graph, word), _fields(tree, word)
        differing = [name for name in SHOWN if before[name] != after[name]]
        if differing:
            changes.append(WordChange(word, graph.features[word].get("form", ""),
                                      {n: before[n] for n in differing}, {n: after[n] for n in differing}))
    return changes


def apply_rule(session: DbSession, treebank: Treebank, text: str, *, user: User, split: str | None = None,
               expected: int | None = None, seconds: float | None = None) -> AuditEvent:
    """Store the preview's trees as new annotation versions and one ``rule-apply`` event.

    ``expected``: the number of sentences the previewed rule changed; when the trees changed
    since, :class:`RuleError` (preview again). A tree saved meanwhile: StaleVersionError.
    """
    preview = preview_rule(session, treebank, text, split=split, seconds=seconds)
    if expected is not None and expected != len(preview.changes):
        raise RuleError(f"the rule now changes {len(preview.changes)} sentences, not {expected}: "
                        "preview it again")
    if not preview.changes:
        raise RuleError("the rule changes nothing")
    versions = []
    for change in preview.changes:
        new = _store(session, change.tree, change.result, _changed_columns(change), user)
        versions.append([change.sentence_id, new.id, change.tree.id])
    return record(session, "rule-apply", user=user, treebank=treebank, rule=text, split=split,
                  sentences=len(versions), matches=preview.matches, versions=versions)


def _changed_columns(change: SentenceChange) -> set[str]:
    return {name for word in change.words for name in word.after if name in STORED}


def _store(session: DbSession, base: TreeVersion, tree: Tree, changed: set[str], user: User) -> TreeVersion:
    """A new main-line annotation of ``tree``, keeping the columns ``base`` stored and adding the changed."""
    kept = stored_attributes(base)
    columns: dict[str, list[str] | None] = {}
    for name, attribute in STORED.items():
        if name in changed or kept.get(attribute) is not None:
            columns[attribute] = [tree.feats(w) if name == "feats" else tree.features[w].get(name, "_")
                                  for w in range(1, len(tree.heads))]
    expected = base.version if base.kind == "annotation" and base.name == "" else 0
    return add_version(session, sentence_id=base.sentence_id, source="annotation", heads=tree.heads[1:],
                       deprels=tree.deprels[1:], user=user, based_on=base, expected_version=expected,
                       columns=columns)


def rule_events(session: DbSession, treebank: Treebank, limit: int = 20) -> list[dict[str, Any]]:
    """The treebank's latest rule applications, newest first: ``{event, reverted}``."""
    applied = list(session.scalars(select(AuditEvent).where(
        AuditEvent.treebank_id == treebank.id, AuditEvent.action == "rule-apply")
        .order_by(AuditEvent.id.desc()).limit(limit)))
    reverted = _reverted_ids(session, treebank)
    return [{"event": event, "reverted": event.id in reverted} for event in applied]


def _reverted_ids(session: DbSession, treebank: Treebank) -> set[int]:
    events = session.scalars(select(AuditEvent).where(AuditEvent.treebank_id == treebank.id,
                                                      AuditEvent.action == "rule-revert"))
    return {int(event.details.get("reverts", 0)) for event in events}


def revert_rule(session: DbSession, treebank: Treebank, event_id: int, *, user: User) -> AuditEvent:
    """Undo one rule application: each tree it stored that is still the newest gets a new version
    equal to the tree before; trees edited since are left (listed as ``kept``)."""
    event = session.get(AuditEvent, event_id)
    if event is None or event.action != "rule-apply" or event.treebank_id != treebank.id:
        raise RuleError("this treebank has no such rule application")
    if event_id in _reverted_ids(session, treebank):
        raise RuleError("this rule application was already reverted")
    newest = latest_versions(session, [sid for sid, _, _ in event.details["versions"]], "annotation")
    reverted, kept = [], []
    for sentence_id, new_id, old_id in event.details["versions"]:
        current, before = newest.get(sentence_id), session.get(TreeVersion, old_id)
        if current is None or current.id != new_id or before is None:
            kept.append(sentence_id)
            continue
        kept_columns = stored_attributes(before)
        columns = {attribute: _copy(kept_columns.get(attribute)) for attribute in STORED.values()}
        restored = add_version(session, sentence_id=sentence_id, source="annotation", heads=before.heads,
                               deprels=before.deprels, user=user, based_on=current,
                               expected_version=current.version, columns=columns)
        reverted.append([sentence_id, restored.id])
    return record(session, "rule-revert", user=user, treebank=treebank, reverts=event_id,
                  rule=event.details["rule"], reverted=reverted, kept=kept)


def _copy(values: list[Any] | None) -> list[str] | None:
    return None if values is None else [str(value) for value in values]
