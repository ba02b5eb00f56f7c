"""Stable pre-annotation: a round keeps a pool sentence's previous ensemble arcs unless its
members back new ones by more than the margin (issue #30 item 4, churn)."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.demo import setup_demo
from app.services.parsing_adapter import load_sentences
from app.services.preannotate import TrainedRound, parse_batch
from app.services.stable_trees import Stability, same_setup
from app.services.trees import latest_versions
from parsing.ensemble.stability import keep_previous
from parsing.pipeline import load_models
from tests.app.helpers import run_round


def pool_ids(session: Session, treebank: Treebank) -> list[int]:
    return list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == "pool").order_by(Sentence.id)))


def stored(session: Session, ids: list[int]) -> dict[int, tuple[list[int], list[str]]]:
    versions = latest_versions(session, ids, "ensemble")
    return {sid: (list(v.heads), list(v.deprels)) for sid, v in versions.items()}


def test_a_round_keeps_previous_arcs_within_the_margin_and_takes_clear_leads(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    setup_demo(session, user=user, sentences=50)  # 30 train, 10 dev, 10 pool
    treebank = session.scalars(select(Treebank)).one()
    first = run_round(app, session, user, treebank, ["graph1", "eager", "hybrid"])
    pool = pool_ids(session, treebank)
    previous = stored(session, pool)
    assert set(previous) == set(pool)
    bundle = load_models(first.model_dir)
    members, fresh = bundle.parse_with_ensemble(load_sentences(session, pool))

    # margin 1: every previous arc stays (they are trees), whatever the new members say
    keep_all = Stability(margin=1.0)
    parse_batch(session, TrainedRound(bundle, list(first.weights), stability=keep_all), pool, user=user)
    assert stored(session, pool) == previous

    # off: the bundle's own trees
    parse_batch(session, TrainedRound(bundle, list(first.weights), stability=None), pool, user=user)
    assert stored(session, pool) == {sid: ([int(h) for h in fresh[i].heads[1:]], list(fresh[i].deprels[1:]))
                                     for i, sid in enumerate(pool)}

    # the defaults: exactly what keep_previous makes of the stored trees (the previous members'
    # trees are this bundle's own, so adding their votes leaves every share as it is)
    before = stored(session, pool)
    parse_batch(session, TrainedRound(bundle, list(first.weights)), pool, user=user)
    names = list(members)
    for i, sid in enumerate(pool):
        expected = keep_previous([members[name][i] for name in names], list(first.weights), fresh[i],
                                 [-1, *before[sid][0]], ["", *before[sid][1]])
        version = latest_versions(session, [sid], "ensemble")[sid]
        assert list(version.heads) == [int(h) for h in expected.heads[1:]]
        assert list(version.deprels) == list(expected.deprels[1:])
    versions = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == pool[0],
                                                         TreeVersion.kind == "ensemble")).all()
    assert len(versions) == 4  # every round's tree is a new version, kept or not



def test_previous_trees_are_kept_only_when_the_round_votes_as_the_last_one(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    setup_demo(session, user=user, sentences=50)
    treebank = session.scalars(select(Treebank)).one()
    first = run_round(app, session, user, treebank, ["graph1", "eager"])

    def next_round(parsers: list[str], ensemble: str | None = None, grown: int = 1) -> TrainingRound:
        return TrainingRound(treebank_id=treebank.id, number=first.number + 1, parsers=parsers, tags="gold",
                             ensemble=ensemble or first.ensemble, model_dir="/nowhere", user_id=user.id,
                             train_sentences=(first.train_sentences or 0) + grown)

    assert same_setup(session, next_round(["eager", "graph1"]), [])
    assert not same_setup(session, next_round(["eager", "graph1"]), ["chain"])  # a new external voter
    assert not same_setup(session, next_round(["eager"]), [])  # other members
    assert not same_setup(session, next_round(["eager", "graph1"], "vote-power"), [])  # another method
    assert not same_setup(session, next_round(["eager", "graph1"], grown=10), [])  # 30 trees + 10: +33%
    alone = TrainingRound(treebank_id=treebank.id, number=first.number, parsers=["hybrid"], tags="gold",
                          model_dir="/nowhere", user_id=user.id)
    assert same_setup(session, alone, [])  # no earlier round
