"""User accounts: create, authenticate, make sure an admin exists; deactivate, change a
password, and one-time invitation and password-reset links.

A link's token is shown once (in the URL); only its SHA-256 is stored
(:class:`app.team_models.AccountToken`). It works once and for :data:`TOKEN_DAYS` days.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from app.models import ROLES, Membership, Treebank, User
from app.services import DbSession, as_utc
from app.services.audit import record
from app.team_models import AccountToken

MIN_PASSWORD = 8
TOKEN_DAYS = 7
BAD_LINK = "this link is not valid: it was already used, it expired, or it was mistyped"


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
    if len(username) > 80:
        raise ValueError("the user name has at most 80 characters")
    check_new_password(password)
    if find_user(session, username) is not None:
        raise UserExistsError(f"user {username!r} already exists")
    user = User(username=username, is_admin=admin)
    user.set_password(password)
    try:
        with session.begin_nested():  # the same name added by another request meanwhile (#31)
            session.add(user)
    except IntegrityError:
        raise UserExistsError(f"user {username!r} already exists") from None
    return user


def find_user(session: DbSession, username: str) -> User | None:
    """The user called ``username``, if any."""
    return session.scalar(select(User).where(User.username == username))


def authenticate(session: DbSession, username: str, password: str) -> User | None:
    """The user when name and password match and the account is active, else None.

    An unknown name costs one password hash too (against :func:`_dummy_hash`), so the answer
    takes as long as for a known name: timing does not tell which user names exist.
    """
    user = find_user(session, username.strip())
    if user is None:
        check_password_hash(_dummy_hash(), password)
        return None
    return user if user.check_password(password) and user.active else None


@cache
def _dummy_hash() -> str:
    """A hash of a random password, made like the real ones (same method and cost)."""
    return generate_password_hash(secrets.token_urlsafe(16))


def check_new_password(password: str) -> None:
    """:raise ValueError: a password shorter than :data:`MIN_PASSWORD` characters."""
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"the password needs at least {MIN_PASSWORD} characters")


def change_password(session: DbSession, user: User, current: str, new: str) -> None:
    """Set the user's own password; :raise ValueError: wrong current or too short new one."""
    if not user.check_password(current):
        raise ValueError("the current password is wrong")
    check_new_password(new)
    user.set_password(new)
    record(session, "password-change", user=user, subject=user)


def set_active(session: DbSession, user: User, active: bool, *, by: User) -> None:
    """Deactivate (they can no longer sign in; open sessions end, and stay ended: their cookies
    are revoked, so reactivating does not bring them back) or reactivate ``user``.

    :raise ValueError: an admin deactivating their own account.
    """
    if not active and user.id == by.id:
        raise ValueError("you cannot deactivate your own account")
    if user.active and not active:
        user.revoke_sessions()
    user.active = active
    record(session, "user-activate" if active else "user-deactivate", user=by, subject=user)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(session: DbSession, kind: str, *, by: User, user: User | None = None,
                treebank: Treebank | None = None, role: str | None = None) -> str:
    """A new one-time ``invite`` link token, or a ``reset`` token for ``user``'s password. An
    invitation with a ``treebank`` and ``role`` makes the new account a member with that role."""
    if (kind == "reset") != (user is not None):
        raise ValueError("a reset link is for one user; an invitation is for none yet")
    if (treebank is None) != (role is None) or (kind == "reset" and treebank is not None):
        raise ValueError("an invitation to a treebank needs the treebank and a role")
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    token = secrets.token_urlsafe(32)
    session.add(AccountToken(kind=kind, token_hash=_digest(token), user_id=user.id if user else None,
                             created_by_id=by.id, treebank_id=treebank.id if treebank else None, role=role,
                             expires_at=datetime.now(UTC) + timedelta(days=TOKEN_DAYS)))
    details: dict[str, Any] = {"role": role} if role else {}
    record(session, "user-invite" if kind == "invite" else "password-reset", user=by, subject=user,
           treebank=treebank, **details)
    return token


def _join_invited(session: DbSession, link: AccountToken, user: User) -> None:
    """Make the account made from an invitation a member of the link's treebank, with its role
    (not when the treebank was archived or deleted since)."""
    treebank = session.get(Treebank, link.treebank_id) if link.treebank_id else None
    if treebank is None or treebank.archived_at is not None or link.role not in ROLES:
        return
    treebank.memberships.append(Membership(user=user, role=link.role))
    inviter = session.get(User, link.created_by_id)
    record(session, "role-add", user=inviter, treebank=treebank, subject=user, role=link.role, invited=True)


def find_token(session: DbSession, token: str) -> AccountToken:
    """The unused, unexpired link of ``token``; :raise ValueError: :data:`BAD_LINK` otherwise."""
    found = session.scalar(select(AccountToken).where(AccountToken.token_hash == _digest(token)))
    if found is None or found.used_at is not None or as_utc(found.expires_at) <= datetime.now(UTC):
        raise ValueError(BAD_LINK)
    return found


def redeem_token(session: DbSession, token: str, password: str, username: str | None = None) -> User:
    """Use a link once: an invitation creates ``username``; a reset sets the password.

    The link is claimed first by one conditional UPDATE (``used_at`` still empty): of several
    requests using it at the same moment exactly one goes on, the others get :data:`BAD_LINK`
    (issue #31); a refusal after the claim rolls it back with everything else.

    :raise ValueError: a bad link (:data:`BAD_LINK`), a taken or empty name, a short password.
    """
    link = find_token(session, token)
    claimed = session.execute(
        update(AccountToken).where(AccountToken.id == link.id, AccountToken.used_at.is_(None))
        .values(used_at=datetime.now(UTC)).execution_options(synchronize_session=False))
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        raise ValueError(BAD_LINK)
    session.refresh(link)
    if link.kind == "invite":
        user = create_user(session, username or "", password)
        link.user_id = user.id
        record(session, "user-create", user=user, subject=user, invited=True)
        _join_invited(session, link, user)
    else:
        found = session.get(User, link.user_id)
        if found is None:
            raise ValueError(BAD_LINK)
        check_new_password(password)
        found.set_password(password)
        user = found
        record(session, "password-change", user=user, subject=user, by_link=True)
    session.flush()
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
    if password and not user.check_password(password):  # the same password keeps the sessions
        user.set_password(password)
    session.flush()
    return user, password
