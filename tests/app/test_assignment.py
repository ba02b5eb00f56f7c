"""Assignment: an owner hands batches of the queue to annotators, the assigned-only rule is
enforced on save, state and revert, annotators see their work first, the owner sees who has what."""

from __future__ import annotations

from typing import Any

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.team_models import Assignment, AuditEvent
from tests.app.double_helpers import DoubleTeam, build_double_team
from tests.app.team_helpers import client_as

TREE = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obj"]}


def _team(app: Flask, password_hash: str) -> DoubleTeam:
    with app.app_context():
        return build_double_team(db.session, password_hash)


def _assignments(app: Flask) -> list[tuple[int, int, bool, bool]]:
    with app.app_context():
        return [(a.sentence_id, a.user_id, a.blind, a.done_at is not None)
                for a in db.session.scalars(select(Assignment).order_by(Assignment.id))]


def test_owner_hands_a_batch_round_robin_and_sees_who_has_what(app: Flask, password_hash: str) -> None:
    double = _team(app, password_hash)
    tb = double.team.treebank_id
    owner = client_as(app, double.user("owner"))
    reply = owner.post(f"/treebanks/{tb}/assignments", data={
        "annotators": ["annotator", "ann2"], "count": "3", "order": "position", "split": "pool"})
    assert reply.status_code == 302
    first_three = [double.team.sentence_id, *double.pool[:2]]
    assert _assignments(app) == [(first_three[0], double.user("annotator"), False, False),
                                 (first_three[1], double.user("ann2"), False, False),
                                 (first_three[2], double.user("annotator"), False, False)]
    # the next batch takes the next unassigned sentences; explicit ids already assigned are skipped
    assign = f"/treebanks/{tb}/assignments"
    owner.post(assign, data={"annotators": ["ann3"], "count": "1", "order": "position", "split": "pool"})
    owner.post(assign, data={"annotators": ["ann3"], "ids": f"{double.pool[0]}, {double.pool[3]}"})
    assert [(s, u) for s, u, _, _ in _assignments(app)[3:]] == [(double.pool[2], double.user("ann3")),
                                                               (double.pool[3], double.user("ann3"))]
    client_as(app, double.user("annotator")).post(f"/api/sentences/{double.pool[1]}/annotations",
                                                  json={**TREE, "expected_version": 0, "status": "reviewed"})
    page = owner.get(f"/treebanks/{tb}/assignments").get_data(as_text=True)
    row = page[page.index("<th scope=\"row\">annotator</th>"):].split("</tr>")[0]
    assert '<td class="num">1</td><td class="num">1</td>' in row  # one open, one done
    with app.app_context():
        events = list(db.session.scalars(select(AuditEvent).where(AuditEvent.action == "assign")))
    assert [(e.details["subject"], e.details["sentences"]) for e in events] == [
        ("annotator", 2), ("ann2", 1), ("ann3", 1), ("ann3", 1)]
    # taking back the open ones leaves the done one
    owner.post(f"/treebanks/{tb}/assignments/{double.user('annotator')}/unassign")
    assert [(s, done) for s, u, _, done in _assignments(app) if u == double.user("annotator")] == [
        (double.pool[1], True)]


def test_assignment_input_is_checked(app: Flask, password_hash: str) -> None:
    double = _team(app, password_hash)
    tb = double.team.treebank_id
    owner = client_as(app, double.user("owner"))
    cases: list[tuple[dict[str, Any], str]] = [
        ({"annotators": ["viewer"], "count": "1"}, "viewer may not annotate"),
        ({"annotators": ["stranger"], "count": "1"}, "is not a member"),
        ({"annotators": ["annotator"]}, "say how many sentences"),
        ({"annotators": ["annotator"], "ids": "12 abc"}, "not sentence ids: abc"),
        ({"annotators": ["annotator"], "ids": "999999"}, "not sentences of team tb: 999999"),
        ({"annotators": [], "count": "2"}, "choose at least one annotator"),
    ]
    for data, message in cases:
        reply = owner.post(f"/treebanks/{tb}/assignments", data={"order": "position", **data})
        assert reply.status_code == 422, data
        assert message.lower() in reply.get_data(as_text=True).replace("&#39;", "'").lower(), data
    negative = {"annotators": ["annotator"], "count": "-3", "order": "position", "split": "pool"}
    assert owner.post(f"/treebanks/{tb}/assignments", data=negative).status_code == 400
    assert owner.post(f"/treebanks/{tb}/assignments/settings",
                      data={"annotators_per_sentence": "9"}).status_code == 400
    assert _assignments(app) == []
    annotator = client_as(app, double.user("annotator"))
    assert annotator.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator"],
                                                                 "count": "1"}).status_code == 403


def test_assigned_only_is_enforced_for_annotators_only(app: Flask, password_hash: str) -> None:
    double = _team(app, password_hash)
    tb = double.team.treebank_id
    owner = client_as(app, double.user("owner"))
    owner.post(f"/treebanks/{tb}/assignments/settings",
               data={"assigned_only": "y", "annotators_per_sentence": "1"})
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator"], "ids": str(double.pool[0])})
    annotator = client_as(app, double.user("annotator"))
    mine, other = double.pool[0], double.pool[1]
    refused = annotator.post(f"/api/sentences/{other}/annotations", json={**TREE, "expected_version": 0})
    assert refused.status_code == 403
    assert "annotators correct only the sentences assigned to them" in refused.get_json()["error"]
    assert annotator.post(f"/api/sentences/{other}/state", json={"status": "in_progress"}).status_code == 403
    assert annotator.post(f"/api/sentences/{other}/revert",
                          json={"version_id": 1, "expected_version": 0}).status_code == 403
    body = {**TREE, "expected_version": 0}
    assert annotator.post(f"/api/sentences/{mine}/annotations", json=body).status_code == 201
    curator = client_as(app, double.user("curator"))
    assert curator.post(f"/api/sentences/{other}/annotations", json=body).status_code == 201
    # reading stays open
    assert annotator.get(f"/api/sentences/{other}").status_code == 200
    with app.app_context():
        settings = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "settings")).one()
    assert settings.details["settings"] == {"assigned_only": True, "annotators_per_sentence": 1}


def test_annotators_queue_shows_their_work_first(app: Flask, password_hash: str) -> None:
    double = _team(app, password_hash)
    tb = double.team.treebank_id
    owner = client_as(app, double.user("owner"))
    owner.post(f"/treebanks/{tb}/assignments",
               data={"annotators": ["ann2"], "ids": f"{double.pool[3]} {double.pool[1]}"})
    ann2 = client_as(app, double.user("ann2"))
    items = ann2.get(f"/api/treebanks/{tb}/queue?order=position").get_json()["items"]
    assert [item["id"] for item in items][:2] == [double.pool[1], double.pool[3]]
    assert [item["mine"] for item in items] == [True, True, False, False, False]
    assert "assignees" not in items[0]  # annotators do not see who has what
    only = ann2.get(f"/api/treebanks/{tb}/queue?order=position&assigned=me").get_json()["items"]
    assert [item["id"] for item in only] == [double.pool[1], double.pool[3]]
    following = ann2.get(f"/api/treebanks/{tb}/queue/next?order=position&after=0").get_json()["id"]
    assert following == double.pool[1]
    html = ann2.get(f"/workspace/treebanks/{tb}?order=position").get_data(as_text=True)
    assert html.count("assigned to you") == 2
    owner_items = owner.get(f"/api/treebanks/{tb}/queue?order=position").get_json()["items"]
    assert owner_items[0]["mine"] is False and [i["assignees"] for i in owner_items][1:3] == [[], ["ann2"]]
    unassigned = owner.get(f"/api/treebanks/{tb}/queue?assigned=unassigned").get_json()["items"]
    assert double.pool[1] not in [item["id"] for item in unassigned] and len(unassigned) == 3


def test_a_batch_from_the_queues_current_filter(app: Flask, password_hash: str) -> None:
    double = _team(app, password_hash)
    tb = double.team.treebank_id
    owner = client_as(app, double.user("owner"))
    obl = {"heads": [2, 0, 2], "deprels": ["nsubj", "root", "obl"], "expected_version": 0}
    assert owner.post(f"/api/sentences/{double.pool[2]}/annotations", json=obl).status_code == 201
    queue = owner.get(f"/workspace/treebanks/{tb}?relation=obl&order=position").get_data(as_text=True)
    assert f'href="/treebanks/{tb}/assignments?order=position&amp;relation=obl"' in queue
    page = owner.get(f"/treebanks/{tb}/assignments?order=position&relation=obl").get_data(as_text=True)
    assert '<input type="hidden" name="relation" value="obl">' in page
    assert "From the queue view: relation obl" in page
    batch = {"annotators": ["ann2"], "count": "5", "order": "position", "split": "pool", "relation": "obl"}
    owner.post(f"/treebanks/{tb}/assignments", data=batch)
    assert [(s, u) for s, u, _, _ in _assignments(app)] == [(double.pool[2], double.user("ann2"))]
