"""Sign-in throttling: failed sign-ins are counted, and too many refuse further tries for a while.

Two moving windows, both from the configuration:

* ``LOGIN_RATE_LIMIT`` (default ``5 per minute``) per client address *and* user name: guessing
  one account's password is slow, and an attacker elsewhere cannot lock its owner out;
* ``LOGIN_RATE_LIMIT_PER_ADDRESS`` (default ``20 per minute``) per client address, whatever
  the names: trying many accounts from one machine is slow too.

Only failures count (signing in resets the address-and-name window). The counts live in
``RATELIMIT_STORAGE_URI``: ``memory://`` (default: per process, so each gunicorn worker counts
on its own) or ``redis://host:6379`` to share them between workers and machines (the ``redis``
package is a dependency already, for the job queue). Storage and windows come from the
``limits`` library (the one Flask-Limiter is built on), used directly because Flask-Limiter
counts every request a view receives and cannot count only the failed ones.
"""

from __future__ import annotations

import time
from typing import Any

from flask import Flask, current_app
from limits import RateLimitItem, parse, storage, strategies

DEFAULTS: dict[str, Any] = {
    "LOGIN_RATE_LIMIT": "5 per minute",
    "LOGIN_RATE_LIMIT_PER_ADDRESS": "20 per minute",
    "RATELIMIT_STORAGE_URI": "memory://",
}
"""Configuration defaults (``instance/config.py`` or ``FLASK_*`` may override them)."""


class LoginThrottle:
    """Counts failed sign-ins per (address, user name) and per address."""

    def __init__(self, storage_uri: str, per_name: str, per_address: str) -> None:
        self.storage = storage.storage_from_string(storage_uri)
        self.limiter = strategies.MovingWindowRateLimiter(self.storage)
        self.per_name: RateLimitItem = parse(per_name)
        self.per_address: RateLimitItem = parse(per_address)

    def _windows(self, address: str, username: str) -> list[tuple[RateLimitItem, tuple[str, ...]]]:
        name = username.strip().lower()[:80]
        return [(self.per_name, ("login", address, name)), (self.per_address, ("login", address))]

    def retry_after(self, address: str, username: str) -> int | None:
        """Seconds until the next try is allowed, or None when it is allowed now."""
        waits = [self.limiter.get_window_stats(limit, *keys).reset_time - time.time()
                 for limit, keys in self._windows(address, username)
                 if not self.limiter.test(limit, *keys)]
        return max(1, int(max(waits)) + 1) if waits else None

    def failed(self, address: str, username: str) -> None:
        """Count one failed sign-in."""
        for limit, keys in self._windows(address, username):
            self.limiter.hit(limit, *keys)

    def succeeded(self, address: str, username: str) -> None:
        """Forget the failures of this address and name (its owner got in)."""
        limit, keys = self._windows(address, username)[0]
        self.limiter.clear(limit, *keys)

    def reset(self) -> None:
        """Forget every count (tests)."""
        self.storage.reset()


def install(app: Flask) -> None:
    """Create the app's :class:`LoginThrottle` (``app.extensions["login_throttle"]``)."""
    app.extensions["login_throttle"] = LoginThrottle(
        app.config["RATELIMIT_STORAGE_URI"], app.config["LOGIN_RATE_LIMIT"],
        app.config["LOGIN_RATE_LIMIT_PER_ADDRESS"])


def login_throttle() -> LoginThrottle:
    """The current app's throttle."""
    throttle: LoginThrottle = current_app.extensions["login_throttle"]
    return throttle
