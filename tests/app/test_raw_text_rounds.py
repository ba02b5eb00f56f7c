"""Rounds whose cluster and meta-feature members learn from the pool's raw text (issue #17): the
text reaches the members (a word only the pool has gets its own cluster), the round records it,
the rounds page compares each such member with its base member, and bad requests are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Treebank, User
from app.parser_models import TrainingRound
from app.services.imports import import_conllu
from app.services.raw_text_rounds import RawTextEffect, raw_text_effects
from parsing.base import BaseParser
from parsing.persist import load_model
from tests.app.helpers import import_without_dev, run_round

NEW_WORD = "zyxquorp"
"""A word the demo's training sentences do not have: only the pool's raw text teaches it."""



def one_sentence(*, tree: bool) -> bytes:
    """``NEW_WORD NEW_WORD la`` tagged (gold-tag rounds need UPOS), with a tree or without."""
    rows = [(NEW_WORD, "NOUN", "3", "nsubj"), (NEW_WORD, "NOUN", "1", "flat"), ("la", "PRON", "0", "root")]
    lines = [f"{i}\t{form}\t_\t{upos}\t_\t_\t{head if tree else '_'}\t{rel if tree else '_'}\t_\t_"
             for i, (form, upos, head, rel) in enumerate(rows, start=1)]
    return ("# sent_id = raw-1\n" + "\n".join(lines) + "\n\n").encode()


def treebank_with_raw_text(session: Session, user: User) -> Treebank:
    """The demo's 40 training trees, a pool of 10 of its sentences and one raw sentence more."""
    treebank = import_without_dev(session, user, train=40, pool=10)
    import_conllu(session, data=one_sentence(tree=False), filename="raw.conllu", treebank_name=treebank.name,
                  split="pool", user=user)
    session.commit()
    return treebank


@pytest.fixture
def signed_in_ana(session: Session, logged_in: FlaskClient) -> User:
    """``ana``, signed in with :func:`logged_in`, loaded in :func:`session`."""
    return session.scalars(select(User).where(User.username == "ana")).one()


def member(round_: TrainingRound, name: str) -> Any:
    """Round ``round_``'s saved member ``name`` (its fitted attributes read as they are)."""
    return load_model(Path(round_.model_dir) / "parsers" / f"{name}.model", BaseParser)


def test_cluster_and_meta_members_learn_from_the_pools_text(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = treebank_with_raw_text(session, user)
    parsers = ["graph1", "graph1-brown", "graph1-meta"]
    without = run_round(app, session, user, treebank, parsers)
    assert without.raw_text is None
    plain = member(without, "graph1-brown")
    assert NEW_WORD not in plain.lexicon_.paths
    with_text = run_round(app, session, user, treebank, parsers, raw_text=True)
    assert with_text.raw_text is not None
    assert with_text.raw_text == {"sentences": 11, "words": with_text.raw_text["words"],
                                  "members": ["graph1-brown", "graph1-meta"]}
    assert with_text.raw_text["words"] > 3 + 10  # the raw sentence and ten more
    clustered = member(with_text, "graph1-brown")
    assert NEW_WORD in clustered.lexicon_.paths
    meta = member(with_text, "graph1-meta")
    assert str(meta.get_params()["meta_text"]).endswith("-raw-text.txt")
    assert member(with_text, "graph1").get_params().get("cluster_text") is None  # plain members untouched
    assert not list(fast.glob("**/*-raw-text.txt"))  # the text file is gone once trained
    effects = raw_text_effects(with_text.raw_text, with_text.scores)
    assert [(e.member, e.base) for e in effects] == [("graph1-brown", "graph1"), ("graph1-meta", "graph1")]
    scores = (with_text.scores or {})["members"]
    assert effects[0].gain == pytest.approx(scores["graph1-brown"]["las"] - scores["graph1"]["las"])


def test_effects_say_when_a_member_has_no_base_to_compare_with() -> None:
    scores = {"members": {"eager-brown": {"las": 50.0, "uas": 60.0},
                          "graph1-meta": {"las": 40.0, "uas": 55.0}, "graph1": {"las": 41.5, "uas": 56.0}}}
    raw_text = {"sentences": 3, "words": 9, "members": ["eager-brown", "graph1-meta"]}
    effects = raw_text_effects(raw_text, scores)
    assert effects == [RawTextEffect("eager-brown", "eager", 50.0, None),
                       RawTextEffect("graph1-meta", "graph1", 40.0, 41.5)]
    assert effects[0].gain is None and effects[1].gain == pytest.approx(-1.5)
    assert raw_text_effects(None, scores) == []


def test_the_rounds_page_says_whether_the_text_helped(
        app: Flask, session: Session, signed_in_ana: User, fast: Path, logged_in: FlaskClient) -> None:
    user = signed_in_ana
    treebank = treebank_with_raw_text(session, user)
    round_ = run_round(app, session, user, treebank, ["graph1", "graph1-context1"], raw_text=True)
    html = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert "Did the raw text help?" in html and 'id="raw-text-effects"' in html
    (effect,) = raw_text_effects(round_.raw_text, round_.scores)
    assert effect.gain is not None
    verdict = "helped" if effect.gain > 0.05 else "hurt" if effect.gain < -0.05 else "no change"
    assert verdict in html.split('id="raw-text-effects"')[1]
    table = logged_in.get(f"/treebanks/{treebank.id}/rounds.csv").get_data(as_text=True).splitlines()
    cells = dict(zip(table[0].split(","), table[1].split(","), strict=True))
    assert cells["raw_text_sentences"] == "11" and cells["raw_text_members"] == "graph1-context1"
    plain = run_round(app, session, user, treebank, ["graph1"])
    assert plain.raw_text is None  # a round without the option shows no new row
    html = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert html.split('id="raw-text-effects"')[1].count("<tr>") == 1 + 1  # header + round 1's member


def test_the_api_refuses_raw_text_it_could_not_use(
        app: Flask, session: Session, signed_in_ana: User, fast: Path, logged_in: FlaskClient) -> None:
    user = signed_in_ana
    treebank = treebank_with_raw_text(session, user)
    url = f"/api/treebanks/{treebank.id}/preannotate"
    wrong_type = logged_in.post(url, json={"parsers": "graph1-brown", "raw_text": "yes"})
    assert wrong_type.status_code == 422 and wrong_type.get_json()["field"] == "raw_text"
    no_member = logged_in.post(url, json={"parsers": "graph1,eager", "raw_text": True})
    assert no_member.status_code == 422 and no_member.get_json()["field"] == "raw_text"
    assert "none of the chosen parsers learns from raw text" in no_member.get_json()["error"]
    only_trees = import_conllu(session, data=one_sentence(tree=True), filename="t.conllu",
                               treebank_name="trees only", split="train", user=user).treebank
    session.commit()
    no_pool = logged_in.post(f"/api/treebanks/{only_trees.id}/preannotate",
                             json={"parsers": "graph1-brown", "raw_text": True})
    assert no_pool.status_code == 422 and "no raw text" in no_pool.get_json()["error"]
    assert session.scalars(select(TrainingRound)).all() == []
    queue = logged_in.get(f"/workspace/treebanks/{treebank.id}").get_data(as_text=True)
    assert 'name="raw_text"' in queue and 'value="graph1-meta"' in queue
    assert "11 sentences of raw text" in queue


def test_the_command_line_takes_raw_text_too(
        app: Flask, runner: FlaskCliRunner, session: Session, user: User, fast: Path) -> None:
    treebank = treebank_with_raw_text(session, user)
    refused = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1",
                                  "--raw-text", "--user", "ana"])
    assert refused.exit_code != 0 and "learns from raw text" in refused.output
    done = runner.invoke(args=["treebank", "preannotate", treebank.name, "--parsers", "graph1,eager-brown",
                               "--raw-text", "--user", "ana"])
    assert done.exit_code == 0, done.output
    session.expire_all()
    (round_,) = session.scalars(select(TrainingRound)).all()
    assert round_.raw_text is not None and round_.raw_text["members"] == ["eager-brown"]
