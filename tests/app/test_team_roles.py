"""Roles per treebank: the members page, ownership of new treebanks, the owner's guard rails,
visibility, and the CLI acting as --user."""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from pathlib import Path

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.models import Membership, Treebank, User
from tests.app.team_helpers import POOL, TRAIN, build_team, client_as


def _roles(app: Flask, treebank_id: int) -> dict[str, str]:
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        return {m.user.username: m.role for m in treebank.memberships}


def test_importer_of_a_new_treebank_is_its_owner(app: Flask, make_user: Callable[..., int]) -> None:
    ana = client_as(app, make_user("ana"))
    form = {"name": "mine", "split": "train", "file_format": "conllu"}
    response = ana.post("/treebanks/import", data=form, content_type="multipart/form-data")
    assert response.status_code == 400  # no file: nothing made
    response = ana.post("/treebanks/import", data=form | {"file": (BytesIO(TRAIN.encode()), "t.conllu")},
                        content_type="multipart/form-data")
    assert response.status_code == 302
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        assert treebank.visibility == "private"
    assert _roles(app, treebank.id) == {"ana": "owner"}


def test_owner_adds_changes_and_removes_members(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/members"
    page = owner.get(url).get_data(as_text=True)
    assert "Who may do what" in page and "viewer" in page
    assert owner.post(url, data={"username": "stranger", "role": "annotator"}).status_code == 302
    assert _roles(app, team.treebank_id)["stranger"] == "annotator"
    assert owner.post(url, data={"username": "stranger", "role": "curator"}).status_code == 302
    assert _roles(app, team.treebank_id)["stranger"] == "curator"
    unknown = owner.post(url, data={"username": "nobody", "role": "viewer"})
    assert unknown.status_code == 422
    assert "No active user called &#39;nobody&#39;" in unknown.get_data(as_text=True)
    assert owner.post(url, data={"username": "viewer", "role": "boss"}).status_code == 400
    owner.post(f"{url}/{team.users['stranger']}/remove")
    assert "stranger" not in _roles(app, team.treebank_id)


def test_the_add_form_does_not_tell_which_names_exist(app: Flask, password_hash: str) -> None:
    """A deactivated account and a name nobody has get the same answer (issue #31, finding 11)."""
    with app.app_context():
        team = build_team(db.session, password_hash)
        stranger = db.session.get(User, team.users["stranger"])
        assert stranger is not None
        stranger.active = False
        db.session.commit()
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/members"
    answers = {name: owner.post(url, data={"username": name, "role": "viewer"})
               for name in ("stranger", "strangr")}
    pages = {name: answer.get_data(as_text=True).replace(name, "NAME") for name, answer in answers.items()}
    assert {answer.status_code for answer in answers.values()} == {422}
    assert pages["stranger"] == pages["strangr"]
    assert "No active user called &#39;NAME&#39;" in pages["stranger"]
    assert "deactivated" not in pages["stranger"]


def test_the_last_owner_stays(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    owner = client_as(app, team.users["owner"])
    url = f"/treebanks/{team.treebank_id}/members"
    demoted = owner.post(url, data={"username": "owner", "role": "viewer"})
    assert demoted.status_code == 422 and "is the only owner" in demoted.get_data(as_text=True)
    owner.post(f"{url}/{team.users['owner']}/remove")
    assert _roles(app, team.treebank_id)["owner"] == "owner"
    owner.post(url, data={"username": "curator", "role": "owner"})
    assert owner.post(url, data={"username": "owner", "role": "viewer"}).status_code == 302
    assert _roles(app, team.treebank_id)["owner"] == "viewer"
    assert owner.get(url).status_code == 403  # a viewer now


def test_public_treebank_is_read_by_everyone_signed_in(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    stranger = client_as(app, team.users["stranger"])
    assert stranger.get(f"/treebanks/{team.treebank_id}/sentences").status_code == 404
    owner = client_as(app, team.users["owner"])
    made_public = owner.post(f"/treebanks/{team.treebank_id}/visibility", data={"visibility": "public"})
    assert made_public.status_code == 302
    assert stranger.get(f"/treebanks/{team.treebank_id}/sentences").status_code == 200
    assert "team tb" in stranger.get("/treebanks/").get_data(as_text=True)
    save = stranger.post(f"/api/sentences/{team.sentence_id}/annotations",
                         json={"heads": [2, 0], "deprels": ["nsubj", "root"], "expected_version": 0})
    assert save.status_code == 403


def test_annotator_saves_and_viewer_does_not(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    body = {"heads": [2, 0], "deprels": ["nsubj", "root"], "expected_version": 0}
    url = f"/api/sentences/{team.sentence_id}/annotations"
    assert client_as(app, team.users["viewer"]).post(url, json=body).status_code == 403
    assert client_as(app, team.users["annotator"]).post(url, json=body).status_code == 201
    assert client_as(app, team.users["annotator"]).post(
        f"/api/treebanks/{team.treebank_id}/preannotate", json={"parsers": "graph1"}).status_code == 403


def test_cli_acts_as_the_given_user(
    app: Flask, runner: FlaskCliRunner, password_hash: str, tmp_path: Path
) -> None:
    with app.app_context():
        build_team(db.session, password_hash)
    path = tmp_path / "more.conllu"
    path.write_text(POOL)
    stranger = runner.invoke(args=["treebank", "export", "team tb", "--user", "stranger"])
    assert stranger.exit_code == 1 and "no treebank called 'team tb'" in stranger.output
    viewer = runner.invoke(args=["treebank", "export", "team tb", "--user", "viewer"])
    assert viewer.exit_code == 0 and "Dogs" in viewer.output
    refused = runner.invoke(args=["treebank", "import", str(path), "--name", "team tb",
                                  "--split", "pool", "--user", "annotator"])
    assert refused.exit_code == 1 and "you may not import into treebank 'team tb'" in refused.output
    train = runner.invoke(args=["treebank", "preannotate", "team tb", "--user", "curator"])
    assert train.exit_code == 1 and "you may not start training rounds on treebank 'team tb'" in train.output
    role = runner.invoke(args=["treebank", "role", "team tb", "stranger", "annotator", "--user", "viewer"])
    assert role.exit_code == 1 and "you may not manage the members of" in role.output
    role = runner.invoke(args=["treebank", "role", "team tb", "stranger", "annotator", "--user", "owner"])
    assert role.exit_code == 0
    imported = runner.invoke(args=["treebank", "import", str(path), "--name", "team tb",
                                   "--split", "pool", "--user", "admin"])
    assert imported.exit_code == 0, imported.output
    with app.app_context():
        assert db.session.scalar(select(Membership.role).where(
            Membership.user.has(username="stranger"))) == "annotator"
