"""Races that used to give two accounts, two password changes, 500s or no owner (issue #31,
findings 3, 5 and 6): each run with :func:`tests.app.race.race` on SQLite and, with
``TEST_DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

from collections import Counter

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash
from werkzeug.test import TestResponse

from app.models import Membership, Sentence, SentenceState, User
from app.services.imports import import_conllu
from app.services.users import issue_token
from app.team_models import AccountToken
from tests.app.race import race
from tests.app.team_helpers import Team, build_team, client_as

N = 8


@pytest.fixture
def team(session: Session, password_hash: str) -> Team:
    return build_team(session, password_hash)


def _clients(app: Flask, user_id: int | None, n: int = N) -> list[FlaskClient]:
    return [client_as(app, user_id) for _ in range(n)]


def test_an_invitation_makes_one_account(app: Flask, session: Session, team: Team) -> None:
    admin = session.get(User, team.users["admin"])
    assert admin is not None
    token = issue_token(session, "invite", by=admin)
    session.commit()
    clients = _clients(app, None)
    answers = race(N, lambda i: clients[i].post(f"/auth/link/{token}", data={
        "username": f"new{i}", "password": "a good password", "confirm": "a good password"}))
    codes = Counter(answer.status_code for answer in answers)
    assert codes[302] == 1 and set(codes) <= {302, 404, 422}, codes
    session.expire_all()
    made = session.scalars(select(User.username).where(User.username.like("new%"))).all()
    assert len(made) == 1
    assert session.scalar(select(func.count()).select_from(AccountToken).where(
        AccountToken.used_at.is_not(None))) == 1


def test_a_reset_link_changes_the_password_once(app: Flask, session: Session, team: Team) -> None:
    admin, owner = session.get(User, team.users["admin"]), session.get(User, team.users["owner"])
    assert admin is not None and owner is not None
    token = issue_token(session, "reset", by=admin, user=owner)
    session.commit()
    clients = _clients(app, None)
    passwords = [f"new password {i}" for i in range(N)]
    answers = race(N, lambda i: clients[i].post(f"/auth/link/{token}", data={
        "password": passwords[i], "confirm": passwords[i]}))
    codes = Counter(answer.status_code for answer in answers)
    assert codes[302] == 1 and set(codes) <= {302, 404, 422}, codes
    winner = next(i for i, answer in enumerate(answers) if answer.status_code == 302)
    session.expire_all()
    owner = session.get(User, team.users["owner"])
    assert owner is not None and check_password_hash(owner.password_hash, passwords[winner])


POOL = "".join(f"# sent_id = r{k}\n1\tword{k}\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n" for k in range(6))


def test_first_status_changes_at_once_never_fail(app: Flask, session: Session, team: Team) -> None:
    owner = session.get(User, team.users["owner"])
    assert owner is not None
    result = import_conllu(session, data=POOL.encode(), filename="fresh.conllu", treebank_name="team tb",
                           split="pool", user=owner)
    session.commit()
    fresh = list(session.scalars(select(Sentence.id).where(Sentence.document_id == result.document.id)))
    assert not session.scalars(select(SentenceState).where(SentenceState.sentence_id.in_(fresh))).all()
    clients = _clients(app, team.users["owner"], 6)
    statuses = ["in_progress", "reviewed", "todo", "in_progress", "reviewed", "in_progress"]
    for sentence_id in fresh:
        def post_state(i: int, sid: int = sentence_id) -> TestResponse:
            return clients[i].post(f"/api/sentences/{sid}/state", json={"status": statuses[i]})

        answers = race(6, post_state)
        codes = [answer.status_code for answer in answers]
        assert set(codes) <= {200, 409}, [(a.status_code, a.get_data(as_text=True)[:200]) for a in answers]
    session.expire_all()
    rows = session.scalars(select(SentenceState).where(SentenceState.sentence_id.in_(fresh))).all()
    assert sorted(row.sentence_id for row in rows) == sorted(fresh)


def _two_owners(session: Session, team: Team) -> None:
    """``owner`` and ``curator`` both owners of the team's treebank (whatever the last trial left)."""
    session.expire_all()
    for name in ("owner", "curator"):
        member = session.scalar(select(Membership).where(Membership.treebank_id == team.treebank_id,
                                                         Membership.user_id == team.users[name]))
        if member is None:
            session.add(Membership(treebank_id=team.treebank_id, user_id=team.users[name], role="owner"))
        else:
            member.role = "owner"
    session.commit()


@pytest.mark.parametrize("how", ["demote", "remove"])
def test_two_owners_removing_each_other_leave_one(app: Flask, session: Session, team: Team, how: str) -> None:
    """Each owner demotes (or removes) the other at the same moment: one wins, one is refused."""
    me, other = ["owner", "curator"], ["curator", "owner"]
    url = f"/treebanks/{team.treebank_id}/members"
    for _trial in range(3):
        _two_owners(session, team)
        clients = [client_as(app, team.users[name]) for name in me]

        def act(i: int, clients: list[FlaskClient] = clients) -> int:
            if how == "demote":
                return clients[i].post(url, data={"username": other[i], "role": "annotator"}).status_code
            return clients[i].post(f"{url}/{team.users[other[i]]}/remove").status_code

        codes = race(2, act)
        assert 500 not in codes, codes
        session.expire_all()
        owners = session.scalars(select(Membership.user_id).where(
            Membership.treebank_id == team.treebank_id, Membership.role == "owner")).all()
        assert len(owners) == 1, (codes, owners)


def test_two_invitations_taking_one_name_make_one_account(app: Flask, session: Session, team: Team) -> None:
    admin = session.get(User, team.users["admin"])
    assert admin is not None
    tokens = [issue_token(session, "invite", by=admin) for _ in range(4)]
    session.commit()
    clients = _clients(app, None, 4)
    answers = race(4, lambda i: clients[i].post(f"/auth/link/{tokens[i]}", data={
        "username": "twin", "password": "a good password", "confirm": "a good password"}))
    codes = Counter(answer.status_code for answer in answers)
    assert codes == Counter({302: 1, 422: 3}), codes
    assert all("already exists" in a.get_data(as_text=True) for a in answers if a.status_code == 422)
    session.expire_all()
    assert session.scalar(select(func.count()).select_from(User).where(User.username == "twin")) == 1
    assert session.scalar(select(func.count()).select_from(AccountToken).where(
        AccountToken.used_at.is_not(None))) == 1  # the refused links stay usable
