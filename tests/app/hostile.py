"""Hostile data for the XSS tests (tests/app/test_xss.py, tests/browser/test_xss.py): the team
of :func:`tests.app.team_helpers.build_team` whose every user-controlled string is a payload."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Sentence, Treebank, User
from app.services.audit import record
from app.services.external import add_parse
from app.services.members import set_role
from app.services.notes import add_note
from app.services.users import create_user
from tests.app.team_helpers import Team, build_team

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
IMG_TIGHT = '"><img/src=x/onerror=alert(1)>'
"""The same without spaces, for columns that may not hold one (FEATS)."""
HREF = "javascript:alert(1)"
SVG = "</textarea><svg onload=alert(1)>"
RAW = ("<script>alert(1)", "<img src=x onerror", "<img/src=x/onerror", "<svg onload")
"""What an escaped page never contains: each payload's live markup."""

NAME = f"tb {SCRIPT}{IMG}"
USER = f"u{SCRIPT}{SVG}"
HOSTILE_TRAIN = (
    f"# sent_id = t{SCRIPT}\n# text = {IMG} {SVG}\n"
    f"1\t{SCRIPT}\t{SVG}\tINTJ\t_\tFoo={IMG_TIGHT}\t0\troot\t_\tNote={SCRIPT}\n"
    f"2\t{HREF}\t{IMG}\tPRON\t_\t_\t1\tnmod:poss\t_\tSpaceAfter=No|X={SVG}\n\n")
HOSTILE_POOL = (
    f"# sent_id = p{SCRIPT}\n# text = {SCRIPT} {IMG}\n# note = {SVG}\n"
    f"1\t{SCRIPT}\t{IMG}\tNOUN\t_\tX={SCRIPT}\t2\tnsubj:{SCRIPT}\t_\tGloss={SVG}\n"
    f"2\t{SVG}\t{HREF}\tVERB\t_\t_\t0\troot\t_\tX={IMG}\n\n")
EXTERNAL = "1\tx\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\ty\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n"


def hostile_treebank(app: Flask, password_hash: str) -> tuple[Team, int]:
    """Build the team with hostile data; return it and the hostile user's id."""
    with app.app_context():
        team = build_team(db.session, password_hash, visibility="public", treebank_name=NAME,
                          train=HOSTILE_TRAIN, pool=HOSTILE_POOL, pool_filename=f"{SVG}{SCRIPT}.conllu")
        admin = db.session.get(User, team.users["admin"])
        treebank = db.session.get(Treebank, team.treebank_id)
        sentence = db.session.get(Sentence, team.sentence_id)
        assert admin is not None and treebank is not None and sentence is not None
        hostile = create_user(db.session, USER, "a long enough password")
        set_role(db.session, treebank, USER, "annotator", by=admin)
        add_note(db.session, sentence, body=f"{SCRIPT} {IMG} {HREF} {SVG}", user=hostile)
        forms = " ".join(db.session.scalars(select(Sentence.text).where(Sentence.id == sentence.id)))
        assert SCRIPT in forms  # the importer kept the hostile # text
        add_parse(db.session, treebank, data=EXTERNAL.replace("x", SCRIPT).replace("y", SVG).encode(),
                  filename=f"{IMG}.conllu", label="ext1", user=admin)
        record(db.session, "settings", user=hostile, treebank=treebank, sentence_id=sentence.id,
               subject=hostile, detail=f"{SCRIPT}{IMG}{SVG}", **{SCRIPT: HREF})
        db.session.commit()
        return team, hostile.id
