"""Double annotation, agreement and adjudication through the JSON API and the pages: two blind
annotators on their own branches, per-branch conflicts, the sentence not reviewed (nor trained
on, nor exported as ``latest``) until a curator adjudicates it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Sentence, Treebank, TreeVersion, User
from app.services.exports import export_treebank
from app.services.imports import import_conllu
from app.services.preannotate import training_data
from app.team_models import AuditEvent
from parsing.scorer.agreement import sentence_agreement
from tests.app.double_helpers import DoubleTeam, build_double_team
from tests.app.team_helpers import TREEBANK, client_as

GOLD: dict[str, Any] = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obj"]}
A_TREE: dict[str, Any] = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"]}
B_TREE: dict[str, Any] = {"heads": [2, 0, 1], "deprels": ["nsubj", "root", "nmod"]}


@pytest.fixture
def double(app: Flask, password_hash: str) -> DoubleTeam:
    """annotator and ann2 doubly annotate the first two extra pool sentences."""
    with app.app_context():
        team = build_double_team(db.session, password_hash)
    owner = client_as(app, team.user("owner"))
    tb = team.team.treebank_id
    owner.post(f"/treebanks/{tb}/assignments/settings", data={"annotators_per_sentence": "2"})
    reply = owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator", "ann2"],
                                                             "ids": f"{team.pool[0]} {team.pool[1]}"})
    assert reply.status_code == 302
    return team


def _save(app: Flask, team: DoubleTeam, who: str, sentence: int, tree: dict[str, Any], version: int,
          **extra: Any) -> Any:
    return client_as(app, team.user(who)).post(f"/api/sentences/{sentence}/annotations",
                                               json={**tree, "expected_version": version, **extra})


def test_blind_branches_with_their_own_versions_and_conflicts(app: Flask, double: DoubleTeam) -> None:
    sid = double.pool[0]
    first = _save(app, double, "annotator", sid, A_TREE, 0)
    assert first.status_code == 201 and first.get_json()["tree"]["branch"] == "annotator"
    assert first.get_json()["tree"]["version"] == 1
    ann2 = client_as(app, double.user("ann2"))
    view = ann2.get(f"/api/sentences/{sid}").get_json()
    assert view["version"] == 0 and view["branch"] == "ann2"
    assert view["current"]["heads"] == GOLD["heads"] and view["current"]["source"] == "gold"
    assert _save(app, double, "ann2", sid, B_TREE, 0).status_code == 201  # not a conflict with annotator's
    stale = _save(app, double, "ann2", sid, GOLD, 0)
    assert stale.status_code == 409 and stale.get_json()["theirs"]["user"] == "ann2"
    client_as(app, double.user("annotator")).post(f"/api/sentences/{sid}/notes", json={"body": "obl or obj?"})
    again = ann2.get(f"/api/sentences/{sid}").get_json()
    assert again["version"] == 1 and again["current"]["deprels"] == B_TREE["deprels"]
    assert again["notes"] == []  # the other annotator's note is hidden
    history = ann2.get(f"/api/sentences/{sid}/history").get_json()
    text = str(history)
    assert "'annotator'" not in text and "obl" not in text
    annotations = [(e["source"], e["version"], e["user"])
                   for e in history["history"] if e["kind"] == "annotation"]
    assert annotations == [("annotation", 1, "ann2")]
    # curators see both branches
    full = client_as(app, double.user("curator")).get(f"/api/sentences/{sid}/history").get_json()["history"]
    assert sorted(e["branch"] for e in full if e["kind"] == "annotation") == ["ann2", "annotator"]
    # a third annotator, not assigned, may not write the main line of a doubly annotated sentence
    refused = _save(app, double, "ann3", sid, GOLD, 0)
    assert refused.status_code == 403 and "doubly annotated" in refused.get_json()["error"]
    page = client_as(app, double.user("ann3")).get(f"/workspace/sentences/{sid}").get_data(as_text=True)
    assert "Read only: This sentence is doubly annotated" in page and 'id="save" disabled' in page
    page = ann2.get(f"/workspace/sentences/{sid}").get_data(as_text=True)
    assert 'id="blind-note"' in page and 'id="save" disabled' not in page
    # reverting to the other annotator's version is not possible
    with app.app_context():
        theirs = db.session.scalars(select(TreeVersion.id).where(TreeVersion.name == "annotator")).one()
    assert ann2.post(f"/api/sentences/{sid}/revert", json={"version_id": theirs, "expected_version": 1}
                     ).status_code == 404


def _reviewed_export(treebank: Treebank) -> int:
    return export_treebank(db.session, treebank, source="latest", reviewed_only=True, split="pool").sentences


def test_not_reviewed_trained_or_exported_until_adjudicated(app: Flask, double: DoubleTeam) -> None:
    sid = double.pool[0]
    mine = _save(app, double, "annotator", sid, A_TREE, 0, status="reviewed").get_json()
    assert mine["state"]["status"] == "reviewed"
    assert _save(app, double, "ann2", sid, B_TREE, 0, status="reviewed").status_code == 201
    curator = client_as(app, double.user("curator"))
    assert curator.get(f"/api/sentences/{sid}").get_json()["state"]["status"] == "in_progress"
    refused = curator.post(f"/api/sentences/{sid}/state", json={"status": "reviewed"})
    assert refused.status_code == 422 and "adjudicate it" in refused.get_json()["error"]
    with app.app_context():
        treebank = db.session.get(Treebank, double.team.treebank_id)
        assert treebank is not None
        assert sid not in training_data(db.session, treebank).train_ids
        latest = export_treebank(db.session, treebank, source="latest", split="pool").text
        assert "\tobl\t" not in latest and "\tnmod\t" not in latest
        assert _reviewed_export(treebank) == 0
    page = curator.get(f"/workspace/sentences/{sid}/adjudicate").get_data(as_text=True)
    assert "annotator" in page and "ann2" in page and page.count('class="tag differs-tag"') == 1
    # word 3 differs: choose annotator's head with ann2's... or type another arc
    form = {"expected_version": "0", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "other",
            "head-3": "2", "deprel-3": "obj"}
    assert curator.post(f"/workspace/sentences/{sid}/adjudicate", data=form).status_code == 302
    with app.app_context():
        adjudicated = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sid, TreeVersion.kind == "annotation", TreeVersion.name == "")).one()
        assert (adjudicated.heads, adjudicated.deprels) == (GOLD["heads"], GOLD["deprels"])
        treebank = db.session.get(Treebank, double.team.treebank_id)
        assert treebank is not None
        assert sid in training_data(db.session, treebank).train_ids
        assert _reviewed_export(treebank) == 1
        with_sources = export_treebank(db.session, treebank, source="latest", split="pool", provenance=True)
        adjudicated_rows = with_sources.text.split("# sent_id = q1\n")[1].split("\n\n")[0].splitlines()
        assert [row.split("\t")[9] for row in adjudicated_rows if not row.startswith("#")] == [
            "ArcSource=human"] * 3  # the curator chose every arc
        event = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "adjudicate")).one()
        assert event.sentence_id == sid and event.details["agreeing_arcs"]["annotator"] == 2
    assert curator.get(f"/api/sentences/{sid}").get_json()["state"]["status"] == "reviewed"
    # someone adjudicating on top of the old version gets a conflict, nothing is stored
    stale = curator.post(f"/workspace/sentences/{sid}/adjudicate", data={**form, "arc-3": "2:obl"})
    assert stale.status_code == 409 and "saved by curator first" in stale.get_data(as_text=True)


def test_adjudication_input_and_roles(app: Flask, double: DoubleTeam) -> None:
    sid = double.pool[0]
    curator = client_as(app, double.user("curator"))
    url = f"/workspace/sentences/{sid}/adjudicate"
    missing = curator.post(url, data={"expected_version": "0", "arc-1": "2:nsubj"})
    assert missing.status_code == 422 and "field arc-2" in missing.get_data(as_text=True)
    bad_label = curator.post(f"/workspace/sentences/{sid}/adjudicate", data={
        "expected_version": "0", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "2:no-such-label"})
    assert bad_label.status_code == 422
    cyclic = curator.post(f"/workspace/sentences/{sid}/adjudicate", data={
        "expected_version": "x", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "2:obj"})
    assert cyclic.status_code == 422 and "expected_version" in cyclic.get_data(as_text=True)
    assert client_as(app, double.user("annotator")).get(url).status_code == 403
    assert client_as(app, double.user("annotator")).get(
        f"/treebanks/{double.team.treebank_id}/adjudication").status_code == 403
    with app.app_context():
        assert db.session.scalars(select(TreeVersion).where(TreeVersion.name == "")
                                  .where(TreeVersion.kind == "annotation")).all() == []


def test_agreement_page(app: Flask, double: DoubleTeam) -> None:
    for sid in double.pool[:2]:
        _save(app, double, "annotator", sid, A_TREE, 0, status="reviewed")
    _save(app, double, "ann2", double.pool[0], B_TREE, 0, status="reviewed")
    _save(app, double, "ann2", double.pool[1], A_TREE, 0)  # not done: not counted yet
    page = client_as(app, double.user("curator")).get(f"/treebanks/{double.team.treebank_id}/adjudication")
    html = page.get_data(as_text=True)
    expected = sentence_agreement(A_TREE["heads"], A_TREE["deprels"], B_TREE["heads"], B_TREE["deprels"])
    assert expected.uas == pytest.approx(2 / 3)
    assert expected.uas is not None and expected.las is not None
    row = html[html.index("ann2 · annotator"):].split("</tr>")[0]
    assert f'<td class="num">{100 * expected.uas:.1f}</td>' in row
    assert f'<td class="num">{100 * expected.las:.1f}</td>' in row
    assert f'<td class="num">{expected.label_kappa or 0:.3f}</td>' in row
    assert "ready to adjudicate" in html and "waiting for annotators" in html


PUNCT_ROOT = ("# sent_id = p1\n# text = They saw it .\n1\tThey\tthey\tPRON\t_\t_\t2\tnsubj\t_\t_\n"
              "2\tsaw\tsee\tVERB\t_\t_\t0\troot\t_\t_\n3\tit\tit\tPRON\t_\t_\t2\tobj\t_\t_\n"
              "4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n\n")


def test_adjudication_runs_the_ud_validator(app: Flask, double: DoubleTeam) -> None:
    """"." as root and a pronoun labelled punct (UD level 3) is not saved as reviewed until the
    curator, shown the validator's warnings, ticks "Save despite the warnings"."""
    with app.app_context():
        owner = db.session.get(User, double.user("owner"))
        assert owner is not None
        imported = import_conllu(db.session, data=PUNCT_ROOT.encode(), filename="p.conllu",
                                 treebank_name=TREEBANK, split="pool", user=owner)
        db.session.commit()
        sid = db.session.scalars(select(Sentence.id)
                                 .where(Sentence.document_id == imported.document.id)).one()
    curator = client_as(app, double.user("curator"))
    url = f"/workspace/sentences/{sid}/adjudicate"
    bad = {"expected_version": "0", "arc-1": "2:nsubj",
           "arc-2": "other", "head-2": "4", "deprel-2": "parataxis",
           "arc-3": "other", "head-3": "2", "deprel-3": "punct",
           "arc-4": "other", "head-4": "0", "deprel-4": "root"}
    refused = curator.post(url, data=bad)
    html = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "Not saved: the UD validator gives" in html
    warned = set(re.findall(r'<li data-word="(\d+)" data-test="([\w-]+)"', html))
    assert ("3", "rel-upos-punct") in warned
    assert 'name="accept_warnings"' in html and 'value="4" checked' not in html  # the typed arcs kept
    assert 'id="head-2" name="head-2" size="3" inputmode="numeric" value="4"' in html
    with app.app_context():
        assert db.session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sid,
                                                            TreeVersion.kind == "annotation")).all() == []
    accepted = curator.post(url, data={**bad, "accept_warnings": "yes"}, follow_redirects=True)
    assert accepted.status_code == 200 and "(accepted)" in accepted.get_data(as_text=True)
    with app.app_context():
        tree = db.session.scalars(select(TreeVersion).where(TreeVersion.sentence_id == sid,
                                                            TreeVersion.kind == "annotation")).one()
        assert tree.heads == [2, 4, 2, 0]
    # the page of the adjudicated sentence lists the warnings of the adjudicated tree
    page = curator.get(url).get_data(as_text=True)
    assert "on the adjudicated tree" in page and 'data-test="rel-upos-punct"' in page
    # a tree the validator does not warn about on a word is saved at once
    good = {"expected_version": "1", "arc-1": "2:nsubj", "arc-2": "0:root", "arc-3": "other", "head-3": "2",
            "deprel-3": "obj", "arc-4": "other", "head-4": "2", "deprel-4": "punct"}
    assert curator.post(url, data=good).status_code == 302
