"""Workspace pages: the annotation queue of a treebank and the sentence editor."""

from __future__ import annotations

from flask import Blueprint, render_template, request
from flask_login import login_required
from sqlalchemy import select

from app.extensions import db
from app.models import Job, Sentence, Treebank
from app.services.preannotate import DEFAULT_PARSERS
from app.services.queue import ORDERS, QueueFilter, build_queue, treebank_upos_and_relations
from app.services.workspace import editor_data
from parsing.members import MEMBERS

bp = Blueprint("workspace", __name__, url_prefix="/workspace")

QUEUE_PAGE = 200


@bp.route("/treebanks/<int:treebank_id>")
@login_required
def queue(treebank_id: int) -> str:
    """The queue (ordered and filtered), progress counts and the pre-annotation form."""
    treebank = db.get_or_404(Treebank, treebank_id)
    spec = QueueFilter.from_args(request.args)
    found = build_queue(db.session, treebank, spec)
    upos, relations = treebank_upos_and_relations(db.session, treebank)
    last_job = db.session.scalar(select(Job).where(Job.treebank_id == treebank.id)
                                 .order_by(Job.id.desc()).limit(1))
    return render_template(
        "workspace/queue.html", treebank=treebank, spec=spec, items=found.items[:QUEUE_PAGE],
        matching=len(found.items), counts=found.counts, orders=ORDERS, upos=upos,
        relations=relations, members=list(MEMBERS), default_parsers=DEFAULT_PARSERS,
        last_job=last_job.to_dict() if last_job else None,
    )


@bp.route("/sentences/<int:sentence_id>")
@login_required
def editor(sentence_id: int) -> str:
    """The sentence editor; its data is handed to static/js/editor.js with ``|tojson``."""
    sentence = db.get_or_404(Sentence, sentence_id)
    spec = QueueFilter.from_args(request.args)
    return render_template("workspace/editor.html", data=editor_data(db.session, sentence),
                           sentence=sentence, treebank=sentence.document.treebank,
                           queue_args=spec.to_args())
