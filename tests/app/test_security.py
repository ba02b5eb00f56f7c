"""The app's own safety settings: a real secret key, cookie attributes, security headers."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask

from app import create_app
from app.security import InsecureConfigError

PASSWORD = "correct horse battery"
REAL_KEY = "9f1c6b0e4d2a7c3b8e5f1a0d6c2b9e4f"


@pytest.mark.parametrize("key", [None, "", "dev", "test", "short-key"])
def test_the_app_refuses_to_start_without_a_real_secret_key(key: str | None) -> None:
    with pytest.raises(InsecureConfigError, match="will not start without a real secret key"):
        create_app({"SECRET_KEY": key})


def test_a_real_key_from_the_environment_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASK_SECRET_KEY", f'"{REAL_KEY}"')
    assert create_app().config["SECRET_KEY"] == REAL_KEY


def test_tests_without_a_key_get_a_random_one() -> None:
    first, second = create_app({"TESTING": True}), create_app({"TESTING": True})
    assert len(first.config["SECRET_KEY"]) >= 32
    assert first.config["SECRET_KEY"] != second.config["SECRET_KEY"]


@pytest.mark.parametrize("path", ["/auth/login", "/api/sentences/1", "/static/css/app.css", "/nowhere"])
def test_every_response_has_the_security_headers(app: Flask, path: str) -> None:
    response = app.test_client().get(path)
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def _cookies(response: object) -> dict[str, str]:
    headers = response.headers.getlist("Set-Cookie")  # type: ignore[attr-defined]
    return {header.split("=", 1)[0]: header for header in headers}


def test_cookies_are_lax_and_secure_only_over_https(
    app: Flask, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    form = {"username": "ana", "password": PASSWORD, "remember": "y"}
    plain = _cookies(app.test_client().post("/auth/login", data=form))
    assert set(plain) == {"session", "remember_token"}
    for cookie in plain.values():
        assert "SameSite=Lax" in cookie and "HttpOnly" in cookie and "Secure" not in cookie
    https = _cookies(app.test_client().post("/auth/login", data=form, base_url="https://localhost"))
    assert set(https) == {"session", "remember_token"}
    for cookie in https.values():
        assert "SameSite=Lax" in cookie and cookie.rstrip().endswith("Secure")


def test_https_behind_a_proxy_counts_when_the_proxy_is_trusted(
    app: Flask, make_user: Callable[..., int]
) -> None:
    make_user("ana")
    form = {"username": "ana", "password": PASSWORD}
    forwarded = {"X-Forwarded-Proto": "https"}
    untrusted = _cookies(app.test_client().post("/auth/login", data=form, headers=forwarded))
    assert "Secure" not in untrusted["session"]
    proxied = create_app({**app.config, "PROXY_COUNT": 1})
    trusted = _cookies(proxied.test_client().post("/auth/login", data=form, headers=forwarded))
    assert "Secure" in trusted["session"]
