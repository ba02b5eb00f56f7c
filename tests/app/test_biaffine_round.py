"""The neural ``biaffine`` member (issue #33) in a round: trained with the tests' tiny settings
(``FAST_MEMBER_PARAMS``), scored on the rounds page beside the other members, its model file
checksummed, its trees stored for the pool, and with predicted tags its own UPOS kept on its
versions (it tags by itself; the other members parse with the tagger's). Where PyTorch is not
installed the member is offered disabled and a round with it is refused, saying how to install it."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import Document, Sentence, TreeVersion, User
from app.services.parsing_adapter import load_sentences
from app.services.preannotate import FAST_MEMBER_PARAMS
from parsing.members import EXTRA_MEMBERS
from parsing.pipeline import load_models
from tests.app.helpers import import_without_dev, run_round

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")


def pool_versions(session: Session, treebank_id: int, name: str) -> dict[int, TreeVersion]:
    """Sentence id → member ``name``'s newest stored tree, for the pool of ``treebank_id``."""
    rows = session.scalars(select(TreeVersion).join(Sentence).join(Document).where(
        Document.treebank_id == treebank_id, Document.split == "pool", TreeVersion.kind == "parser",
        TreeVersion.name == name).order_by(TreeVersion.version))
    return {row.sentence_id: row for row in rows}


def test_the_fast_settings_are_small() -> None:
    settings = FAST_MEMBER_PARAMS["biaffine"]
    assert settings["max_epochs"] <= 3 and settings["layers"] == 1 and settings["hidden"] <= 32


@needs_torch
def test_a_gold_tag_round_trains_scores_and_stores_the_member(
    app: Flask, session: Session, fast: Path, logged_in: FlaskClient
) -> None:
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana)
    session.commit()
    round_ = run_round(app, session, ana, treebank, ["graph1", "biaffine"])
    scores = (round_.scores or {})["members"]
    assert set(scores) == {"graph1", "biaffine"}
    assert 0 < scores["biaffine"]["uas"] <= 100  # it learned something in three epochs
    assert "parsers/biaffine.model" in (round_.checksums or {})
    trees = pool_versions(session, treebank.id, "biaffine")
    pool = pool_versions(session, treebank.id, "graph1")
    assert set(trees) == set(pool) and len(trees) == 10
    for sentence_id, version in trees.items():
        sentence = session.get(Sentence, sentence_id)
        assert sentence is not None and len(version.heads) == sentence.n_words
        assert sorted(version.heads).count(0) == 1  # a tree: one root word
        assert version.upos is None  # gold tags: it parsed with the input's, like the others
    page = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert '<th scope="col" class="num">biaffine</th>' in page
    assert f"{scores['biaffine']['las']:.1f}" in page


@needs_torch
def test_a_predicted_tag_round_keeps_the_members_own_upos(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    treebank = import_without_dev(session, user)
    session.commit()
    round_ = run_round(app, session, user, treebank, ["graph1", "biaffine"], tags="predicted")
    assert round_.tags == "predicted" and set((round_.scores or {})["members"]) == {"graph1", "biaffine"}
    own = pool_versions(session, treebank.id, "biaffine")
    others = pool_versions(session, treebank.id, "graph1")
    ids = sorted(own)
    bundle = load_models(round_.model_dir)
    parses = bundle.parse(load_sentences(session, ids), ["biaffine"])["biaffine"]
    tagged = bundle.prepare(load_sentences(session, ids))
    for sentence_id, parse, prepared in zip(ids, parses, tagged, strict=True):
        assert own[sentence_id].upos == list(parse.extras["upos"])[1:]  # type: ignore[call-overload]
        assert others[sentence_id].upos == prepared.upos[1:]  # the tagger's, as before
    assert any(own[i].upos != others[i].upos for i in ids)  # two taggers: the test tells them apart


@needs_torch
def test_the_editors_reparse_keeps_the_annotators_arc_in_its_tree(
    app: Flask, session: Session, fast: Path, logged_in: FlaskClient
) -> None:
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana)
    session.commit()
    run_round(app, session, ana, treebank, ["graph1", "biaffine"])
    trees = pool_versions(session, treebank.id, "biaffine")
    sentence_id, version = max(trees.items(), key=lambda item: len(item[1].heads))
    heads = list(version.heads)
    root = heads.index(0) + 1
    word = next(w for w in range(1, len(heads) + 1) if heads[w - 1] not in (0, root) and w != root)
    body = {"constraints": [{"id": word, "head": root, "deprel": "dep"}]}  # not what it proposed
    response = logged_in.post(f"/api/sentences/{sentence_id}/reparse", json=body)
    reply = response.json
    assert response.status_code == 200 and reply is not None, reply
    members = {member["name"]: member for member in reply["members"]}
    assert set(members) == {"graph1", "biaffine"}
    own = members["biaffine"]
    assert own["heads"][word - 1] == root and own["deprels"][word - 1] == "dep"
    assert sorted(own["heads"]).count(0) == 1


@pytest.fixture
def torch_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The biaffine member as on a machine without PyTorch (its module looked up under a name
    that does not exist)."""
    without = replace(EXTRA_MEMBERS["biaffine"], requires="no_torch_here")
    monkeypatch.setitem(EXTRA_MEMBERS, "biaffine", without)


def test_without_pytorch_it_is_offered_disabled_and_a_round_with_it_is_refused(
    app: Flask, session: Session, logged_in: FlaskClient, runner: FlaskCliRunner, torch_missing: None
) -> None:
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana)
    session.commit()
    page = logged_in.get(f"/workspace/treebanks/{treebank.id}").get_data(as_text=True)
    assert 'value="biaffine" disabled' in page and "pip install torch==2.13.0" in page
    assert 'value="isbn">' in page  # the others stay on offer
    response = logged_in.post(f"/api/treebanks/{treebank.id}/preannotate",
                              json={"parsers": ["graph1", "biaffine"], "tags": "gold"})
    refusal = response.json
    assert response.status_code == 422 and refusal is not None, response.get_data(as_text=True)
    assert refusal["field"] == "parsers" and "pip install torch==2.13.0" in refusal["error"]
    result = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1,biaffine",
                                 "--user", "ana"])
    assert result.exit_code != 0 and "biaffine needs no_torch_here" in result.output
    assert session.scalar(select(Job.id).limit(1)) is None  # no job queued by either


def test_the_rounds_page_says_where_the_members_upos_is_taken(session: Session,
                                                              logged_in: FlaskClient) -> None:
    """A round whose members parse with the neural member's UPOS where it is sure enough
    (:mod:`parsing.tag_source`'s threshold) and trained on its folds: both lines under the members."""
    from app.parser_models import TrainingRound
    from parsing.tag_source import tagging_summary

    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana)
    tagging = tagging_summary({
        "tag_source": "biaffine", "upos_threshold": 0.9,
        "dev_upos": {"tagger": 0.9429, "biaffine": 0.9519, "combined": 0.956},
        "member_folds": {"folds": 3, "seconds": 812.4, "train_upos": {"tagger": 0.931, "biaffine": 0.9425}}})
    session.add(TrainingRound(treebank_id=treebank.id, number=1, parsers=["graph1", "biaffine"],
                              tags="predicted", model_dir="x", user_id=ana.id, scores={"tagging": tagging}))
    session.commit()
    page = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert ("UPOS from biaffine where ≥ 90% sure, else tagger (dev tagger 94.3 · biaffine 95.2 · "
            "combined 95.6)") in page
    assert "(biaffine's where its probability is at least 0.90, the tagger's elsewhere)" in page
    assert "trained on 3-fold biaffine tags (train tagger 93.1 · biaffine 94.2)" in page
    assert "each trained without the trees it tagged (812 s)" in page
