"""Sign-in cannot be brute-forced: failures are rate-limited, and unknown user names cost the
same password hash as known ones."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import pytest
import werkzeug.security
from flask import Flask
from flask.testing import FlaskClient

import app.services.users as users
from app.models import User

PASSWORD = "correct horse battery"


def _try(client: FlaskClient, username: str, password: str, address: str = "10.0.0.1") -> int:
    response = client.post("/auth/login", data={"username": username, "password": password},
                           environ_base={"REMOTE_ADDR": address})
    return response.status_code


def test_failed_sign_ins_are_limited_per_address_and_name(
    client: FlaskClient, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    assert [_try(client, "ana", f"guess {i}") for i in range(5)] == [200] * 5
    response = client.post("/auth/login", data={"username": "ana", "password": "guess 6"},
                           environ_base={"REMOTE_ADDR": "10.0.0.1"})
    assert response.status_code == 429
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert "Too many failed sign-ins" in response.get_data(as_text=True)
    # Even the right password waits: the limit is checked before the password.
    assert _try(client, "ana", PASSWORD) == 429
    # The owner, elsewhere, still gets in (an attacker cannot lock an account).
    assert _try(client, "ana", PASSWORD, address="10.0.0.2") == 302


def test_failed_sign_ins_are_limited_per_address_across_names(
    client: FlaskClient, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    codes = [_try(client, f"user{i}", "guess") for i in range(21)]
    assert codes[:20] == [200] * 20 and codes[20] == 429
    assert _try(client, "ana", PASSWORD, address="10.0.0.3") == 302


def test_signing_in_forgets_earlier_failures(client: FlaskClient, make_user: Callable[..., int]) -> None:
    make_user("ana")
    for i in range(4):
        _try(client, "ana", f"typo {i}")
    assert _try(client, "ana", PASSWORD) == 302
    client.post("/auth/logout")
    assert [_try(client, "ana", f"typo {i}") for i in range(5)] == [200] * 5


def test_the_limit_comes_from_the_configuration(app: Flask, make_user: Callable[..., int]) -> None:
    from app import create_app

    make_user("ana")
    strict = create_app({**app.config, "LOGIN_RATE_LIMIT": "2 per hour"}).test_client()
    assert [_try(strict, "ana", "x") for _ in range(3)] == [200, 200, 429]


def test_unknown_names_cost_a_password_hash_too(
    client: FlaskClient, make_user: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_user("ana")
    checked: list[str] = []
    real = werkzeug.security.check_password_hash

    def counted(pwhash: str, password: str) -> bool:
        checked.append(password)
        return real(pwhash, password)

    monkeypatch.setattr(users, "check_password_hash", counted)
    assert _try(client, "nobody", "a guess") == 200
    assert checked == ["a guess"]


def test_unknown_and_known_names_take_about_as_long(app: Flask, make_user: Callable[..., int]) -> None:
    """Measured on the service (no HTTP): a hash each; unknown names were 10x faster before."""
    from app.extensions import db

    make_user("ana")
    with app.app_context():
        users.authenticate(db.session, "nobody", "warm up")  # the dummy hash is made once

        def median_seconds(name: str) -> float:
            times = []
            for _ in range(5):
                started = time.perf_counter()
                assert users.authenticate(db.session, name, "wrong password") is None
                times.append(time.perf_counter() - started)
            return statistics.median(times)

        known, unknown = median_seconds("ana"), median_seconds("nobody")
        assert db.session.query(User).count() == 1
    assert unknown > known / 3, (known, unknown)
