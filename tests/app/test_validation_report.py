"""Whole-treebank validation (issue #32): the validate job's report on a treebank with known
faults, the report page, and who may read it or start one."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job
from app.models import Sentence, Treebank, User
from app.services.imports import import_conllu
from app.services.members import set_role
from app.services.sources import SourceError
from app.services.treebank_checks import validate_treebank
from app.services.trees import add_version
from app.services.ud_checks import ud_warnings
from parsing.conllu_io import parse_conllu
from tests.app.conftest import PASSWORD
from tests.app.test_search import AFRIKAANS
from tests.app.test_search_views import build_world

PRON = "Case={}|Person=3|PronType=Prs"


def _sentence(sent_id: str, subject_head: int = 2, object_label: str = "obj",
              period_label: str = "punct") -> str:
    subject = "root" if subject_head == 0 else "nsubj"
    rows = [(1, "He", "he", "PRON", PRON.format("Nom"), subject_head, subject, "_"),
            (2, "saw", "see", "VERB", "_", 0, "root", "_"),
            (3, "her", "she", "PRON", PRON.format("Acc"), 2, object_label, "SpaceAfter=No"),
            (4, ".", ".", "PUNCT", "_", 2, period_label, "_")]
    lines = [f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{label}\t_\t{misc}"
             for i, form, lemma, upos, feats, head, label, misc in rows]
    return f"# sent_id = {sent_id}\n# text = He saw her.\n" + "\n".join(lines) + "\n\n"


FAULTY = (_sentence("clean-1") + _sentence("period-obl", period_label="obl")
          + _sentence("punct-pron", object_label="punct") + _sentence("bad-label", object_label="foo")
          + _sentence("clean-2"))
EXPECTED = {("upos-rel-punct", 3): ["period-obl"], ("rel-upos-punct", 3): ["punct-pron"],
            ("unknown-udeprel", 2): ["bad-label"]}


def sign_in(app: Flask, name: str) -> FlaskClient:
    client = app.test_client()
    assert client.post("/auth/login", data={"username": name, "password": PASSWORD}).status_code == 302
    return client


@pytest.fixture
def world(app: Flask, make_user: Callable[..., int], fast: object) -> tuple[int, dict[str, FlaskClient]]:
    """The faulty treebank owned by ana, with a viewer and a curator; jobs run inline."""
    for name in ("ana", "viewer", "curator", "stranger"):
        make_user(name)
    with app.app_context():
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        treebank = import_conllu(db.session, data=FAULTY.encode(), filename="faulty.conllu",
                                 treebank_name="faulty", split="dev", user=owner).treebank
        for role in ("viewer", "curator"):
            set_role(db.session, treebank, role, role, by=owner)
        db.session.commit()
        treebank_id = treebank.id
    return treebank_id, {name: sign_in(app, name) for name in ("ana", "viewer", "curator", "stranger")}


def test_the_report_counts_exactly_the_known_faults(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, _ = world
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        report = validate_treebank(db.session, treebank, source="gold")
        assert report["sentences"] == 5 and report["levels"] == 3 and report["without_tree"] == 0
        assert {(t["test"], t["level"]): t["count"] for t in report["tests"]} == {key: 1 for key in EXPECTED}
        found = {(item["test"], item["level"]): [item["sent_id"]] for item in report["incidents"]}
        assert found == EXPECTED
        punct = next(item for item in report["incidents"] if item["test"] == "rel-upos-punct")
        assert (punct["word"], punct["form"]) == (3, "her") and "PUNCT" in punct["message"]
        assert validate_treebank(db.session, treebank, split="train")["sentences"] == 0
        with pytest.raises(SourceError, match="unknown source"):
            validate_treebank(db.session, treebank, source="nobody")
        treebank.language = "en"  # the validator knows English: levels 4 and 5 run too
        assert validate_treebank(db.session, treebank)["levels"] == 5
        db.session.rollback()


def test_a_curator_starts_the_job_and_a_viewer_reads_the_report(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/validation"
    empty = clients["viewer"].get(url)
    assert empty.status_code == 200 and 'id="validation-none"' in empty.get_data(as_text=True)
    assert 'id="validate-form"' not in empty.get_data(as_text=True)
    assert clients["viewer"].post(url, data={"source": "gold"}).status_code == 403
    assert clients["stranger"].get(url).status_code == 404
    started = clients["curator"].post(url, data={"source": "gold", "split": "dev"})
    assert started.status_code == 302 and "/jobs/" in started.headers["Location"]
    with app.app_context():
        job = db.session.scalars(select(Job).where(Job.kind == "validate")).one()
        assert job.state == "done", job.error
        assert job.params == {"source": "gold", "split": "dev"} and job.result is not None
        assert job.result["total"] == 3
        job_id = job.id
    job_page = clients["viewer"].get(started.headers["Location"]).get_data(as_text=True)
    assert "Open the report" in job_page and f"job={job_id}" in job_page
    html = clients["viewer"].get(url).get_data(as_text=True)
    rows = re.findall(r'<tr class="validation-test" data-test="([^"]+)" data-count="(\d+)"', html)
    assert sorted(rows) == sorted((test, "1") for test, _ in EXPECTED)
    for (_, _), (sent_id,) in EXPECTED.items():
        assert f">{sent_id}</a>" in html
    assert "3 errors of 3 kinds" in " ".join(html.split())
    assert clients["viewer"].get(f"{url}?job={job_id + 99}").status_code == 404


def test_a_bad_source_is_refused_without_a_job(app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/validation"
    for data in ({"source": "nobody"}, {"source": "gold", "split": "nosuch"}):
        response = clients["ana"].post(url, data=data, follow_redirects=True)
        assert response.status_code == 200 and "Not started" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Job).where(Job.kind == "validate")).first() is None


def test_the_treebank_page_links_to_the_report(app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    html = clients["viewer"].get(f"/treebanks/{treebank_id}/sentences").get_data(as_text=True)
    assert f'href="/treebanks/{treebank_id}/validation" id="validation-link"' in html
    assert f'href="/treebanks/{treebank_id}/lexicon" id="lexicon-link"' in html


def test_the_cli_validates_as_a_job_and_prints_the_report(
        app: Flask, world: tuple[int, dict[str, FlaskClient]], runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["treebank", "validate", "faulty", "--source", "gold", "--split", "dev",
                                 "--json", "--user", "ana"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {(t["test"], t["level"]): t["count"] for t in report["tests"]} == {key: 1 for key in EXPECTED}
    assert report["sentences"] == 5 and report["total"] == 3
    text = runner.invoke(args=["treebank", "validate", "faulty", "--user", "ana"])
    assert text.exit_code == 0 and "3 errors in 5 sentences checked" in text.output
    with app.app_context():
        done = db.session.scalars(select(Job).where(Job.kind == "validate", Job.state == "done")).all()
        assert len(done) == 2
    assert runner.invoke(args=["treebank", "validate", "faulty", "--user", "viewer"]).exit_code == 1
    bad = runner.invoke(args=["treebank", "validate", "faulty", "--source", "nobody", "--user", "ana"])
    assert bad.exit_code == 1 and "unknown source" in bad.output


def test_hostile_forms_and_ids_are_escaped_in_the_report(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    payload = "<script>alert(1)</script>"  # in a lemma and in the sentence ids
    hostile = "".join(_sentence(sent_id, period_label=label).replace("\the\t", f"\t{payload}\t", 1)
                      for sent_id, label in ((payload, "punct"), (payload + "-2", "obl")))
    with app.app_context():
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        treebank_id = import_conllu(db.session, data=hostile.encode(), filename="h.conllu",
                                    treebank_name="hostile", split="dev", user=owner).treebank.id
        db.session.commit()
    clients = world[1]
    started = clients["ana"].post(f"/treebanks/{treebank_id}/validation", data={"source": "gold"})
    assert started.status_code == 302
    for url in (f"/treebanks/{treebank_id}/validation", f"/treebanks/{treebank_id}/lexicon?compare=deprel"):
        page = clients["ana"].get(url).get_data(as_text=True)
        assert payload not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_latest_source_validates_the_annotators_trees(
        app: Flask, world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, _ = world
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        sentence = db.session.scalars(select(Sentence).where(Sentence.sent_id == "period-obl")).one()
        assert treebank is not None
        add_version(db.session, sentence_id=sentence.id, source="annotation", heads=[2, 0, 2, 2],
                    deprels=["nsubj", "root", "obj", "punct"], user=owner)  # the period's label fixed
        db.session.flush()
        latest = validate_treebank(db.session, treebank, source="latest")
        gold = validate_treebank(db.session, treebank, source="gold")
        db.session.rollback()
    assert {t["test"] for t in gold["tests"]} == {test for test, _ in EXPECTED}
    assert {t["test"] for t in latest["tests"]} == {"rel-upos-punct", "unknown-udeprel"}
    assert latest["sentences"] == 5


def test_a_real_treebank_report_equals_the_validator_on_the_file(
        app: Flask, make_user: Callable[..., int]) -> None:
    """AfriBooms dev through the database: the same counts as the validator run on the file."""
    treebank_id, _ = build_world(app, make_user)
    expected: Counter[tuple[str, int]] = Counter()
    for raw in parse_conllu(AFRIKAANS.read_text(encoding="utf-8")):
        expected.update((item["test"], item["level"]) for item in ud_warnings(raw, "af"))
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        treebank.language = "af"
        report = validate_treebank(db.session, treebank, source="gold", split="dev")
        db.session.rollback()
    assert report["levels"] == 5 and report["sentences"] == len(parse_conllu(AFRIKAANS.read_text("utf-8")))
    assert expected  # AfriBooms dev has findings (finite verbs without Mood, at the time of writing)
    assert {(t["test"], t["level"]): t["count"] for t in report["tests"]} == dict(expected)
