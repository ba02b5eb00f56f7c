"""Partial trees: a save records which arcs a person set or confirmed (human) and which the
ensemble filled in (parser); the history lists them; exports write them to MISC on request."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.services.demo import setup_demo
from app.services.trees import add_version
from parsing.conllu_io import MISC, ConlluSentence, parse_conllu, with_misc


def demo_pool(session: Session) -> tuple[int, int, int]:
    """(treebank id, first pool sentence id, its word count) of the demo with an ensemble tree."""
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=50)
    sentence = session.scalars(select(Sentence).join(Document).where(Document.split == "pool")
                               .order_by(Sentence.id).limit(1)).one()
    n = sentence.n_words
    heads, deprels = [0] + [1] * (n - 1), ["root"] + ["dep"] * (n - 1)
    add_version(session, sentence_id=sentence.id, source="ensemble", heads=heads, deprels=deprels, user=user)
    session.commit()
    return int(session.scalar(select(Treebank.id)) or 0), sentence.id, n


def save(client: FlaskClient, sentence_id: int, n: int, **extra: object) -> object:
    heads, deprels = [0] + [1] * (n - 1), ["root"] + ["dep"] * (n - 1)
    return client.post(f"/api/sentences/{sentence_id}/annotations",
                       json={"heads": heads, "deprels": deprels, "expected_version": 0, **extra})


def test_partial_save_stores_provenance_and_history_lists_it(
    logged_in: FlaskClient, session: Session
) -> None:
    _, sentence_id, n = demo_pool(session)
    response = save(logged_in, sentence_id, n, human_words=[2, 1])
    assert response.status_code == 201, response.json  # type: ignore[attr-defined]
    tree = response.json["tree"]  # type: ignore[attr-defined]
    assert tree["provenance"] == ["human", "human"] + ["parser"] * (n - 2)
    stored = session.scalars(select(TreeVersion).where(TreeVersion.kind == "annotation")).one()
    assert stored.provenance == tree["provenance"]
    entry = logged_in.get(f"/api/sentences/{sentence_id}/history").get_json()["history"][0]
    assert entry["kind"] == "annotation" and entry["human_words"] == [1, 2]
    data = logged_in.get(f"/api/sentences/{sentence_id}").get_json()  # the editor starts from it
    assert data["current"]["provenance"] == tree["provenance"]
    # reverting to it keeps its provenance; saving as reviewed vouches for every arc
    reverted = logged_in.post(f"/api/sentences/{sentence_id}/revert",
                              json={"version_id": tree["id"], "expected_version": 1}).get_json()["tree"]
    assert reverted["provenance"] == tree["provenance"]
    reviewed = save(logged_in, sentence_id, n, human_words=[1], status="reviewed", expected_version=2)
    assert reviewed.json["tree"]["provenance"] == ["human"] * n  # type: ignore[attr-defined]


def test_a_save_without_human_words_records_no_provenance(logged_in: FlaskClient, session: Session) -> None:
    _, sentence_id, n = demo_pool(session)
    response = save(logged_in, sentence_id, n)
    assert response.json["tree"]["provenance"] is None  # type: ignore[attr-defined]
    history = logged_in.get(f"/api/sentences/{sentence_id}/history").get_json()["history"]
    assert history[0]["human_words"] is None


@pytest.mark.parametrize("human_words", ["1,2", [0], [1, "2"], [True], [10**6]])
def test_bad_human_words_store_nothing(
    logged_in: FlaskClient, session: Session, human_words: object
) -> None:
    _, sentence_id, n = demo_pool(session)
    response = save(logged_in, sentence_id, n, human_words=human_words)
    assert response.status_code == 422 and "human_words" in response.json["error"]  # type: ignore[attr-defined]
    assert session.scalar(select(func.count()).select_from(TreeVersion)
                          .where(TreeVersion.kind == "annotation")) == 0


def arc_sources(text: str) -> dict[str | None, list[str | None]]:
    """sent_id -> each word's ArcSource (None where MISC has none)."""
    found: dict[str | None, list[str | None]] = {}
    for sentence in parse_conllu(text):
        sources = []
        for row in sentence.words:
            items = dict(item.split("=", 1) for item in row[MISC].split("|") if "=" in item)
            sources.append(items.get("ArcSource"))
        found[sentence.sent_id] = sources
    return found


def ud_errors(text: str) -> dict[str, int]:
    """The UD validator's (udtools, levels 1-2: the CoNLL-U format) error counts by class."""
    validator_module = pytest.importorskip("udtools.validator", reason="udtools (test dependency) missing")
    incident = pytest.importorskip("udtools.incident")
    validator = validator_module.Validator(lang="ud", level=2, output=io.StringIO())
    state = validator.validate_file_handle(io.StringIO(text))
    validator.validate_end(state)
    return {str(k): v for k, v in state.error_counter[incident.IncidentType.ERROR].items() if v}


def test_exports_write_provenance_only_when_asked(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, session: Session, tmp_path: Path
) -> None:
    treebank_id, sentence_id, n = demo_pool(session)
    assert save(logged_in, sentence_id, n, human_words=[1, 3]).status_code == 201  # type: ignore[attr-defined]
    sent_id = session.get(Sentence, sentence_id).sent_id  # type: ignore[union-attr]
    url = f"/treebanks/{treebank_id}/export?source=latest&split=pool"
    plain = logged_in.get(url).get_data(as_text=True)
    with_sources = logged_in.get(url + "&provenance=1").get_data(as_text=True)
    assert "ArcSource" not in plain
    expected = ["human", "parser", "human"] + ["parser"] * (n - 3)
    assert arc_sources(with_sources)[sent_id] == expected
    assert sum("ArcSource=" in line for line in with_sources.splitlines()) == n  # only the annotated sentence
    # the demo's own FEATS (Proper=False) are not UD's; the attribute adds no error to them
    assert ud_errors(with_sources) == ud_errors(plain)
    assert ud_errors(with_sources.replace("ArcSource=", "\tArcSource=")) != ud_errors(plain)  # it reads MISC
    treebank_name = session.get(Treebank, treebank_id).name  # type: ignore[union-attr]
    out = tmp_path / "pool.conllu"
    result = runner.invoke(args=["treebank", "export", treebank_name, "--source", "latest", "--split", "pool",
                                 "--provenance", "--output", str(out), "--user", "ana"])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == with_sources
    default = runner.invoke(args=["treebank", "export", treebank_name, "--source", "latest",
                                  "--split", "pool", "--user", "ana"])
    assert default.stdout == plain
    page = logged_in.get(f"/treebanks/{treebank_id}/sentences").get_data(as_text=True)
    assert 'name="provenance"' in page


def test_with_misc_keeps_other_attributes() -> None:
    rows = [["1", "a", "_", "X", "_", "_", "2", "dep", "_", "SpaceAfter=No|ArcSource=old"],
            ["1.1", "e", "_", "X", "_", "_", "_", "_", "_", "_"],
            ["2", "b", "_", "X", "_", "_", "0", "root", "_", "_"]]
    result = with_misc(ConlluSentence([], rows), "ArcSource", ["human", "parser"])
    assert [row[MISC] for row in result.rows] == ["SpaceAfter=No|ArcSource=human", "_", "ArcSource=parser"]
    with pytest.raises(ValueError):
        with_misc(ConlluSentence([], rows), "ArcSource", ["human"])
