"""The arc error detector (:mod:`parsing.detect`) in rounds, the queue and the suspicious-arcs page.

* :func:`fit_round_detector`: a round fits its detector on the trees that score it (the dev
  split, or the held-out slice: trees the members were not trained on), from the members' parses
  it already made of them, counting its training trees; saved in the round's model directory
  (``detector.model``) before the files are published, so their checksums cover it.
* :func:`score_parsed`: while a round pre-annotates, the detector scores each ensemble tree; the
  sentence's state keeps every word's ``p_wrong`` and their sum (``suspicion``, the expected
  number of wrong arcs), which the queue's ``detector`` order sorts by.
* :func:`suspicious_arcs`: the page's rows: every arc of one source's trees (the ensemble's,
  gold, reviewed, the newest correction) ranked by ``p_wrong``, scored on request from the
  members' stored trees, with each counted training tree left out of the counts it is scored
  against (so a gold tree never vouches for itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from app.models import Document, Sentence, Treebank, TreeVersion
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.sources import Trees, load_trees, reviewed_ids, split_sentence_ids, words_of
from parsing.detect.bundle import DETECTOR_FILE, fit_model_detector, with_tags
from parsing.detect.counts import tree_events
from parsing.detect.model import ArcDetector, ScoredTree
from parsing.pipeline import ModelBundle
from parsing.types import Parse
from parsing.types import Sentence as ParsingSentence

MIN_WORDS = 30
"""Fewer evaluation words than this: the round fits no detector (too little to learn from)."""
MAX_SCORED = 400
"""The page scores at most this many sentences per request (the first, in document order)."""
SOURCES = ("ensemble", "reviewed", "gold", "latest")
"""The trees the page can rank."""


def fit_round_detector(model_dir: str | Path, bundle: ModelBundle, train: Sequence[ParsingSentence],
                       evaluation: Sequence[ParsingSentence],
                       member_parses: Mapping[str, Sequence[Parse]]) -> dict[str, Any]:
    """Fit and save the round's detector; what happened, for the round's record.

    Returns:
        ``parsing.detect.bundle.fit_model_detector``'s record, or ``{"skipped": REASON}`` when
        the round has no ensemble, too few evaluation words, or no wrong (or no right) arc.
    """
    words = sum(len(s) for s in evaluation)
    if bundle.ensemble is None:
        return {"skipped": "the round has no ensemble"}
    if words < MIN_WORDS or not member_parses:
        return {"skipped": f"{words} evaluation words (dev or held out); the detector needs {MIN_WORDS}"}
    complete = [s for s in train if s.has_tree]
    try:
        return fit_model_detector(model_dir, complete, evaluation, member_parses=member_parses, bundle=bundle)
    except ValueError as error:  # every evaluation arc right (or wrong): nothing to learn
        return {"skipped": str(error)}


def round_detector(model_dir: str | Path) -> ArcDetector | None:
    """The detector saved in a round's model directory, or None when it has none."""
    path = Path(model_dir) / DETECTOR_FILE
    return ArcDetector.load(path) if path.is_file() else None


def score_parsed(detector: ArcDetector, sentences: Sequence[ParsingSentence],
                 by_name: Mapping[str, Sequence[Parse]], trees: Sequence[Parse]) -> list[list[float]]:
    """``p_wrong`` of every word of each tree (the ensemble's, as stored) of ``sentences``,
    rounded for storage; the tags are those each tree was parsed with."""
    first = detector.members[0]
    scored = [ScoredTree(with_tags(sentence, tree.upos or by_name[first][i].upos),
                         np.asarray(tree.heads, dtype=np.intp),
                         list(tree.deprels), {name: by_name[name][i] for name in detector.members})
              for i, (sentence, tree) in enumerate(zip(sentences, trees, strict=True))]
    return [[round(float(p), 4) for p in scores] for scores in detector.score(scored)]


def newest_detector_round(session: DbSession, treebank: Treebank) -> TrainingRound | None:
    """The newest round of ``treebank`` whose model directory holds a detector."""
    rounds = session.scalars(select(TrainingRound).where(TrainingRound.treebank_id == treebank.id)
                             .order_by(TrainingRound.number.desc()))
    return next((r for r in rounds if (Path(r.model_dir) / DETECTOR_FILE).is_file()), None)


@dataclass(frozen=True)
class SuspiciousArcs:
    """The page's arcs, most likely wrong first, and what they were drawn from."""

    rows: list[dict[str, Any]]
    round_number: int | None
    scored_sentences: int
    candidates: int
    members: list[str]


def _counted_ids(session: DbSession, sentence_ids: Sequence[int]) -> set[int]:
    """Sentences whose newest tree a round trains on (train split, reviewed pool sentences)."""
    train = set(session.scalars(select(Sentence.id).join(Document).where(
        Sentence.id.in_(list(sentence_ids)), Document.split == "train")))
    return train | reviewed_ids(session, [sid for sid in sentence_ids if sid not in train])


def _attach_probabilities(session: DbSession, trees: Sequence[ScoredTree], sentence_ids: Sequence[int],
                          confident: Mapping[str, Trees]) -> None:
    """Give the confident members' parses in ``trees`` their stored arc probabilities (the
    versions' ``scores``; the stored trees load without them): the detector reads them."""
    for name, stored in confident.items():
        version_ids = [stored.trees[sid].id for sid in sentence_ids]
        scores: dict[int, list[Any] | None] = {version_id: given for version_id, given in session.execute(
            select(TreeVersion.id, TreeVersion.scores).where(TreeVersion.id.in_(version_ids)))}
        for tree, version_id in zip(trees, version_ids, strict=True):
            given, parse = scores.get(version_id), tree.member_parses[name]
            if given is not None and len(given) == len(parse.heads) - 1:
                probabilities = np.array([np.nan, *(np.nan if x is None else float(x) for x in given)])
                tree.member_parses = {**tree.member_parses,
                                      name: Parse(parse.heads, parse.deprels, arc_scores=probabilities,
                                                  upos=parse.upos)}


def suspicious_arcs(session: DbSession, treebank: Treebank, *, source: str, split: str | None,
                    detector: ArcDetector, round_number: int | None,
                    limit: int = MAX_SCORED) -> SuspiciousArcs:
    """Every arc of ``source``'s trees in ``split`` (those with all the detector's members' trees),
    ranked by ``p_wrong``; at most ``limit`` sentences are scored.

    Raises:
        app.services.sources.SourceError: an unknown source or split.
    """
    ids = split_sentence_ids(session, treebank, split)
    scored = load_trees(session, treebank, ids, source)
    members = {name: load_trees(session, treebank, ids, name) for name in detector.members}
    ready = [sid for sid in ids if sid in scored.trees and all(sid in m.trees for m in members.values())]
    chosen = ready[:limit]
    words = words_of(session, chosen)
    counted = _counted_ids(session, chosen)
    latest = load_trees(session, treebank, [sid for sid in chosen if sid in counted], "latest")
    trees: list[ScoredTree] = []
    kept: list[int] = []
    for sid in chosen:
        tree, sentence = scored.parse(sid), words[sid]
        parses = {name: members[name].parse(sid) for name in detector.members}
        if len(tree) != len(sentence) or np.any(tree.heads[1:] < 0) or any(
                len(p) != len(sentence) for p in parses.values()):
            continue  # a tree of other words (a token split since) or an unfinished one
        tags = tree.upos or parses[detector.members[0]].upos
        own = None
        if sid in latest.trees:
            counted_tree = latest.parse(sid)
            if len(counted_tree) == len(sentence) and np.all(counted_tree.heads[1:] >= 0):
                own = tree_events(sentence, counted_tree.heads, counted_tree.deprels)
        trees.append(ScoredTree(with_tags(sentence, tags), tree.heads, list(tree.deprels), parses, own,
                                given=source != "ensemble"))
        kept.append(sid)
    _attach_probabilities(session, trees, kept, {name: members[name] for name in detector.confident})
    rows: list[dict[str, Any]] = []
    for sid, item, p in zip(kept, trees, detector.score(trees), strict=True):
        for word, value in enumerate(p.tolist(), start=1):
            head = int(item.heads[word])
            rows.append({"sentence_id": sid, "sent_id": item.sentence.sent_id, "word": word,
                         "form": item.sentence.forms[word], "upos": item.sentence.upos[word],
                         "head": head, "head_form": "ROOT" if head == 0 else item.sentence.forms[head],
                         "deprel": item.deprels[word], "p_wrong": float(value)})
    order = {sid: i for i, sid in enumerate(kept)}
    rows.sort(key=lambda row: (-row["p_wrong"], order[row["sentence_id"]], row["word"]))
    return SuspiciousArcs(rows, round_number, len(kept), len(ready), list(detector.members))
