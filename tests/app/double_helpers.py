"""A team with more pool sentences and a second and third annotator, for the assignment,
double annotation and adjudication tests.

:func:`build_double_team` is :func:`tests.app.team_helpers.build_team` plus users ``ann2`` and
``ann3`` (annotators) and a second pool document of :data:`MORE_POOL` (four 3-word sentences with
trees, so a ``gold`` tree is their starting point), committed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from app.models import Document, Sentence, Treebank, User
from app.services import DbSession
from app.services.imports import import_conllu
from app.services.members import set_role
from tests.app.team_helpers import TREEBANK, Team, build_team

MORE_POOL = "".join(
    f"# sent_id = q{i}\n1\tCats\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tsee\t_\tVERB\t_\t_\t0\troot\t_\t_\n"
    f"3\tbirds\t_\tNOUN\t_\t_\t2\tobj\t_\t_\n\n" for i in range(1, 5))


@dataclass(frozen=True)
class DoubleTeam:
    """The team, and the ids of the four extra pool sentences in document order."""

    team: Team
    pool: list[int]

    def user(self, name: str) -> int:
        """The id of the user called ``name``."""
        return self.team.users[name]


def build_double_team(session: DbSession, password_hash: str) -> DoubleTeam:
    """See the module docstring."""
    team = build_team(session, password_hash)
    owner = session.get(User, team.users["owner"])
    treebank = session.get(Treebank, team.treebank_id)
    assert owner is not None and treebank is not None
    users = dict(team.users)
    for name in ("ann2", "ann3"):
        user = User(username=name, password_hash=password_hash)
        session.add(user)
        session.flush()
        set_role(session, treebank, name, "annotator", by=owner)
        users[name] = user.id
    result = import_conllu(session, data=MORE_POOL.encode(), filename="more.conllu", treebank_name=TREEBANK,
                           split="pool", user=owner)
    session.commit()
    pool = list(session.scalars(select(Sentence.id).join(Document).where(Document.id == result.document.id)
                                .order_by(Sentence.position)))
    return DoubleTeam(Team(users, team.treebank_id, team.document_id, team.sentence_id, team.tree_id,
                           team.job_id), pool)
