"""The rules page (issue #32): curators and owners only; preview, apply, revert through the forms."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, TreeVersion
from app.services.rules import preview_rule
from app.team_models import AuditEvent
from tests.app.test_search_views import build_world

RULE = 'pattern { e: H -[amod]-> A; A [upos=ADJ] } commands { e.label = "amod:x" }'


@pytest.fixture
def world(app: Flask, make_user: Callable[..., int]) -> tuple[int, dict[str, FlaskClient]]:
    return build_world(app, make_user)


def annotation_count(app: Flask) -> int:
    with app.app_context():
        return len(db.session.scalars(select(TreeVersion.id).where(TreeVersion.kind == "annotation")).all())


def test_only_curators_and_owners_reach_rules(world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/rules"
    assert clients["viewer"].get(url).status_code == 403
    assert clients["stranger"].get(url).status_code == 404
    assert clients["viewer"].post(f"{url}/apply", data={"rule": RULE}).status_code == 403
    assert clients["viewer"].post(f"{url}/revert", data={"event_id": 1}).status_code == 403
    assert clients["curator"].get(url).status_code == 200
    listing = f"/treebanks/{treebank_id}/sentences"
    assert 'id="rules-link"' in clients["curator"].get(listing).get_data(as_text=True)
    assert 'id="rules-link"' not in clients["viewer"].get(listing).get_data(as_text=True)


def test_preview_then_apply_then_revert_through_the_page(app: Flask,
                                                         world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    curator, url = clients["curator"], f"/treebanks/{treebank_id}/rules"
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        preview = preview_rule(db.session, treebank, RULE)
    html = curator.get(url, query_string={"rule": RULE}).get_data(as_text=True)
    rows = re.findall(r'class="rule-change" data-sentence="(\d+)" data-word="(\d+)"', html)
    assert len(rows) == sum(len(c.words) for c in preview.changes) > 0
    assert f"Apply to {len(preview.changes)} sentences" in html
    assert annotation_count(app) == 0
    applied = curator.post(f"{url}/apply", data={"rule": RULE, "expected": len(preview.changes)},
                           follow_redirects=True)
    assert f"changed {len(preview.changes)} sentences" in applied.get_data(as_text=True)
    assert annotation_count(app) == len(preview.changes)
    with app.app_context():
        event_id = db.session.scalars(select(AuditEvent.id).where(AuditEvent.action == "rule-apply")).one()
    page = curator.get(url).get_data(as_text=True)
    assert 'name="event_id"' in page and "amod:x" in page
    reverted = curator.post(f"{url}/revert", data={"event_id": event_id}, follow_redirects=True)
    assert f"Reverted {len(preview.changes)} sentences." in reverted.get_data(as_text=True)
    assert annotation_count(app) == 2 * len(preview.changes)
    again = curator.post(f"{url}/revert", data={"event_id": event_id}, follow_redirects=True)
    assert "Not reverted: this rule application was already reverted" in again.get_data(as_text=True)


def test_bad_rules_are_shown_with_their_position(world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    response = clients["ana"].get(f"/treebanks/{treebank_id}/rules",
                                  query_string={"rule": "pattern { N [] } commands { add_edge N -> M }"})
    assert response.status_code == 400
    expected = "Rule: line 1, column 40: expected &#39;-[&#39; (add_edge needs a label)"
    assert expected in response.get_data(as_text=True)
    stale = clients["ana"].post(f"/treebanks/{treebank_id}/rules/apply", data={"rule": RULE, "expected": 1},
                                follow_redirects=True)
    assert "Not applied: the rule now changes" in stale.get_data(as_text=True)
