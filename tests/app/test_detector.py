"""The arc error detector in the app (issue #32): a round fits it on its held-out trees and scores
the pool's ensemble trees, the queue's ``detector`` order, and the suspicious-arcs page's
permissions and refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import Document, Sentence, SentenceState, Treebank, User
from app.services.detector import newest_detector_round, round_detector, suspicious_arcs
from app.services.members import set_role
from app.services.queue import QueueFilter, build_queue
from app.services.workspace import detector_flags, editor_data
from parsing.detect.bundle import DETECTOR_FILE
from parsing.pipeline import read_manifest
from parsing.semi.partial import FLAG_P_WRONG
from tests.app.helpers import import_without_dev, run_round
from tests.app.test_search_views import sign_in


def test_a_round_fits_its_detector_and_scores_the_pool(app: Flask, session: Session, user: User,
                                                      fast: Path) -> None:
    treebank = import_without_dev(session, user, train=60, pool=10)
    round_ = run_round(app, session, user, treebank, ["graph1", "eager", "hybrid"])
    record = read_manifest(round_.model_dir)["detector"]
    held = session.scalars(select(Sentence).where(Sentence.id.in_(round_.held_out_ids or []))).all()
    held_words = sum(sentence.n_words for sentence in held)
    assert record["dev_words"] == held_words > 0  # fitted on the held-out slice, never trained on
    assert (Path(round_.model_dir) / DETECTOR_FILE).is_file()
    assert round_.checksums is not None and DETECTOR_FILE in round_.checksums  # published with the models
    detector = round_detector(round_.model_dir)
    assert detector is not None and detector.members == ["graph1", "eager", "hybrid"]
    pool = session.scalars(select(Sentence).join(Document).where(Document.treebank_id == treebank.id,
                                                                 Document.split == "pool")).all()
    states = {s.sentence_id: s for s in session.scalars(select(SentenceState).where(
        SentenceState.sentence_id.in_([p.id for p in pool])))}
    for sentence in pool:
        state = states[sentence.id]
        assert state.p_wrong is not None and len(state.p_wrong) == sentence.n_words
        assert all(0.0 <= p <= 1.0 for p in state.p_wrong)
        assert state.suspicion == pytest.approx(sum(state.p_wrong), abs=1e-5)
    # the page's ensemble rows are the stored scores, recomputed from the stored trees
    found = suspicious_arcs(session, treebank, source="ensemble", split="pool", detector=detector,
                            round_number=round_.number)
    assert len(found.rows) == sum(s.n_words for s in pool)
    for row in found.rows:
        stored = states[row["sentence_id"]].p_wrong
        assert stored is not None and row["p_wrong"] == pytest.approx(stored[row["word"] - 1], abs=1e-4)
    assert [r["p_wrong"] for r in found.rows] == sorted((r["p_wrong"] for r in found.rows), reverse=True)
    # the editor gets the stored scores, to leave the flagged words to the annotator
    shown = editor_data(session, pool[0])
    assert shown["p_wrong"] == states[pool[0].id].p_wrong and shown["flag_p_wrong"] == FLAG_P_WRONG
    # the queue's detector order: most expected wrong arcs first
    items = build_queue(session, treebank, QueueFilter(order="detector")).items
    assert [i["suspicion"] for i in items] == sorted((i["suspicion"] for i in items), reverse=True)
    assert newest_detector_round(session, treebank) is not None


def test_gold_training_trees_are_scored_without_their_own_counts(app: Flask, session: Session, user: User,
                                                                 fast: Path) -> None:
    treebank = import_without_dev(session, user, train=60, pool=10)
    round_ = run_round(app, session, user, treebank, ["graph1", "eager", "hybrid"],
                       score_splits=["train"])  # the members' trees of train: gold trees can be scored
    detector = round_detector(round_.model_dir)
    assert detector is not None
    found = suspicious_arcs(session, treebank, source="gold", split="train", detector=detector,
                            round_number=round_.number)
    assert found.scored_sentences > 0 and len(found.rows) > 0
    p = np.array([row["p_wrong"] for row in found.rows])
    assert np.all((p >= 0) & (p <= 1))


@pytest.fixture
def clients(app: Flask, make_user: Callable[..., int]) -> tuple[int, dict[str, FlaskClient]]:
    for name in ("owner", "viewer", "stranger"):
        make_user(name)
    with app.app_context():
        owner = db.session.scalars(select(User).where(User.username == "owner")).one()
        treebank = import_without_dev(db.session(), owner, train=12, pool=3)
        set_role(db.session, treebank, "viewer", "viewer", by=owner)
        db.session.commit()
        treebank_id = treebank.id
    return treebank_id, {name: sign_in(app, name) for name in ("owner", "viewer", "stranger")}


def test_the_page_needs_read_access_and_refuses_bad_choices(
        client: FlaskClient, clients: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, signed_in = clients
    path = f"/treebanks/{treebank_id}/suspicious"
    assert client.get(path).status_code in (302, 401)  # signed out: to the login page
    assert signed_in["stranger"].get(path).status_code in (403, 404)
    page = signed_in["viewer"].get(path)
    assert page.status_code == 200 and "No training round" in page.get_data(as_text=True)
    assert signed_in["viewer"].get(path, query_string={"source": "parser"}).status_code == 400
    assert signed_in["viewer"].get(path, query_string={"split": "nope"}).status_code == 400


def test_a_treebank_without_a_detector_has_none(session: Session, user: User) -> None:
    treebank = import_without_dev(session, user, train=12, pool=3)
    session.commit()
    assert newest_detector_round(session, session.get(Treebank, treebank.id)) is None  # type: ignore[arg-type]


def test_the_editor_gets_only_detector_scores_that_fit_the_sentence() -> None:
    assert detector_flags(SentenceState(p_wrong=[0.1, 0.9, 0.5]), 3) == {
        "p_wrong": [0.1, 0.9, 0.5], "flag_p_wrong": FLAG_P_WRONG}
    for stored in (None, [0.1, 0.9], [0.1, "x", 0.2], [0.1, True, 0.2], {"1": 0.5}):
        assert detector_flags(SentenceState(p_wrong=stored), 3)["p_wrong"] is None  # e.g. after a token edit
    assert detector_flags(None, 3) == {"p_wrong": None, "flag_p_wrong": FLAG_P_WRONG}


def test_the_neural_members_arc_probabilities_reach_the_detector_in_rounds_and_on_the_page(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    """With the biaffine member in a round, the detector reads its arc probabilities: fitted from
    the round's parses, stored with its tree versions, and read back from them by the page, which
    then gives the same ``p_wrong`` as the round stored."""
    pytest.importorskip("torch")
    treebank = import_without_dev(session, user, train=60, pool=10)
    round_ = run_round(app, session, user, treebank, ["graph1", "eager", "biaffine"])
    detector = round_detector(round_.model_dir)
    assert detector is not None and detector.confident == ["biaffine"]
    assert detector.feature_names[-3:] == ["p:biaffine", "p_agrees:biaffine", "p_differs:biaffine"]
    pool = session.scalars(select(Sentence).join(Document).where(Document.treebank_id == treebank.id,
                                                                 Document.split == "pool")).all()
    states = {s.sentence_id: s for s in session.scalars(select(SentenceState).where(
        SentenceState.sentence_id.in_([p.id for p in pool])))}
    found = suspicious_arcs(session, treebank, source="ensemble", split="pool", detector=detector,
                            round_number=round_.number)
    assert len(found.rows) == sum(s.n_words for s in pool)
    for row in found.rows:  # the page's scores, from the stored probabilities, are the round's
        stored = states[row["sentence_id"]].p_wrong
        assert stored is not None and row["p_wrong"] == pytest.approx(stored[row["word"] - 1], abs=1e-4)
