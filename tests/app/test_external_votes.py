"""External parsers voting in a round's ensemble (issue #16): an uploaded parse joins the vote with
its dev accuracy as weight, abstains where it has no tree, and is recorded on the round."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.services.demo import setup_demo
from app.services.external import add_parse, set_plugin, stored_conllu
from app.services.external_votes import VoterError, check_voters
from app.services.trees import latest_versions
from parsing.conllu_io import HEAD, format_conllu
from parsing.ensemble.voting import combine_votes
from parsing.external import UNREACHABLE
from parsing.types import Parse
from tests.app.helpers import import_without_dev, run_round
from tests.http_parser import Servers, chain, servers

http = pytest.fixture(servers)


def split_ids(session: Session, treebank: Treebank, split: str) -> list[int]:
    return list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == split)
        .order_by(Document.position, Sentence.position)))


def demo(session: Session, user: User) -> Treebank:
    setup_demo(session, user=user, sentences=50)  # 30 train, 10 dev, 10 pool
    return session.scalars(select(Treebank)).one()


def upload(session: Session, treebank: Treebank, user: User, label: str, *, gold: list[int],
           chained: list[int]) -> None:
    """An external parse: the gold tree of the ``gold`` sentences, a left chain on ``chained``."""
    rows = stored_conllu(session, gold)
    for raw in stored_conllu(session, chained):
        for row in raw.words:
            row[HEAD], row[7] = str(int(row[0]) - 1), "root" if row[0] == "1" else "dep"
        rows.append(raw)
    add_parse(session, treebank, data=format_conllu(rows).encode(), filename=f"{label}.conllu", label=label,
              user=user)
    session.commit()


def ensemble_heads(session: Session, ids: list[int]) -> dict[int, list[int]]:
    return {sid: list(tree.heads) for sid, tree in latest_versions(session, ids, "ensemble").items()}


def test_an_external_voter_with_enough_weight_changes_the_tree_and_abstains_where_it_has_none(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    treebank = demo(session, user)
    pool = split_ids(session, treebank, "pool")
    covered, missing = pool[:-1], pool[-1]
    upload(session, treebank, user, "chain", gold=split_ids(session, treebank, "dev"), chained=covered)
    alone = run_round(app, session, user, treebank, ["graph1", "eager"], ensemble="vote-power")
    assert alone.external_voters is None
    before = ensemble_heads(session, pool)
    chains = {sid: list(range(len(before[sid]))) for sid in pool}  # 0, 1, 2, ...
    assert any(before[sid] != chains[sid] for sid in covered)  # the members do not chain

    voted = run_round(app, session, user, treebank, ["graph1", "eager"], ensemble="vote-power",
                      externals=["chain"])
    # perfect on dev: weight 1.0 ** 10, far above the members' UAS ** 10
    assert voted.external_voters == [
        {"label": "chain", "weight": 1.0, "dev_uas": 1.0, "sentences": len(covered)}]
    assert max(voted.weights) < 0.5
    after = ensemble_heads(session, pool)
    assert all(after[sid] == chains[sid] for sid in covered)
    shares = [min(tree.scores or [0.0]) for tree in latest_versions(session, covered, "ensemble").values()]
    assert min(shares) > 1.0 / (1.0 + sum(voted.weights)) - 1e-6
    # abstained: the members' own vote of this round
    members = [latest_versions(session, [missing], name)[missing] for name in ("graph1", "eager")]
    own = combine_votes([Parse(np.array([-1, *t.heads]), ["", *t.deprels]) for t in members], voted.weights)
    assert after[missing] == own.heads[1:].tolist()


def test_uniform_weight_and_an_http_plugin_voter(
    app: Flask, session: Session, user: User, fast: Path, http: Servers
) -> None:
    treebank = demo(session, user)
    set_plugin(session, treebank, label="web", command=None, url=http.start(chain), timeout=30, user=user)
    down = http.start(lambda body: (500, b""))
    set_plugin(session, treebank, label="down", command=None, url=down, timeout=30, user=user)
    session.commit()
    voted = run_round(app, session, user, treebank, ["graph1"], ensemble="vote-uniform", externals=["web"])
    job = session.scalars(select(Job).order_by(Job.id.desc())).first()
    assert job is not None and job.result is not None
    assert job.result["plugins"]["down"]["error"] == UNREACHABLE  # what viewers read (#31)
    assert "down: http://127.0.0.1" in job.result["plugin_details"]["down"]
    assert "answered HTTP 500" in job.result["plugin_details"]["down"]
    pool, dev = split_ids(session, treebank, "pool"), split_ids(session, treebank, "dev")
    (voter,) = voted.external_voters or []
    assert voter["label"] == "web" and voter["weight"] == 1.0 and voter["sentences"] == len(pool)
    assert 0 < voter["dev_uas"] < 1  # the plugin parsed dev first (a chain is partly right)
    trees = session.scalars(select(TreeVersion).where(TreeVersion.name == "web")).all()
    assert {tree.sentence_id for tree in trees} == set(pool) | set(dev)
    # one member and one voter of weight 1: every word's share is 1/2 or 1
    shares = {s for tree in latest_versions(session, pool, "ensemble").values() for s in tree.scores or []}
    assert shares <= {0.5, 1.0}


def test_voters_are_checked(session: Session, logged_in: FlaskClient) -> None:
    user = session.scalars(select(User)).one()
    treebank = demo(session, user)
    upload(session, treebank, user, "ext", gold=split_ids(session, treebank, "dev")[:2], chained=[])
    assert check_voters(session, treebank, ["ext", "ext"], "vote-accuracy") == ["ext"]
    with pytest.raises(VoterError, match=r"nope: no external parser of Turkish demo .* \(known: ext\)"):
        check_voters(session, treebank, ["nope"], "vote-uniform")
    with pytest.raises(VoterError, match="ensemble mbr does not vote over trees"):
        check_voters(session, treebank, ["ext"], "mbr")
    answer = logged_in.post(f"/api/treebanks/{treebank.id}/preannotate", json={"externals": ["nope"]})
    assert answer.status_code == 422
    assert answer.get_json()["field"] == "externals" and "nope" in answer.get_json()["error"]
    answer = logged_in.post(f"/api/treebanks/{treebank.id}/preannotate",
                            json={"externals": ["ext"], "ensemble": "stack", "parsers": "graph1,eager"})
    assert answer.status_code == 422 and "does not vote" in answer.get_json()["error"]


@pytest.mark.parametrize("method", ["fuzzy-pos", "vote-accuracy"])
def test_an_average_members_weight_without_a_dev_score(
    app: Flask, session: Session, user: User, fast: Path, method: str
) -> None:
    """fuzzy-pos weighs by tag, and without a dev split there is no dev UAS: either way the external
    parser votes as an average member (weight None), on every sentence it has a tree of."""
    if method == "fuzzy-pos":
        treebank = demo(session, user)
    else:
        treebank = import_without_dev(session, user, train=30, pool=6)
    pool = split_ids(session, treebank, "pool")
    upload(session, treebank, user, "chain", gold=[], chained=pool[:4])
    voted = run_round(app, session, user, treebank, ["graph1", "eager"], ensemble=method, externals=["chain"])
    assert voted.external_voters == [{"label": "chain", "weight": None, "dev_uas": None, "sentences": 4}]
    assert len(latest_versions(session, pool, "ensemble")) == len(pool)


def test_an_external_voter_joins_tuned_label_votes_as_an_average_member() -> None:
    """With ``vote-tuned-labels`` the labels of a revote keep the ensemble's label weights (the
    member that labels best is heard); the external voter labels as an average member."""
    from types import SimpleNamespace

    from app.services.external_votes import ExternalVoter, revote
    from parsing.ensemble.voting import ArcVoting
    from parsing.types import Sentence as ParsingSentence

    sentence = ParsingSentence.from_words(["a", "b", "c"], heads=[2, 0, 2], deprels=["nsubj", "root", "obj"])
    good = Parse(np.array([-1, 2, 0, 2]), ["", "nsubj", "root", "obj"])
    loud = Parse(np.array([-1, 2, 0, 2]), ["", "dep", "root", "dep"])
    voting = ArcVoting(["good", "loud1", "loud2"], weights=[1.0, 1.0, 1.0])
    voting.weights_ = np.ones(3)
    voting.label_weights_, voting.label_exponent_ = np.array([1.0, 0.1, 0.1]), 30.0
    bundle = SimpleNamespace(ensemble=voting, ensemble_members=["good", "loud1", "loud2"])
    members = {"good": good, "loud1": loud, "loud2": loud}
    combined = combine_votes([good, loud, loud], np.ones(3), label_weights=voting.label_weights_)
    assert combined.deprels == ["", "nsubj", "root", "obj"]
    voter = ExternalVoter("ext", 1.0, None)
    tree, ballot = revote(bundle, sentence, members, combined, [voter], {"ext": loud})  # type: ignore[arg-type]
    assert tree.deprels == ["", "nsubj", "root", "obj"]  # 1 + 0 vs 0.1 + 0.1 + 0.4 (the voter's)
    assert ballot.externals == ["ext"] and voter.sentences == 1
    voting.label_exponent_ = None  # labels voted as heads: the voter's own weight counts again
    tree, _ = revote(bundle, sentence, members, combined, [voter], {"ext": loud})  # type: ignore[arg-type]
    assert tree.deprels == ["", "dep", "root", "dep"]
