"""Users in the browser: an admin creates, invites, deactivates and resets; everyone changes
their own password. Each step is checked through the pages and in the database."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import User
from app.team_models import AccountToken, AuditEvent
from tests.app.conftest import PASSWORD
from tests.app.team_helpers import client_as


def _sign_in(client: FlaskClient, username: str, password: str) -> int:
    return client.post("/auth/login", data={"username": username, "password": password}).status_code


def _user(app: Flask, username: str) -> User | None:
    with app.app_context():
        user = db.session.scalar(select(User).where(User.username == username))
        if user is not None:
            db.session.expunge(user)
        return user


def _link(html: str) -> str:
    found = re.search(r'value="http://localhost(/auth/link/[^"]+)"', html)
    assert found, "the page shows the link once"
    return found[1]


def test_admin_creates_a_user_who_signs_in(
    app: Flask, client: FlaskClient, make_user: Callable[..., int]
) -> None:
    admin = client_as(app, make_user("root", admin=True))
    response = admin.post("/admin/users", data={"username": "nadia", "password": "long enough pw"})
    assert response.status_code == 302
    assert "nadia" in admin.get("/admin/users").get_data(as_text=True)
    assert _sign_in(client, "nadia", "long enough pw") == 302
    created = _user(app, "nadia")
    assert created is not None and not created.is_admin and created.active


def test_create_refuses_a_taken_name_and_a_short_password(app: Flask, make_user: Callable[..., int]) -> None:
    admin = client_as(app, make_user("root", admin=True))
    taken = admin.post("/admin/users", data={"username": "root", "password": "long enough pw"})
    assert taken.status_code == 422 and "already exists" in taken.get_data(as_text=True)
    short = admin.post("/admin/users", data={"username": "nadia", "password": "short"})
    assert short.status_code == 400 and _user(app, "nadia") is None


def test_only_admins_manage_users(app: Flask, make_user: Callable[..., int]) -> None:
    ana = client_as(app, make_user("ana"))
    assert ana.get("/admin/users").status_code == 403
    assert ana.post("/admin/users", data={"username": "x", "password": "long enough pw"}).status_code == 403
    assert _user(app, "x") is None


def test_invitation_link_works_once(app: Flask, client: FlaskClient, make_user: Callable[..., int]) -> None:
    admin = client_as(app, make_user("root", admin=True))
    path = _link(admin.post("/admin/users/invite").get_data(as_text=True))
    assert "Create your account" in client.get(path).get_data(as_text=True)
    mismatch = client.post(path, data={"username": "ivo", "password": "ivo password", "confirm": "other"})
    assert mismatch.status_code == 400 and _user(app, "ivo") is None
    done = client.post(path, data={"username": "ivo", "password": "ivo password", "confirm": "ivo password"})
    assert done.status_code == 302 and _sign_in(client, "ivo", "ivo password") == 302
    again = app.test_client().post(path, data={"username": "eve", "password": "eve password",
                                               "confirm": "eve password"})
    assert again.status_code == 404 and _user(app, "eve") is None
    with app.app_context():
        stored = db.session.scalars(select(AccountToken.token_hash)).one()
        assert path.rsplit("/", 1)[1] not in stored  # only the hash is kept


def test_deactivated_user_cannot_sign_in_and_is_signed_out(
    app: Flask, client: FlaskClient, make_user: Callable[..., int]
) -> None:
    root = make_user("root", admin=True)
    ana_id = make_user("ana")
    assert _sign_in(client, "ana", PASSWORD) == 302
    admin = client_as(app, root)
    assert admin.post(f"/admin/users/{ana_id}/active", data={"active": "0"}).status_code == 302
    assert client.get("/treebanks/").status_code == 302  # the open session ended
    assert _sign_in(app.test_client(), "ana", PASSWORD) == 200  # the form again: refused
    refused = admin.post(f"/admin/users/{root}/active", data={"active": "0"}, follow_redirects=True)
    assert "You cannot deactivate your own account" in refused.get_data(as_text=True)
    admin.post(f"/admin/users/{ana_id}/active", data={"active": "1"})
    assert _sign_in(app.test_client(), "ana", PASSWORD) == 302


def test_reset_link_sets_a_new_password(
    app: Flask, client: FlaskClient, make_user: Callable[..., int]
) -> None:
    admin = client_as(app, make_user("root", admin=True))
    ana_id = make_user("ana")
    page = admin.post(f"/admin/users/{ana_id}/reset").get_data(as_text=True)
    assert "Password reset link for ana" in page
    path = _link(page)
    assert client.post(path, data={"password": "brand new pw", "confirm": "brand new pw"}).status_code == 302
    assert _sign_in(app.test_client(), "ana", PASSWORD) == 200
    assert _sign_in(app.test_client(), "ana", "brand new pw") == 302


def test_user_changes_own_password(app: Flask, make_user: Callable[..., int]) -> None:
    ana = client_as(app, make_user("ana"))
    wrong = ana.post("/auth/password", data={"current": "nope", "password": "new password 1",
                                             "confirm": "new password 1"})
    assert wrong.status_code == 422 and "The current password is wrong" in wrong.get_data(as_text=True)
    done = ana.post("/auth/password", data={"current": PASSWORD, "password": "new password 1",
                                            "confirm": "new password 1"})
    assert done.status_code == 302
    assert _sign_in(app.test_client(), "ana", "new password 1") == 302
    with app.app_context():
        actions = db.session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)).all()
    assert "password-change" in actions and "sign-in" in actions
