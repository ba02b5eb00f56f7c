"""Plugins configured in the browser (issue #16): an owner sets an HTTP plugin, only a site admin a
command (permissions.plugin_refusal), bad settings are named, and the forms need CSRF."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Treebank, TreeVersion, User
from app.parser_models import ExternalParser
from app.services.permissions import plugin_refusal
from tests.app.team_helpers import Team, build_team, client_as


@pytest.fixture
def team(session: Session, password_hash: str) -> Team:
    return build_team(session, password_hash)


def plugins(session: Session) -> dict[str, tuple[str | None, str | None, float]]:
    session.expire_all()
    return {p.label: (p.url, p.command, p.timeout_s) for p in session.scalars(select(ExternalParser))}


def test_owner_adds_edits_and_stops_an_http_plugin(app: Flask, session: Session, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/plugins"
    page = owner.get(url).get_data(as_text=True)
    assert 'id="plugin-form"' in page and "No external parser yet" in page
    assert "Commands: site admins only." in page  # the owner is no admin: the field is disabled
    saved = owner.post(url, data={"label": "udpipe2", "kind": "http", "url": " http://127.0.0.1:8001/parse ",
                                  "timeout": "30"})
    assert saved.status_code == 302
    assert plugins(session) == {"udpipe2": ("http://127.0.0.1:8001/parse", None, 30.0)}
    edit = owner.get(f"{url}?edit=udpipe2").get_data(as_text=True)
    assert 'value="http://127.0.0.1:8001/parse"' in edit and 'value="udpipe2"' in edit
    changed = {"label": "udpipe2", "kind": "http", "url": "https://parser.example/x", "timeout": "5"}
    owner.post(url, data=changed)
    assert plugins(session) == {"udpipe2": ("https://parser.example/x", None, 5.0)}
    stopped = owner.post(f"{url}/udpipe2/remove")
    assert stopped.status_code == 302
    assert plugins(session) == {}  # it parsed nothing yet: forgotten


def test_a_stopped_plugin_with_trees_keeps_them(app: Flask, session: Session, team: Team) -> None:
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/plugins"
    owner.post(url, data={"label": "web", "kind": "http", "url": "http://127.0.0.1:8001/", "timeout": "30"})
    session.add(TreeVersion(sentence_id=team.sentence_id, kind="parser", name="web", version=1, heads=[0, 1],
                            deprels=["root", "dep"], user_id=team.users["owner"]))
    session.commit()
    assert "its trees stay" in owner.post(f"{url}/web/remove", follow_redirects=True).get_data(as_text=True)
    assert plugins(session) == {"web": (None, None, 30.0)}
    again = owner.post(f"{url}/web/remove")
    assert again.status_code == 422 and "The plugin was not stopped." in again.get_data(as_text=True)
    assert "has no plugin &#39;web&#39;" in again.get_data(as_text=True)


@pytest.mark.parametrize(("data", "problem"), [
    ({"label": "web", "kind": "http", "url": "ftp://x.org/", "timeout": "5"}, "only http:// and https://"),
    ({"label": "web", "kind": "http", "url": "", "timeout": "5"}, "Give the endpoint URL of this plugin."),
    ({"label": "eager", "kind": "http", "url": "http://x.org/", "timeout": "5"}, "is taken by a member"),
    ({"label": "web", "kind": "http", "url": "http://x.org/", "timeout": "0"}, "Number must be between"),
    ({"label": "", "kind": "http", "url": "http://x.org/", "timeout": "5"}, "This field is required."),
])
def test_bad_settings_are_named(app: Flask, session: Session, team: Team, data: dict[str, str],
                                problem: str) -> None:
    answer = client_as(app, team.users["owner"]).post(f"/treebanks/{team.treebank_id}/plugins", data=data)
    assert answer.status_code in (400, 422)
    assert problem in answer.get_data(as_text=True)
    assert plugins(session) == {}


COMMAND = {"label": "udpipe", "kind": "command", "command": "udpipe --parse m.udpipe", "timeout": "60"}
# one user per test: the test's app context (``session``) is shared by its requests, and with it
# Flask-Login's cached user


def test_an_owner_may_not_set_a_command(app: Flask, session: Session, team: Team) -> None:
    refused = client_as(app, team.users["owner"]).post(f"/treebanks/{team.treebank_id}/plugins", data=COMMAND)
    assert refused.status_code == 403
    assert "only a site admin may configure a command plugin" in refused.get_data(as_text=True)
    assert plugins(session) == {}


def test_a_site_admin_sets_a_command(app: Flask, session: Session, team: Team) -> None:
    admin = client_as(app, team.users["admin"])
    by_admin = admin.post(f"/treebanks/{team.treebank_id}/plugins", data=COMMAND)
    assert by_admin.status_code == 302
    assert plugins(session) == {"udpipe": (None, "udpipe --parse m.udpipe", 60.0)}


def test_plugin_refusal(session: Session, team: Team) -> None:
    treebank = session.get(Treebank, team.treebank_id)
    assert treebank is not None
    users = {name: session.get(User, uid) for name, uid in team.users.items()}
    assert plugin_refusal(users["owner"], treebank, "http") is None
    assert plugin_refusal(users["admin"], treebank, "command") is None
    assert "site admin" in (plugin_refusal(users["owner"], treebank, "command") or "")
    assert "may not manage" in (plugin_refusal(users["curator"], treebank, "http") or "")
    assert "no treebank called" in (plugin_refusal(users["stranger"], treebank, "http") or "")
    with pytest.raises(ValueError, match="unknown plugin kind"):
        plugin_refusal(users["owner"], treebank, "ssh")


def test_plugin_forms_need_csrf(app: Flask, session: Session, team: Team,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.config, "WTF_CSRF_ENABLED", True)
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/plugins"
    answer = owner.post(url, data={"label": "web", "kind": "http", "url": "http://x.org/", "timeout": "5"})
    assert answer.status_code == 400 and plugins(session) == {}
    assert owner.post(f"{url}/web/remove").status_code == 400
