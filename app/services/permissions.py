"""Who may do what on a treebank: the one place every page, JSON endpoint and CLI command asks.

Roles (:data:`app.models.ROLES`) are ordered; each action needs at least one role:

===============  ===========  ===========================================================
action           least role   what it covers
===============  ===========  ===========================================================
``read``         viewer       sentence list and pages, queue, editor (read only), history,
                              rounds pages and CSV, job status, CoNLL-U export
``annotate``     annotator    save a tree, check a tree before saving, revert, review status
                              and reviewed words, notes
``curate``       curator      agreement and adjudication, the treebank's audit log
``import``       owner        import files into the treebank
``train``        owner        start pre-annotation jobs (training rounds)
``manage``       owner        members and roles, visibility (public or private),
                              assignments and their rules, backup
``remove``       owner        archive, restore, delete the treebank or one of its documents
===============  ===========  ===========================================================

* A higher role may do everything a lower one may (a curator annotates, an owner curates).
* A **public** treebank gives every signed-in user the ``viewer`` role unless they have more.
* The **site admin** (``User.is_admin``) may do everything on every treebank.
* An **archived** treebank is frozen and hidden: only its owners and admins read it, and the
  only actions left are ``remove`` (restore or delete) and ``read``.
* A deactivated user may do nothing.
* Writes to one sentence (save, revert, review status) need ``annotate`` and
  :func:`line_refusal`: with the treebank's ``assigned_only`` an **annotator** writes only the
  sentences assigned to them (curators and owners any); a doubly annotated sentence's main line
  is written by ``curate`` only (adjudication), while its assigned annotators write their own
  branches (:mod:`app.services.assignments`).

* **Plugins** (external parsers run during pre-annotation, issue #16) are configured with
  ``manage``; an HTTP plugin by the treebank's owner, a **command** plugin by a site admin only
  (:func:`plugin_refusal`): a command runs as the server's user, so letting every owner set one
  would let anyone who creates a treebank run programs on the server. An HTTP plugin only
  makes the server POST the treebank's own sentences to a URL the owner chose (http or https,
  no redirect followed, reply capped and read as CoNLL-U, never shown back raw). That URL may
  be any address the server reaches, localhost included (where a parser such as UDPipe's REST
  server usually runs): a deployment that must keep owners off internal services restricts
  the server's outgoing traffic.

What a refusal looks like (:func:`refusal`), the same on every page, endpoint and command:
someone who may not **read** the treebank is told it does not exist (404; the CLI says "no
treebank called ..."), so private treebanks do not leak their existence; someone who may read
it but not do the action gets 403 ("you may not ..."). Signed-out requests are sent to sign in
(401 for JSON).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, false, or_, select, true

from app.models import ROLES, Membership, Treebank

ACTIONS: dict[str, str] = {
    "read": "viewer",
    "annotate": "annotator",
    "curate": "curator",
    "import": "owner",
    "train": "owner",
    "manage": "owner",
    "remove": "owner",
}
"""The least role each action needs (the table in the module docstring)."""

PHRASES = {"read": "read", "annotate": "annotate sentences of", "curate": "curate",
           "import": "import into", "train": "start training rounds on",
           "manage": "manage the members of", "remove": "archive or delete"}
"""How a refusal names each action ("you may not import into treebank 'x'")."""

ARCHIVED_ACTIONS = ("read", "remove")
"""What can still be done on an archived treebank (by its owners and admins)."""


class PermissionDenied(Exception):
    """``user`` may not do ``action`` on ``treebank``; ``hidden`` when they may not even read it
    (so the caller answers as if it did not exist)."""

    def __init__(self, action: str, treebank: Treebank, hidden: bool) -> None:
        if hidden:
            what = f"no treebank called {treebank.name!r}"
        elif treebank.archived_at is not None and action not in ARCHIVED_ACTIONS:
            what = f"treebank {treebank.name!r} is archived: its owner can restore it"
        else:
            what = f"you may not {PHRASES[action]} treebank {treebank.name!r}"
        super().__init__(what)
        self.action, self.treebank, self.hidden = action, treebank, hidden


def role_of(user: Any, treebank: Treebank) -> str | None:
    """The user's effective role on ``treebank``: ``owner`` for admins, the membership's role,
    ``viewer`` on a public treebank, else None. Signed-out or deactivated users have none."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    if user.is_admin:
        return "owner"
    role = next((m.role for m in treebank.memberships if m.user_id == user.id), None)
    if role is None and treebank.visibility == "public":
        role = "viewer"
    if treebank.archived_at is not None and role != "owner":
        return None
    return role


def can(user: Any, action: str, treebank: Treebank) -> bool:
    """True when ``user`` may do ``action`` (a key of :data:`ACTIONS`) on ``treebank``."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    role = role_of(user, treebank)
    if role is None:
        return False
    if treebank.archived_at is not None and action not in ARCHIVED_ACTIONS:
        return False
    return ROLES.index(role) >= ROLES.index(ACTIONS[action])


def refusal(user: Any, action: str, treebank: Treebank) -> PermissionDenied | None:
    """None when allowed, else the :class:`PermissionDenied` to raise (hidden or forbidden)."""
    if can(user, action, treebank):
        return None
    return PermissionDenied(action, treebank, hidden=not can(user, "read", treebank))


def require(user: Any, action: str, treebank: Treebank) -> None:
    """:raise PermissionDenied: unless ``user`` may do ``action`` on ``treebank``."""
    if (denied := refusal(user, action, treebank)) is not None:
        raise denied


PLUGIN_KINDS = ("http", "command")
"""What a plugin may be: an HTTP endpoint or a command."""


def plugin_refusal(user: Any, treebank: Treebank, kind: str) -> str | None:
    """Why ``user`` may not configure a ``kind`` plugin (:data:`PLUGIN_KINDS`) of ``treebank``;
    None when they may (module docstring: ``manage``, and a site admin for a command)."""
    if kind not in PLUGIN_KINDS:
        raise ValueError(f"unknown plugin kind {kind!r}")
    if not can(user, "manage", treebank):
        return str(refusal(user, "manage", treebank))
    if kind == "command" and not user.is_admin:
        return ("only a site admin may configure a command plugin (it runs on the server); "
                "give an HTTP endpoint instead")
    return None


def line_refusal(user: Any, treebank: Treebank, *, assigned: bool, double: bool) -> str | None:
    """Why ``user`` may not write a sentence's main line (None when they may): ``assigned``
    says whether the sentence is assigned to them, ``double`` whether it is doubly annotated."""
    if not can(user, "annotate", treebank):
        return str(refusal(user, "annotate", treebank))
    if double and not can(user, "curate", treebank):
        return "this sentence is doubly annotated: only a curator writes its tree (by adjudication)"
    if treebank.assigned_only and not assigned and not can(user, "curate", treebank):
        return f"on {treebank.name} annotators correct only the sentences assigned to them"
    return None


def readable_treebanks(user: Any) -> ColumnElement[bool]:
    """A WHERE clause on :class:`Treebank` keeping what ``user`` may read (for lists)."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return false()
    if user.is_admin:
        return true()
    member = select(Membership.treebank_id).where(Membership.user_id == user.id)
    owner = member.where(Membership.role == "owner")
    return or_(
        Treebank.archived_at.is_(None) & (Treebank.id.in_(member) | (Treebank.visibility == "public")),
        Treebank.id.in_(owner),
    )


def roles_table() -> list[tuple[str, str, list[str]]]:
    """``(action, least role, roles allowed)`` for every action (shown on the members page)."""
    return [(action, least, list(ROLES[ROLES.index(least):])) for action, least in ACTIONS.items()]

