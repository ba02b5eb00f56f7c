"""Trees of a whole treebank (or split) by source, ready for the scorer: the reference trees
(``gold`` or ``reviewed``), any stored source, a source as one training round left it
(``ensemble@3``), and which round made each parse.

Source names are those of :mod:`app.services.trees` (``gold``, ``latest``, ``ensemble``, a
parser's name: a member or an external parser's label) plus:

* ``reviewed``: the trees a person vouches for, i.e. the newest correction (else the imported
  tree) of every sentence an annotator marked reviewed, and the imported tree of every train,
  dev and test sentence nobody has marked (their trees came in finished); the rule of
  ``export --reviewed-only``.
* ``NAME@R`` (a parser or ``ensemble``): the newest tree of NAME made during round ``R``.

A parse's round is not stored: it is the newest round of the treebank that had started when the
tree was saved (rounds run one after another, each storing its parses after its own start).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from sqlalchemy import Text, cast, func, select

from app.models import SPLITS, Document, Sentence, SentenceState, Treebank, TreeVersion
from app.parser_models import TrainingRound
from app.services import DbSession, as_utc
from app.services.parsing_adapter import load_sentences
from app.services.trees import source_filter
from parsing.types import NO_HEAD, ROOT, Parse
from parsing.types import Sentence as ParsingSentence

REFERENCES = ("gold", "reviewed")
"""What a scoreboard scores against."""


class SourceError(ValueError):
    """An unknown source, split or reference, named in the message."""


@dataclass(frozen=True, slots=True)
class StoredTree:
    """What scoring and search read of a :class:`~app.models.TreeVersion` (its columns, not the
    ORM object: a whole treebank's versions load several times faster, without their scores and
    edits). The columns an annotation may store besides UPOS (``xpos``, ``lemmas``, ``feats``,
    read by search and export) stay JSON text until asked for."""

    id: int
    sentence_id: int
    version: int
    heads: list[Any]
    deprels: list[Any]
    upos: list[Any] | None
    created_at: Any
    kind: str = ""
    xpos_json: str | None = None
    lemmas_json: str | None = None
    feats_json: str | None = None
    provenance_json: str | None = None

    @property
    def provenance(self) -> list[Any] | None:
        return _json_list(self.provenance_json)

    @property
    def xpos(self) -> list[Any] | None:
        return _json_list(self.xpos_json)

    @property
    def lemmas(self) -> list[Any] | None:
        return _json_list(self.lemmas_json)

    @property
    def feats(self) -> list[Any] | None:
        return _json_list(self.feats_json)

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> StoredTree:
        """A tree from a row of :data:`STORED_COLUMNS` (JSON columns as text: one ``json.loads``
        each is several times faster than the JSON type's own result processing)."""
        upos = None if row[5] is None else json.loads(row[5])
        return cls(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]), upos, row[6], row[7],
                   row[8], row[9], row[10], row[11])


def _json_list(text: str | None) -> list[Any] | None:
    """A JSON column read as text: its list, or None (SQL NULL or JSON null)."""
    value = None if text is None else json.loads(text)
    return None if value is None else list(value)


STORED_COLUMNS = (TreeVersion.id, TreeVersion.sentence_id, TreeVersion.version, cast(TreeVersion.heads, Text),
                  cast(TreeVersion.deprels, Text), cast(TreeVersion.upos, Text), TreeVersion.created_at,
                  TreeVersion.kind, cast(TreeVersion.xpos, Text), cast(TreeVersion.lemmas, Text),
                  cast(TreeVersion.feats, Text), cast(TreeVersion.provenance, Text))
"""The columns of a :class:`StoredTree`, in its fields' order (the JSON ones as text)."""


class StoredArcs(Protocol):
    """A stored tree's arcs (a :class:`~app.models.TreeVersion` or a :class:`StoredTree`)."""

    @property
    def heads(self) -> list[Any]: ...
    @property
    def deprels(self) -> list[Any]: ...
    @property
    def upos(self) -> list[Any] | None: ...


@dataclass(frozen=True)
class Trees:
    """One source's trees: ``trees[sentence id]`` and, per sentence, the round that made it."""

    source: str
    trees: dict[int, StoredTree]
    rounds: dict[int, int | None]
    _parses: dict[int, Parse] = field(default_factory=dict, repr=False, compare=False)

    def parse(self, sentence_id: int) -> Parse:
        """The tree of ``sentence_id`` as a :class:`~parsing.types.Parse` (unknown heads -1; the
        UPOS its parser predicted, when it tagged); made once per sentence (the trees are fixed)."""
        found = self._parses.get(sentence_id)
        if found is None:
            found = self._parses[sentence_id] = parse_of_version(self.trees[sentence_id])
        return found

    @property
    def round_numbers(self) -> list[int]:
        """The rounds this source's trees come from, sorted."""
        return sorted({number for number in self.rounds.values() if number is not None})


def parse_of_version(tree: StoredArcs) -> Parse:
    """A stored tree as a parse over positions 0..n (``heads[0] == -1``; None heads are -1; empty
    labels are ``_``)."""
    stored_heads, labels = tree.heads, tree.deprels
    if None in stored_heads:
        stored_heads = [NO_HEAD if h is None else h for h in stored_heads]
    heads = np.array([NO_HEAD, *stored_heads], dtype=np.intp)
    if None in labels or "" in labels:
        labels = [label or "_" for label in labels]
    upos = None if tree.upos is None else [ROOT, *map(str, tree.upos)]
    return Parse(heads=heads, deprels=["", *map(str, labels)], upos=upos)


def check_split(split: str | None) -> str | None:
    """``split`` when it is one of :data:`~app.models.SPLITS` or empty (all splits)."""
    if split and split not in SPLITS:
        raise SourceError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    return split or None


def split_sentence_ids(session: DbSession, treebank: Treebank, split: str | None) -> list[int]:
    """Ids of the treebank's sentences with words (in one split, or all), in document order."""
    where = [Document.treebank_id == treebank.id, Sentence.n_words > 0]
    if check_split(split):
        where.append(Document.split == split)
    return list(session.scalars(select(Sentence.id).join(Document).where(*where)
                                .order_by(Document.position, Sentence.position)))


def words_of(session: DbSession, sentence_ids: Sequence[int]) -> dict[int, ParsingSentence]:
    """The words (forms, lemmas, tags from the token rows; no tree) of each sentence."""
    return dict(zip(sentence_ids, load_sentences(session, list(sentence_ids)), strict=True))


def reviewed_ids(session: DbSession, sentence_ids: Sequence[int]) -> set[int]:
    """The sentences with a ``reviewed`` tree (see the module docstring)."""
    ids = list(sentence_ids)
    marked: set[int] = set()
    imported: set[int] = set()
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        marked.update(session.scalars(select(SentenceState.sentence_id).where(
            SentenceState.sentence_id.in_(chunk), SentenceState.status == "reviewed")))
        imported.update(session.scalars(
            select(TreeVersion.sentence_id).join(Sentence).join(Document)
            .where(TreeVersion.sentence_id.in_(chunk), TreeVersion.kind == "gold", Document.split != "pool")))
    return marked | imported


def round_starts(session: DbSession, treebank: Treebank) -> list[tuple[Any, int]]:
    """``(start, number)`` of every round of the treebank, by start (UTC)."""
    rows = session.execute(select(TrainingRound.started_at, TrainingRound.created_at, TrainingRound.number)
                           .where(TrainingRound.treebank_id == treebank.id))
    return sorted((as_utc(started or created), number) for started, created, number in rows)


def round_at(starts: Sequence[tuple[Any, int]], moment: Any) -> int | None:
    """The number of the newest round started at or before ``moment`` (None: before any round)."""
    index = bisect.bisect_right([start for start, _ in starts], as_utc(moment))
    return starts[index - 1][1] if index else None


def load_trees(session: DbSession, treebank: Treebank, sentence_ids: Sequence[int], source: str) -> Trees:
    """The trees of ``source`` (see the module docstring) for those of ``sentence_ids`` that have one.

    :raise SourceError: an empty source name or a malformed ``NAME@R``.
    """
    if not source:
        raise SourceError("choose a source")
    starts = round_starts(session, treebank)
    name, at, number = source.partition("@")
    if at:
        if not number.isdigit() or name in ("gold", "latest", "reviewed", "annotation", ""):
            raise SourceError(f"{source!r}: a round is written NAME@NUMBER after a parser or ensemble")
        trees = _trees_of_round(session, sentence_ids, name, int(number), starts)
    elif source == "reviewed":
        trees = _newest_trees(session, sorted(reviewed_ids(session, sentence_ids)), "latest")
    else:
        trees = _newest_trees(session, list(sentence_ids), source)
    machine = source_filter(name)[0] in ("parser", "ensemble")
    rounds = {sid: round_at(starts, tree.created_at) if machine else None for sid, tree in trees.items()}
    return Trees(source, trees, rounds)


def _newest_trees(session: DbSession, sentence_ids: list[int], source: str) -> dict[int, StoredTree]:
    """:func:`~app.services.trees.latest_versions` as :class:`StoredTree` rows (``latest`` falls
    back to the gold tree)."""
    found = _newest_of(session, sentence_ids, *source_filter(source))
    if source == "latest":
        missing = [sid for sid in sentence_ids if sid not in found]
        if missing:
            found.update(_newest_of(session, missing, "gold", ""))
    return found


def _newest_of(session: DbSession, sentence_ids: list[int], kind: str, name: str) -> dict[int, StoredTree]:
    found: dict[int, StoredTree] = {}
    for start in range(0, len(sentence_ids), 5000):
        chunk = sentence_ids[start:start + 5000]
        of_source = (TreeVersion.kind == kind, TreeVersion.name == name)
        newest = (select(TreeVersion.sentence_id, func.max(TreeVersion.version).label("version"))
                  .where(TreeVersion.sentence_id.in_(chunk), *of_source)
                  .group_by(TreeVersion.sentence_id).subquery())
        same = (TreeVersion.sentence_id == newest.c.sentence_id) & (TreeVersion.version == newest.c.version)
        rows = session.execute(select(*STORED_COLUMNS).join(newest, same)
                               .where(*of_source))
        found.update((row.sentence_id, StoredTree.of_row(row)) for row in rows)
    return found


def _trees_of_round(
    session: DbSession, sentence_ids: Sequence[int], name: str, number: int, starts: Sequence[tuple[Any, int]]
) -> dict[int, StoredTree]:
    kind, parser = source_filter(name)
    found: dict[int, StoredTree] = {}
    ids = list(sentence_ids)
    for start in range(0, len(ids), 5000):
        versions = session.execute(select(*STORED_COLUMNS).where(
            TreeVersion.sentence_id.in_(ids[start:start + 5000]), TreeVersion.kind == kind,
            TreeVersion.name == parser).order_by(TreeVersion.version))
        for row in versions:
            if round_at(starts, row.created_at) == number:
                found[row.sentence_id] = StoredTree.of_row(row)  # the newest of the round wins
    return found


def parser_sources(session: DbSession, sentence_ids: Sequence[int]) -> list[str]:
    """Names of the parsers (members and external) with a tree for any of the sentences, sorted."""
    ids = list(sentence_ids)
    names: set[str] = set()
    for start in range(0, len(ids), 5000):
        names.update(session.scalars(select(TreeVersion.name).distinct().where(
            TreeVersion.sentence_id.in_(ids[start:start + 5000]), TreeVersion.kind == "parser")))
    return sorted(names)


def reference_sentences(
    words: dict[int, ParsingSentence], reference: Trees
) -> dict[int, ParsingSentence]:
    """The sentences with a whole reference tree, as gold sentences for the scorer."""
    found = {}
    for sid in reference.trees:
        sentence, parse = words.get(sid), reference.parse(sid)
        if sentence is None or len(parse) != len(sentence) or not np.all(parse.heads[1:] >= 0):
            continue
        found[sid] = ParsingSentence(
            forms=sentence.forms, lemmas=sentence.lemmas, upos=sentence.upos, xpos=sentence.xpos,
            feats=sentence.feats, heads=parse.heads, deprels=parse.deprels,
            sent_id=sentence.sent_id)
    return found
