"""A treebank with one user per role, for the team tests (roles, matrix, audit, removal).

:func:`build_team` makes users ``admin`` (site admin), ``owner``, ``curator``, ``annotator``,
``viewer`` and ``stranger`` (no role), and treebank ``team tb`` imported by ``owner`` (train
and pool documents) with a training round and a finished job, so every URL of the app has
something real to point at. :func:`client_as` signs a test client in without a password.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flask import Flask, url_for
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job
from app.models import Document, Sentence, TreeVersion, User
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.imports import import_conllu
from app.services.members import set_role

TRAIN = "1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n2\tyou\t_\tPRON\t_\t_\t1\tnmod:poss\t_\t_\n\n"
POOL = ("# sent_id = p1\n1\tDogs\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tbark\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n")
NAMES = ("admin", "owner", "curator", "annotator", "viewer", "stranger")
TREEBANK = "team tb"


@dataclass(frozen=True)
class Team:
    """Ids of the team's users (by name) and of the things URLs point at."""

    users: dict[str, int]
    treebank_id: int
    document_id: int
    sentence_id: int
    tree_id: int
    job_id: int


def build_team(session: DbSession, password_hash: str, *, visibility: str = "private",
               treebank_name: str = TREEBANK, train: str = TRAIN, pool: str = POOL,
               pool_filename: str = "pool.conllu") -> Team:
    """The users and treebank described in the module docstring (committed); the treebank's
    name, its two files' CoNLL-U and the pool file's name may be replaced (the XSS test)."""
    users = {name: User(username=name, password_hash=password_hash, is_admin=name == "admin")
             for name in NAMES}
    session.add_all(users.values())
    session.flush()
    owner = users["owner"]
    import_conllu(session, data=train.encode(), filename="train.conllu", treebank_name=treebank_name,
                  split="train", user=owner)
    result = import_conllu(session, data=pool.encode(), filename=pool_filename,
                           treebank_name=treebank_name, split="pool", user=owner)
    treebank = result.treebank
    treebank.visibility = visibility
    for role in ("curator", "annotator", "viewer"):
        set_role(session, treebank, role, role, by=owner)
    sentence_id = session.scalars(select(Sentence.id).where(Sentence.document_id == result.document.id)).one()
    tree_id = session.scalars(select(TreeVersion.id).where(TreeVersion.sentence_id == sentence_id)).one()
    session.add(TrainingRound(treebank_id=treebank.id, number=1, parsers=["graph1"], tags="gold",
                              model_dir="/nonexistent/arcvote-test-models", user_id=owner.id))
    job = Job(kind="preannotate", treebank_id=treebank.id, user_id=owner.id, state="done", params={})
    session.add(job)
    session.commit()
    document_id = session.scalars(select(Document.id).where(Document.treebank_id == treebank.id)
                                  .order_by(Document.id)).first()
    assert document_id is not None
    return Team({name: user.id for name, user in users.items()}, treebank.id, document_id,
                sentence_id, tree_id, job.id)


def client_as(app: Flask, user_id: int | None) -> FlaskClient:
    """A test client signed in as ``user_id`` (None: signed out), without hashing a password."""
    client = app.test_client()
    if user_id is not None:
        with app.app_context():
            user = db.session.get(User, user_id)
            assert user is not None
            cookie_id = user.get_id()  # "<id>:<session epoch>", as Flask-Login stores it
        with client.session_transaction() as session:
            session["_user_id"] = cookie_id
            session["_fresh"] = True
    return client


def routes(app: Flask) -> Iterator[tuple[str, str, Any]]:
    """``(endpoint, method, rule)`` of every route of ``app.url_map`` but Flask's static files,
    one per method (HEAD and OPTIONS left out)."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":  # Flask's own files: public by design
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            yield rule.endpoint, method, rule


def route_url(app: Flask, endpoint: str, rule: Any, team: Team, *, user_id: int | None = None) -> str:
    """``rule``'s URL with its arguments pointing at ``team``'s things (``user_id``: the
    ``stranger`` unless given)."""
    values: dict[str, Any] = {
        "treebank_id": team.treebank_id, "sentence_id": team.sentence_id, "job_id": team.job_id,
        "number": 1, "user_id": user_id if user_id is not None else team.users["stranger"],
        "document_id": team.document_id, "token": "not-a-token", "label": "no-such-plugin",
        "table": "confusion" if endpoint == "compare.pair_csv" else "scores", "kind": "svg"}
    with app.test_request_context():
        return url_for(endpoint, **{name: values[name] for name in rule.arguments})
