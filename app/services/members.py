"""Members of a treebank and their roles, and the treebank's visibility (owner's settings).

Every change is an audit event. A treebank always keeps at least one owner: the last owner
cannot be removed or given a lesser role (an admin can still act on any treebank). Two owners
demoting each other at the same moment cannot both succeed: a change first locks the treebank's
memberships (:func:`_lock_memberships`) and counts the owners after the lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, update

from app.models import ROLES, VISIBILITIES, Document, Membership, Sentence, Treebank, User
from app.services import DbSession
from app.services.audit import record
from app.services.users import find_user
from app.team_models import Assignment


class MemberError(ValueError):
    """A refused membership change; ``field`` names the form field at fault."""

    def __init__(self, message: str, field: str = "username") -> None:
        super().__init__(message)
        self.field = field


def members(session: DbSession, treebank: Treebank) -> list[Membership]:
    """The treebank's memberships, strongest role first, then by user name."""
    rows = session.scalars(select(Membership).join(User, User.id == Membership.user_id)
                           .where(Membership.treebank_id == treebank.id).order_by(User.username))
    return sorted(rows, key=lambda m: -ROLES.index(m.role))


def _owners(treebank: Treebank) -> int:
    return sum(m.role == "owner" for m in treebank.memberships)


def _lock_memberships(session: DbSession, treebank: Treebank) -> None:
    """Hold the treebank's memberships until the transaction ends, then reload them: on
    PostgreSQL ``SELECT ... FOR UPDATE`` of its membership rows and its own row; on SQLite the
    database's write lock, taken by an UPDATE of the treebank's row that changes nothing (a
    concurrent change waits for this one to commit, then sees it)."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(update(Treebank).where(Treebank.id == treebank.id)
                        .values(visibility=Treebank.visibility))
    else:
        session.execute(select(Treebank.id).where(Treebank.id == treebank.id).with_for_update())
    session.scalars(select(Membership).where(Membership.treebank_id == treebank.id)
                    .with_for_update().execution_options(populate_existing=True)).all()
    session.expire(treebank, ["memberships"])  # reloaded, as committed before the lock, when next read


NO_SUCH_USER = "no active user called {name!r}"
"""The one refusal for a name that is not a user's and for a deactivated user's: the form does
not tell which names exist (issue #31)."""


def set_role(session: DbSession, treebank: Treebank, username: str, role: str, *, by: User) -> Membership:
    """Give ``username`` the ``role`` on ``treebank`` (adds them or changes their role).

    :raise MemberError: unknown role or user, a deactivated user, or the last owner demoted.
    """
    if role not in ROLES:
        raise MemberError(f"role must be one of {', '.join(ROLES)}", field="role")
    user = find_user(session, username.strip())
    if user is None or not user.active:
        raise MemberError(NO_SUCH_USER.format(name=username.strip()))
    _lock_memberships(session, treebank)
    current = next((m for m in treebank.memberships if m.user_id == user.id), None)
    if current is None:
        current = Membership(user=user, role=role)
        treebank.memberships.append(current)
        record(session, "role-add", user=by, treebank=treebank, subject=user, role=role)
    elif current.role != role:
        if current.role == "owner" and _owners(treebank) == 1:
            raise MemberError(f"{user.username} is the only owner: make someone else owner first",
                              field="role")
        record(session, "role-change", user=by, treebank=treebank, subject=user,
               role=role, previous=current.role)
        current.role = role
    session.flush()
    return current


def remove_member(session: DbSession, treebank: Treebank, user_id: int, *, by: User) -> None:
    """Take away the user's role on ``treebank``.

    :raise MemberError: not a member, or the last owner.
    """
    _lock_memberships(session, treebank)
    current = next((m for m in treebank.memberships if m.user_id == user_id), None)
    if current is None:
        raise MemberError("not a member of this treebank")
    if current.role == "owner" and _owners(treebank) == 1:
        raise MemberError(f"{current.user.username} is the only owner: make someone else owner first")
    record(session, "role-remove", user=by, treebank=treebank, subject=current.user,
           previous=current.role)
    treebank.memberships.remove(current)
    session.flush()


def set_visibility(session: DbSession, treebank: Treebank, visibility: str, *, by: User) -> None:
    """Make the treebank ``public`` (every signed-in user reads it) or ``private``."""
    if visibility not in VISIBILITIES:
        raise MemberError(f"visibility must be one of {', '.join(VISIBILITIES)}", field="visibility")
    if visibility != treebank.visibility:
        record(session, "visibility", user=by, treebank=treebank, visibility=visibility,
               previous=treebank.visibility)
        treebank.visibility = visibility
        session.flush()


@dataclass(frozen=True)
class Welcome:
    """A treebank the user was added to without owning it, for the treebank list's welcome:
    their ``role`` and how many sentences are assigned to them and still open."""

    treebank: Treebank
    role: str
    open_assigned: int


def memberships_of(session: DbSession, user: User) -> list[Membership]:
    """The user's memberships of treebanks that are not archived, by treebank name."""
    return list(session.scalars(select(Membership).join(Treebank).where(
        Membership.user_id == user.id, Treebank.archived_at.is_(None)).order_by(Treebank.name)))


def welcome(session: DbSession, user: User) -> list[Welcome]:
    """What to tell a user who owns no treebank (empty for owners and site admins): each
    treebank they were added to, their role and open assignments."""
    mine = memberships_of(session, user)
    if user.is_admin or any(m.role == "owner" for m in mine):
        return []
    open_counts: dict[int, int] = {tid: n for tid, n in session.execute(
        select(Document.treebank_id, func.count()).select_from(Assignment).join(Sentence).join(Document)
        .where(Assignment.user_id == user.id, Assignment.done_at.is_(None)).group_by(Document.treebank_id))}
    return [Welcome(m.treebank, m.role, open_counts.get(m.treebank_id, 0)) for m in mine]
