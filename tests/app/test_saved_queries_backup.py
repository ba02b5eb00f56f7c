"""Named queries (issue #32) are part of a treebank: saving, replacing and deleting one is in the
audit log, a backup holds them and a restore brings them back (the restored treebank's backup is
the same file but for the backup and restore events), and saving one does not make the search
rebuild its corpus."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank, User
from app.search_models import SavedQuery
from app.services.audit import events
from app.services.search_cache import fingerprint
from app.team_models import AuditEvent
from tests.app.helpers import conllu, empty_database
from tests.app.test_search_views import sign_in

NOUN_ROOTS = "pattern { * -[root]-> R; R [upos=NOUN] }"
COPULAS = "pattern { H -[cop]-> C }"


def _build(app: Flask, make_user: Callable[..., int]) -> int:
    """A treebank of 3 small trees owned by ``owner``, with ``curator`` as its curator."""
    from app.services.imports import import_conllu
    from app.services.members import set_role

    for name in ("owner", "curator"):
        make_user(name)
    with app.app_context():
        owner = db.session.scalars(select(User).where(User.username == "owner")).one()
        treebank = import_conllu(
            db.session, data=conllu(3), filename="t.conllu", treebank_name="q tb", split="train", user=owner
        ).treebank
        set_role(db.session, treebank, "curator", "curator", by=owner)
        db.session.commit()
        return treebank.id


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_saving_and_deleting_named_queries_is_audited(app: Flask, make_user: Callable[..., int]) -> None:
    treebank_id = _build(app, make_user)
    curator = sign_in(app, "curator")
    url = f"/treebanks/{treebank_id}/queries"
    with app.app_context():
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        before = fingerprint(db.session, treebank)
    assert curator.post(url, data={"name": "noun roots", "pattern": NOUN_ROOTS}).status_code == 302
    assert curator.post(url, data={"name": "noun roots", "pattern": COPULAS}).status_code == 302  # replaced
    with app.app_context():
        query_id = db.session.scalars(select(SavedQuery.id)).one()
    assert curator.post(f"{url}/delete", data={"query_id": query_id}).status_code == 302
    with app.app_context():
        found = [
            (e.action, e.actor, e.details.get("name"), e.details.get("pattern"), e.details.get("replaced"))
            for e in reversed(events(db.session, treebank_id=treebank_id))
            if e.action.startswith("query-")
        ]
        assert found == [
            ("query-save", "curator", "noun roots", NOUN_ROOTS, None),
            ("query-save", "curator", "noun roots", COPULAS, NOUN_ROOTS),
            ("query-delete", "curator", "noun roots", COPULAS, None),
        ]
        treebank = db.session.get(Treebank, treebank_id)
        assert treebank is not None
        assert fingerprint(db.session, treebank) == before  # the searched corpus is kept
    audit_page = sign_in(app, "owner").get(f"/treebanks/{treebank_id}/events")
    assert audit_page.status_code == 200 and "query-delete" in audit_page.get_data(as_text=True)
    # a failed save is no event
    assert curator.post(url, data={"name": "bad", "pattern": "pattern { N [upos= }"}).status_code == 302
    with app.app_context():
        assert (
            db.session.scalar(
                select(AuditEvent.id).where(
                    AuditEvent.action == "query-save", AuditEvent.details["name"].as_string() == "bad"
                )
            )
            is None
        )


def test_backup_and_restore_keep_named_queries(
    app: Flask, make_user: Callable[..., int], runner: FlaskCliRunner, tmp_path: Path
) -> None:
    treebank_id = _build(app, make_user)
    curator = sign_in(app, "curator")
    for name, pattern in (("noun roots", NOUN_ROOTS), ("copulas", COPULAS)):
        assert (
            curator.post(
                f"/treebanks/{treebank_id}/queries", data={"name": name, "pattern": pattern}
            ).status_code
            == 302
        )
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    made = runner.invoke(args=["treebank", "backup", "q tb", "--output", str(first), "--user", "owner"])
    assert made.exit_code == 0, made.output
    records = _records(first)
    queries = [(r["name"], r["pattern"], r["created_by"]) for r in records if r["type"] == "query"]
    assert queries == [("copulas", COPULAS, "curator"), ("noun roots", NOUN_ROOTS, "curator")]
    assert sum(r["type"] == "event" and r["action"] == "query-save" for r in records) == 2

    empty_database(app)  # an empty instance with one admin
    restored = runner.invoke(args=["treebank", "restore", str(first)])
    assert restored.exit_code == 0, restored.output
    with app.app_context():
        rows = [
            (q.name, q.pattern, q.created_by_id is not None)
            for q in db.session.scalars(select(SavedQuery).order_by(SavedQuery.name))
        ]
        assert rows == [("copulas", COPULAS, True), ("noun roots", NOUN_ROOTS, True)]
    again = runner.invoke(args=["treebank", "backup", "q tb", "--output", str(second)])
    assert again.exit_code == 0, again.output

    def own(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if not (r["type"] == "event" and r["action"] in ("backup", "restore-backup"))]

    assert own(_records(second)) == own(records)
