"""User accounts: create, authenticate, make sure an admin exists."""

from __future__ import annotations

import secrets

from sqlalchemy import select

from app.models import User
from app.services import DbSession


class UserExistsError(ValueError):
    """The user name is taken."""


def create_user(session: DbSession, username: str, password: str, *, admin: bool = False) -> User:
    """Add a user with a hashed password.

    :raise UserExistsError: the name is taken.
    :raise ValueError: empty name or a password shorter than 8 characters.
    """
    username = username.strip()
    if not username:
        raise ValueError("the user name is empty")
    if len(password) < 8:
        raise ValueError("the password needs at least 8 characters")
    if find_user(session, username) is not None:
        raise UserExistsError(f"user {username!r} already exists")
    user = User(username=username, is_admin=admin)
    user.set_password(password)
    session.add(user)
    session.flush()
    return user


def find_user(session: DbSession, username: str) -> User | None:
    """The user called ``username``, if any."""
    return session.scalar(select(User).where(User.username == username))


def authenticate(session: DbSession, username: str, password: str) -> User | None:
    """The user when name and password match, else None."""
    user = find_user(session, username.strip())
    if user is None or not user.check_password(password):
        return None
    return user


def ensure_admin(
    session: DbSession, username: str = "admin", password: str | None = None
) -> tuple[User, str | None]:
    """Make sure an admin called ``username`` exists.

    Returns the user and the password to show once: the given one or a new random one when
    the account was created, the given one when an existing account's password was reset,
    ``None`` when an existing account was left alone.
    """
    user = find_user(session, username)
    if user is None:
        password = password or secrets.token_urlsafe(12)
        return create_user(session, username, password, admin=True), password
    user.is_admin = True
    if password:
        user.set_password(password)
    session.flush()
    return user, password
