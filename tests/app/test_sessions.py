"""Sessions: the CSRF token lasts as long as the session; remember-me cookies are revoked by
signing out, by a new password (except in the browser that changed it) and by deactivation."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from app.extensions import db
from app.models import User
from app.services.users import set_active as set_user_active

PASSWORD = "correct horse battery"


def _csrf_token(client: FlaskClient) -> str:
    page = client.get("/auth/login").get_data(as_text=True)
    return page.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]


class _Later:
    """``time`` as seen ``hours`` from now (itsdangerous reads ``time.time()`` to date tokens)."""

    def __init__(self, hours: float) -> None:
        self.offset = hours * 3600

    def time(self) -> float:
        return time.time() + self.offset


def test_a_csrf_token_lasts_as_long_as_its_session(
    app: Flask, make_user: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_user("ana")
    protected = create_app({**app.config, "WTF_CSRF_ENABLED": True})
    client = protected.test_client()
    token = _csrf_token(client)
    monkeypatch.setattr("itsdangerous.timed.time", _Later(hours=9))  # an editor left open all day
    form = {"username": "ana", "password": PASSWORD, "csrf_token": token}
    response = client.post("/auth/login", data=form)
    assert response.status_code == 302
    # ... but the token belongs to its session: another browser cannot use it.
    stranger = protected.test_client()
    refused = stranger.post("/auth/login", data=form)
    assert refused.status_code == 400 and "CSRF" in refused.get_data(as_text=True)


def _remembered(app: Flask, value: str) -> FlaskClient:
    """A fresh browser holding only a remember-me cookie (a copy of another one's)."""
    client = app.test_client()
    client.set_cookie("remember_token", value)
    return client


def _signed_in(client: FlaskClient) -> bool:
    return client.get("/treebanks/").status_code == 200


def _sign_in_remembered(app: Flask) -> tuple[FlaskClient, str]:
    client = app.test_client()
    client.post("/auth/login", data={"username": "ana", "password": PASSWORD, "remember": "y"})
    cookie = client.get_cookie("remember_token")
    assert cookie is not None
    return client, cookie.value


def test_signing_out_revokes_the_remember_me_cookie(app: Flask, make_user: Callable[..., int]) -> None:
    make_user("ana")
    client, remember = _sign_in_remembered(app)
    assert _signed_in(_remembered(app, remember))  # the cookie alone signs in ...
    other_device, other_remember = _sign_in_remembered(app)
    assert client.post("/auth/logout").status_code == 302
    assert not _signed_in(_remembered(app, remember))  # ... not after signing out,
    assert not _signed_in(other_device)  # everywhere: every session of the user ends
    assert not _signed_in(_remembered(app, other_remember))
    again, _ = _sign_in_remembered(app)  # signing in again works
    assert _signed_in(again)


def test_a_new_password_revokes_sessions_and_remember_me_cookies(
    app: Flask, make_user: Callable[..., int]
) -> None:
    user_id = make_user("ana")
    client, remember = _sign_in_remembered(app)
    assert _signed_in(client)
    with app.app_context():
        user = db.session.get(User, user_id)
        assert user is not None
        user.set_password("a brand new password")
        db.session.commit()
    assert not _signed_in(client)
    assert not _signed_in(_remembered(app, remember))


@pytest.mark.parametrize("user_id", ["1", "1:x", "x:0", "99999999999999999999:0", ""])
def test_malformed_or_old_user_ids_sign_nobody_in(app: Flask, make_user: Callable[..., int],
                                                  user_id: str) -> None:
    make_user("ana")
    client = app.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = user_id
        session["_fresh"] = True
    assert not _signed_in(client)


def test_changing_your_own_password_keeps_this_session_and_ends_the_others(
    app: Flask, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    here, remember_here = _sign_in_remembered(app)
    elsewhere, remember_elsewhere = _sign_in_remembered(app)
    changed = here.post("/auth/password", data={"current": PASSWORD, "password": "a brand new password",
                                                "confirm": "a brand new password"})
    assert changed.status_code == 302
    assert _signed_in(here)  # the browser that changed it carries on ...
    renewed = here.get_cookie("remember_token")
    assert renewed is not None and renewed.value != remember_here  # ... and is remembered anew
    assert _signed_in(_remembered(app, renewed.value))
    for old in (remember_here, remember_elsewhere):
        assert not _signed_in(_remembered(app, old))
    assert not _signed_in(elsewhere)


def test_a_deactivated_user_stays_signed_out_after_reactivation(
    app: Flask, make_user: Callable[..., int]
) -> None:
    user_id, admin_id = make_user("ana"), make_user("root", admin=True)
    client, remember = _sign_in_remembered(app)

    def set_active(active: bool) -> None:
        with app.app_context():
            user, admin = db.session.get(User, user_id), db.session.get(User, admin_id)
            assert user is not None and admin is not None
            set_user_active(db.session, user, active, by=admin)
            db.session.commit()

    set_active(False)
    assert not _signed_in(client)
    set_active(True)  # the sessions of before do not come back with the account
    assert not _signed_in(client) and not _signed_in(_remembered(app, remember))
    again, _ = _sign_in_remembered(app)
    assert _signed_in(again)
