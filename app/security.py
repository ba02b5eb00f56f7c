"""Settings and hooks that keep a deployed arcvote safe: the secret key, cookies, response headers.

* :func:`require_secret_key` refuses to build the app (outside tests) without a real
  ``SECRET_KEY``: with a known or short key anyone could sign a session cookie.
* :data:`COOKIE_DEFAULTS`: session and remember-me cookies are ``HttpOnly`` and
  ``SameSite=Lax``; the CSRF token lives as long as the session (no time limit, so an editor
  left open all day can still save); :class:`SecureCookiesOverHttps` adds ``Secure`` to every
  cookie of a response served over HTTPS (behind a proxy, set ``PROXY_COUNT`` so the
  ``X-Forwarded-Proto`` of that many proxies is trusted).
* :func:`add_security_headers`: every response forbids framing and MIME sniffing and carries a
  Content-Security-Policy that allows scripts, styles and images from the app only (pages pass
  their data to scripts in ``data-`` attributes, never in inline script).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, Response, request
from flask_login import current_user
from werkzeug.middleware.proxy_fix import ProxyFix

MIN_SECRET_KEY_LENGTH = 16
"""Shortest accepted ``SECRET_KEY`` (``make run`` writes 64 hexadecimal characters)."""

WEAK_SECRET_KEYS = frozenset({"dev", "development", "secret", "changeme", "change-me", "test"})
"""Keys that tutorials and earlier versions used: refused whatever their length."""

COOKIE_DEFAULTS: dict[str, Any] = {
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "REMEMBER_COOKIE_HTTPONLY": True,
    "REMEMBER_COOKIE_SAMESITE": "Lax",
    "WTF_CSRF_TIME_LIMIT": None,
    "PROXY_COUNT": 0,
}
"""Configuration defaults (``instance/config.py`` or ``FLASK_*`` may override them)."""

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
"""Headers added to every response."""


class InsecureConfigError(RuntimeError):
    """The configuration would let strangers in (e.g. no real secret key)."""


def require_secret_key(app: Flask) -> None:
    """Refuse a missing, known or short ``SECRET_KEY`` unless ``TESTING`` is on.

    :raise InsecureConfigError: with what to do about it.
    """
    if app.testing:
        return
    key = app.config.get("SECRET_KEY")
    text = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key or "")
    if text.strip().lower() in WEAK_SECRET_KEYS or len(text.strip()) < MIN_SECRET_KEY_LENGTH:
        raise InsecureConfigError(
            "arcvote will not start without a real secret key (it signs the session cookies, so a "
            f"{'missing' if not text else 'known or short'} key lets anyone sign in as anyone). "
            "Run `make instance/config.py` (writes a random SECRET_KEY to instance/config.py) or set "
            "FLASK_SECRET_KEY to a random string of at least "
            f"{MIN_SECRET_KEY_LENGTH} characters, e.g. "
            "python3 -c 'import secrets; print(secrets.token_hex(32))'."
        )


def add_security_headers(response: Response) -> Response:
    """``after_request`` hook: :data:`SECURITY_HEADERS` on every response (kept if a view set one),
    and ``Cache-Control: no-store`` on every answer to a signed-in user but static files, so no
    shared or back-button cache keeps a member's pages (issue #31)."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if request.endpoint != "static" and current_user and current_user.is_authenticated:
        response.headers["Cache-Control"] = "no-store"
    return response


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class SecureCookiesOverHttps:
    """WSGI middleware: when the request came over HTTPS, every ``Set-Cookie`` gets ``Secure``.

    Over plain HTTP (``make run`` on 127.0.0.1) cookies must stay usable, so ``Secure`` cannot
    be a fixed setting; the scheme is the request's (after :class:`ProxyFix`).
    """

    def __init__(self, wsgi_app: WsgiApp) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("wsgi.url_scheme") != "https":
            return self.wsgi_app(environ, start_response)

        def secure_start_response(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
            headers = [(name, _with_secure(value) if name.lower() == "set-cookie" else value)
                       for name, value in headers]
            return start_response(status, headers, *args)

        return self.wsgi_app(environ, secure_start_response)


def _with_secure(cookie: str) -> str:
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    return cookie if "secure" in attributes else f"{cookie}; Secure"


def install(app: Flask) -> None:
    """Check the key, add the header hook and the cookie middleware (and ``ProxyFix`` if asked)."""
    require_secret_key(app)
    app.after_request(add_security_headers)
    wsgi: Any = SecureCookiesOverHttps(app.wsgi_app)
    proxies = int(app.config.get("PROXY_COUNT") or 0)
    if proxies > 0:
        wsgi = ProxyFix(wsgi, x_for=proxies, x_proto=proxies, x_host=proxies)
    app.wsgi_app = wsgi  # type: ignore[method-assign]
