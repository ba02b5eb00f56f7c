"""Parse new text with a round's models, no training: a ``preannotate`` job with ``with_round``
parses the pool sentences no round has parsed (text imported since), as that round would have,
registers no round, and is refused in words when it cannot run."""

from __future__ import annotations

import shutil
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.job_models import Job
from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.imports import import_text
from app.services.parse_with_round import quick_parse, unparsed_pool_targets
from tests.app.helpers import import_without_dev, run_preannotate, run_round

NEW_TEXT = "Bu kitap çok güzel. Ben de okudum!".encode()


def parse_job(app: Flask, session: Session, user: User, treebank: Treebank, number: int) -> Job:
    return run_preannotate(app, session, user, treebank.id, {"with_round": number})


def versions(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(TreeVersion)) or 0


def test_new_text_is_parsed_with_the_rounds_models_and_nothing_else(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user)
    assert quick_parse(session, treebank) is None  # no round yet
    round_ = run_round(app, session, user, treebank, ["graph1", "eager"], tags="predicted")
    assert quick_parse(session, treebank) is None  # the round parsed the whole pool
    import_text(session, data=NEW_TEXT, filename="new.txt", treebank_name=treebank.name, user=user)
    session.commit()
    new = list(session.scalars(select(Sentence.id).join(Document).where(Document.name == "new.txt")
                               .order_by(Sentence.position)))
    assert unparsed_pool_targets(session, treebank) == new
    offer = quick_parse(session, treebank)
    assert offer is not None and (offer.round, offer.sentences, offer.problem) == (round_.number, 2, None)
    before = versions(session)

    done = parse_job(app, session, user, treebank, round_.number)
    assert done.state == "done", done.error
    assert done.result is not None and done.result["parse_only"] and done.result["parsed"] == 2
    assert session.scalar(select(func.count()).select_from(TrainingRound)) == 1  # no round registered
    assert versions(session) == before + 2 * 3  # graph1, eager and the ensemble, of the new text only
    for sentence_id in new:
        stored = session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sentence_id)).all()
        assert sorted(v.source for v in stored) == ["eager", "ensemble", "graph1"]
        assert all(v.upos is not None and "_" not in v.upos for v in stored)  # tagged by the round's tagger
    assert quick_parse(session, treebank) is None and unparsed_pool_targets(session, treebank) == []
    again = parse_job(app, session, user, treebank, round_.number)
    assert again.state == "done" and again.result is not None and again.result["parsed"] == 0


def test_a_round_that_cannot_parse_is_refused_in_words(
        app: Flask, session: Session, user: User, fast: Path) -> None:
    treebank = import_without_dev(session, user)
    round_ = run_round(app, session, user, treebank, ["graph1"])  # gold tags
    import_text(session, data=NEW_TEXT, filename="new.txt", treebank_name=treebank.name, user=user)
    session.commit()
    offer = quick_parse(session, treebank)
    assert offer is not None and "without UPOS" in (offer.problem or "")  # gold tags: raw text is untagged
    refused = parse_job(app, session, user, treebank, round_.number)
    assert refused.state == "failed" and "predicted tags" in (refused.error or "")

    (Path(round_.model_dir) / "manifest.json").unlink()
    assert quick_parse(session, treebank) is None  # no round with models on disk
    gone = parse_job(app, session, user, treebank, round_.number)
    assert gone.state == "failed" and "no longer on disk" in (gone.error or "")
    shutil.rmtree(round_.model_dir)


def test_the_api_checks_the_round_and_who_may(
        app: Flask, session: Session, logged_in: FlaskClient, fast: Path) -> None:
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    treebank = import_without_dev(session, ana)
    session.commit()
    url = f"/api/treebanks/{treebank.id}/preannotate"
    missing = logged_in.post(url, json={"with_round": 7})
    assert missing.status_code == 422
    assert missing.get_json() == {"error": "with_round: this treebank has no round 7", "field": "with_round"}
    bad = logged_in.post(url, json={"with_round": "seven"})
    assert bad.status_code == 422 and bad.get_json()["field"] == "with_round"
    round_ = run_round(app, session, ana, treebank, ["graph1"])
    started = logged_in.post(url, json={"with_round": round_.number})
    assert started.status_code == 202, started.get_json()
    job = session.get(Job, started.get_json()["job"]["id"])
    assert job is not None and job.params == {"with_round": round_.number}
    logged_in.post("/auth/logout")
    assert logged_in.post(url, json={"with_round": round_.number}).status_code in (302, 401, 403)


def test_the_cli_parses_new_text_with_a_round(
        app: Flask, session: Session, user: User, runner: FlaskCliRunner, fast: Path) -> None:
    treebank = import_without_dev(session, user)
    round_ = run_round(app, session, user, treebank, ["graph1"], tags="predicted")
    import_text(session, data=NEW_TEXT, filename="new.txt", treebank_name=treebank.name, user=user)
    session.commit()
    command = ["treebank", "preannotate", treebank.name, "--user", user.username, "--with-round"]
    done = runner.invoke(args=[*command, str(round_.number)])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[-1] == f"Round {round_.number}'s models parsed 2 sentences."
    refused = runner.invoke(args=[*command, "9"])
    assert refused.exit_code != 0 and "this treebank has no round 9" in refused.output
