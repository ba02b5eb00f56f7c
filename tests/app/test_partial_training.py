"""Rounds train on partial trees: a pool sentence saved with only some arcs human joins the
training trees, its human arcs marked ``annotated`` (the graph members learn from those only,
see tests/parsing/test_partial_training.py); it is never held out to score a round."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import Document, Sentence, Treebank, User
from app.services.preannotate import HELD_OUT_EVERY, training_data
from app.services.trees import add_version
from app.services.workspace import save_annotation, set_state
from tests.app.helpers import import_without_dev, run_round


def pool_ids(session: Session, treebank: Treebank) -> list[int]:
    return list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == "pool").order_by(Sentence.id)))


def chain(n: int) -> tuple[list[int], list[str]]:
    return [*range(2, n + 1), 0], ["dep"] * (n - 1) + ["root"]


def test_partial_trees_join_the_training_data(app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user)
    # ids far from the held-out slice's multiples of HELD_OUT_EVERY (PostgreSQL does not reuse ids
    # between tests, so the first pool ids may be multiples): a reviewed one would be held out
    far = [sid for sid in pool_ids(session, treebank) if sid % HELD_OUT_EVERY >= HELD_OUT_EVERY // 2]
    partial_id, full_id, legacy_id = far[:3]
    for sentence_id, human in ((partial_id, [1, 2]), (full_id, [1])):
        sentence = session.get(Sentence, sentence_id)
        assert sentence is not None
        heads, deprels = chain(sentence.n_words)
        save_annotation(session, sentence, heads=heads, deprels=deprels, expected_version=0, user=user,
                        human_words=human, status="reviewed" if sentence_id == full_id else None)
    legacy = session.get(Sentence, legacy_id)
    assert legacy is not None
    add_version(session, sentence_id=legacy_id, source="annotation", heads=chain(legacy.n_words)[0],
                deprels=chain(legacy.n_words)[1], user=user)  # no provenance, not reviewed: not used
    set_state(session, legacy, user=user, status="in_progress")
    session.commit()
    data = training_data(session, treebank)
    assert data.partial == 1 and partial_id in data.train_ids and full_id in data.train_ids
    assert legacy_id not in data.train_ids and partial_id not in data.held_out_ids
    by_id = dict(zip(data.train_ids, data.train, strict=True))
    partial = by_id[partial_id]
    assert partial.partial and partial.annotated is not None
    assert partial.annotated.tolist() == [False, True, True] + [False] * (len(partial) - 2)
    assert not by_id[full_id].partial  # saved as reviewed: every arc human
    whole = sum(len(s) for s in data.train)
    assert data.annotated_tokens == whole - (len(partial) - 2)
    assert data.corrected == 2
    round_ = run_round(app, session, user, treebank, ["graph1", "eager"])
    job = session.scalars(select(Job).order_by(Job.id.desc())).first()
    assert job is not None and job.result is not None and job.result["partial_sentences"] == 1
    assert round_.annotated_tokens == data.annotated_tokens


def test_a_partial_tree_keeps_its_annotated_arcs_on_the_way_to_a_worker(tmp_path: Path) -> None:
    """The fan-out writes each member's training trees as JSON for a worker: a partial tree's
    ``annotated`` mask travels with it (without it the filled-in arcs were trained on as human)."""
    import json

    import numpy as np

    from app.jobs.fanout import member_job_from_json, member_job_to_json
    from parsing.member_fit import MemberJob
    from parsing.types import ROOT
    from parsing.types import Sentence as Tree

    heads, deprels = chain(3)
    partial = Tree(forms=[ROOT, "a", "b", "c"], lemmas=[ROOT, "_", "_", "_"], upos=[ROOT, "X", "X", "X"],
                   xpos=[ROOT, "_", "_", "_"], feats=[ROOT, "_", "_", "_"], heads=np.array([-1, *heads]),
                   deprels=["", *deprels], annotated=np.array([False, True, False, True]))
    full = Tree(forms=partial.forms, lemmas=partial.lemmas, upos=partial.upos, xpos=partial.xpos,
                feats=partial.feats, heads=partial.heads, deprels=partial.deprels)
    job = MemberJob(name="biaffine", train=[partial, full], dev=None, path=tmp_path / "m.model",
                    random_state=0, params={})
    back = member_job_from_json(json.loads(json.dumps(member_job_to_json(job))))
    assert back.train[0].partial and back.train[0].annotated is not None
    assert back.train[0].annotated.tolist() == [False, True, False, True]
    assert back.train[1].annotated is None and not back.train[1].partial
