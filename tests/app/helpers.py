"""Helpers shared by the app tests (fixtures live in conftest.py)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.extensions import db
from app.job_models import Job
from app.jobs import create_job, run_job
from app.models import Base, Treebank, User
from app.parser_models import TrainingRound
from app.services.demo import demo_file
from app.services.imports import import_conllu
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu


def import_without_dev(session: Session, user: User, *, train: int = 40, pool: int = 10) -> Treebank:
    """The demo file's first sentences as a treebank with a train split and a pool, no dev."""
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    import_conllu(session, data=format_conllu(sentences[:train]).encode(), filename="train.conllu",
                  treebank_name="no dev", split="train", user=user)
    result = import_conllu(session, data=format_conllu(sentences[train:train + pool]).encode(),
                           filename="pool.conllu", treebank_name="no dev", split="pool", user=user)
    return result.treebank


def run_preannotate(app: Flask, session: Session, user: User, treebank_id: int,
                    params: dict[str, Any]) -> Job:
    """Queue a ``preannotate`` job with ``params``, run it here and now, and return it as it ended."""
    job = create_job(session, kind="preannotate", user=user, treebank_id=treebank_id, params=params)
    session.commit()
    run_job(app, job.id)
    session.expire_all()
    done = session.get(Job, job.id)
    assert done is not None
    return done


def run_round(app: Flask, session: Session, user: User, treebank: Treebank, parsers: list[str],
              **params: Any) -> TrainingRound:
    """Run a pre-annotation round inline (gold tags, ``params`` added to the job's) and return it."""
    done = run_preannotate(app, session, user, treebank.id, {"parsers": parsers, "tags": "gold", **params})
    assert done.state == "done", done.error
    return session.scalars(select(TrainingRound).where(TrainingRound.treebank_id == treebank.id)
                           .order_by(TrainingRound.number.desc()).limit(1)).one()


def conllu(sentences: int, *, broken_at: int | None = None) -> bytes:
    """``sentences`` small trees with unique sent_ids; ``broken_at``: that sentence's second
    word has a HEAD that is not a number (line :func:`broken_line`)."""
    out = []
    for k in range(1, sentences + 1):
        head = "x" if k == broken_at else "1"
        out.append(f"# sent_id = s{k}\n# text = word{k} is here\n"
                   f"1\tword{k}\tword\tNOUN\t_\t_\t0\troot\t_\t_\n"
                   f"2\tis\tbe\tAUX\t_\t_\t{head}\tcop\t_\t_\n"
                   f"3\there\there\tADV\t_\t_\t1\tadvmod\t_\tSpaceAfter=No\n\n")
    return "".join(out).encode("utf-8")


def broken_line(k: int) -> int:
    """The line of sentence ``k``'s second word in :func:`conllu` (6 lines a sentence)."""
    return 6 * (k - 1) + 4


def empty_database(app: Flask) -> None:
    """Every table emptied, then one admin account: a fresh instance to restore a backup into."""
    with app.app_context():
        db.session.remove()
        with db.engine.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                connection.execute(table.delete())
        db.session.add(User(username="admin", password_hash="x", is_admin=True))
        db.session.commit()
