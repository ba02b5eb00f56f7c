"""What a lead sees (issue #30): which sentences each annotator has, an audit log in words with
saves in it, invitations that carry a role, and what a new annotator is told."""

from __future__ import annotations

import re

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Membership
from app.services.audit import readable_details
from app.team_models import AuditEvent
from tests.app.double_helpers import build_double_team
from tests.app.team_helpers import build_team, client_as


def test_assignments_page_lists_each_annotators_sentences_with_status(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_double_team(db.session, password_hash)
    tb = team.team.treebank_id
    owner = client_as(app, team.user("owner"))
    ids = " ".join(map(str, team.pool[:3]))
    assert owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator", "ann2"],
                                                            "ids": ids}).status_code == 302
    body = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obj"], "expected_version": 0,
            "status": "reviewed"}
    client_as(app, team.user("annotator")).post(f"/api/sentences/{team.pool[0]}/annotations", json=body)
    html = owner.get(f"/treebanks/{tb}/assignments").get_data(as_text=True)
    mine = html.split('data-user="annotator"')[1].split("</details>")[0]
    theirs = html.split('data-user="ann2"')[1].split("</details>")[0]
    assert "2 sentences" in mine and "1 sentences" in theirs
    link = 'href="/workspace/sentences/{}">{}</a>\\s*<span class="tag status-{}">'
    assert re.search(link.format(team.pool[0], "q1", "done"), mine)
    assert re.search(link.format(team.pool[2], "q3", "todo"), mine)
    assert f'href="/workspace/sentences/{team.pool[1]}">q2</a>' in theirs


def test_audit_log_reads_in_words_and_logs_saves(app: Flask, password_hash: str) -> None:
    details = {"treebank": "t", "agreeing_arcs": {"aminata": 13, "moussa": 2}, "split": None, "words": 15}
    assert readable_details(details) == [("arcs agreeing with", "aminata 13, moussa 2"), ("words", "15")]
    assert readable_details({"previous": {"language": ""}, "settings": {"language": "wo"}}) == [
        ("language", "— → wo")]
    assert readable_details({"previous": "todo", "to": "in_progress"}) == [("status", "todo → in progress")]
    assert readable_details({"previous": "viewer", "role": "curator"}) == [("role", "viewer → curator")]
    rules = {"previous": {"assigned_only": False, "annotators_per_sentence": 1},
             "settings": {"assigned_only": False, "annotators_per_sentence": 2}}
    assert readable_details(rules) == [("annotators per sentence", "1 → 2")]
    with app.app_context():
        team = build_double_team(db.session, password_hash)
    tb = team.team.treebank_id
    owner = client_as(app, team.user("owner"))
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator"], "ids": str(team.pool[1])})
    body = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0}
    assert client_as(app, team.user("annotator")).post(
        f"/api/sentences/{team.pool[1]}/annotations", json=body).status_code == 201
    with app.app_context():
        saves = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "save")).all()
        found = [(e.sentence_id, e.details["version"], e.details["changed"]) for e in saves]
        assert found == [(team.pool[1], 1, 1)]
    html = owner.get(f"/treebanks/{tb}/events").get_data(as_text=True)
    assert f'<a class="sentence-link" href="/workspace/sentences/{team.pool[1]}">q2</a>' in html
    assert "arcs changed: 1" in html and "version: 1" in html
    assert "{" not in html.split("<tbody>")[1] and "None" not in html
    assert f"sentence {team.pool[1]}<" not in html
    assert "split: pool" in html and "sentences: 1" in html  # the import and assign events, in words


def test_an_invitation_carries_a_role_and_the_invitee_is_told_where_to_start(
        app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    url = f"/treebanks/{team.treebank_id}/invite"
    curator = client_as(app, team.users["curator"])
    assert curator.post(url, data={"invite_role": "annotator"}).status_code == 403
    page = client_as(app, team.users["owner"]).post(url, data={"invite_role": "curator"})
    link = re.search(r'<code>(http://[^<]+)</code>', page.get_data(as_text=True))
    assert page.status_code == 200 and link is not None
    path = link[1].removeprefix("http://localhost")
    created = app.test_client().post(path, data={"username": "aminata", "password": "long enough password",
                                                 "confirm": "long enough password"}, follow_redirects=True)
    assert "You have joined team tb" in created.get_data(as_text=True)
    with app.app_context():
        member = db.session.scalars(select(Membership).join(Membership.user).where(
            Membership.treebank_id == team.treebank_id, Membership.user_id != team.users["owner"],
            Membership.role == "curator", Membership.user_id.not_in(team.users.values()))).one()
        aminata = member.user_id
    index = client_as(app, aminata).get("/treebanks/").get_data(as_text=True)
    assert "You have been added to <strong>team tb</strong> as curator" in index
    assert "open your queue" in index
    assert "Import a CoNLL-U file to start" not in index
    # the owner sees no welcome; someone with no treebank is told how to get one
    assert 'id="welcome"' not in client_as(app, team.users["owner"]).get("/treebanks/").get_data(as_text=True)
    alone = client_as(app, team.users["stranger"]).get("/treebanks/").get_data(as_text=True)
    assert "You are not a member of any treebank yet" in alone
