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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import select

from app.models import SPLITS, Document, Sentence, SentenceState, Treebank, TreeVersion
from app.parser_models import TrainingRound
from app.services import DbSession, as_utc
from app.services.parsing_adapter import load_sentences
from app.services.trees import latest_versions, source_filter
from parsing.types import NO_HEAD, ROOT, Parse
from parsing.types import Sentence as ParsingSentence

REFERENCES = ("gold", "reviewed")
"""What a scoreboard scores against."""


class SourceError(ValueError):
    """An unknown source, split or reference, named in the message."""


@dataclass(frozen=True)
class Trees:
    """One source's trees: ``trees[sentence id]`` and, per sentence, the round that made it."""

    source: str
    trees: dict[int, TreeVersion]
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


def parse_of_version(tree: TreeVersion) -> Parse:
    """A stored tree as a parse over positions 0..n (``heads[0] == -1``; None heads are -1)."""
    heads = np.array([NO_HEAD, *(NO_HEAD if h is None else int(h) for h in tree.heads)], dtype=np.intp)
    upos = None if tree.upos is None else [ROOT, *(str(tag) for tag in tree.upos)]
    return Parse(heads=heads, deprels=["", *(str(label or "_") for label in tree.deprels)], upos=upos)


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
        trees = latest_versions(session, sorted(reviewed_ids(session, sentence_ids)), "latest")
    else:
        trees = latest_versions(session, list(sentence_ids), source)
    machine = source_filter(name)[0] in ("parser", "ensemble")
    rounds = {sid: round_at(starts, tree.created_at) if machine else None for sid, tree in trees.items()}
    return Trees(source, trees, rounds)


def _trees_of_round(
    session: DbSession, sentence_ids: Sequence[int], name: str, number: int, starts: Sequence[tuple[Any, int]]
) -> dict[int, TreeVersion]:
    kind, parser = source_filter(name)
    found: dict[int, TreeVersion] = {}
    ids = list(sentence_ids)
    for start in range(0, len(ids), 5000):
        versions = session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id.in_(ids[start:start + 5000]), TreeVersion.kind == kind,
            TreeVersion.name == parser).order_by(TreeVersion.version))
        for tree in versions:
            if round_at(starts, tree.created_at) == number:
                found[tree.sentence_id] = tree  # the newest of the round wins
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
