"""Workspace pages: the annotation queue of a treebank and the sentence editor."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, current_app, render_template, request
from flask_login import current_user
from sqlalchemy import select

from app.extensions import db
from app.job_models import Job
from app.models import Sentence, Treebank
from app.services.assignments import editing_line
from app.services.external import external_parsers
from app.services.parse_with_round import quick_parse
from app.services.permissions import can
from app.services.queue import (
    DEFAULT_ORDER,
    DEFAULT_ORDER_REASON,
    ORDER_HELP,
    QueueFilter,
    build_queue,
    queue_page_arg,
    treebank_upos_and_relations,
)
from app.services.raw_text_rounds import pool_size
from app.services.reparse import treebank_can_reparse
from app.services.sources import split_sentence_ids
from app.services.tag_checks import pool_has_untagged
from app.services.token_edits import tokens_info
from app.services.workspace import editor_data
from app.views.access import requires
from parsing.ensemble.registry import DEFAULT_METHODS, METHODS
from parsing.members import (
    CLUSTER_MEMBERS,
    EXTRA_MEMBERS,
    MEMBERS,
    META_MEMBERS,
    default_members,
    missing_requirement,
)

bp = Blueprint("workspace", __name__, url_prefix="/workspace")

QUEUE_PAGE = 200
"""Queue items per page unless ``app.config["QUEUE_PAGE_SIZE"]`` says otherwise."""


@dataclass(frozen=True)
class QueuePage:
    """One page of the queue: ``page`` of ``pages`` (1-based), items ``first``–``last`` of ``total``.

    Has the ``page`` and ``pages`` attributes the ``pager`` macro of ``_macros.html`` reads.
    """

    page: int
    pages: int
    first: int
    last: int
    total: int


def _queue_page_size() -> int:
    """``QUEUE_PAGE_SIZE`` from the config when it is a positive integer, else :data:`QUEUE_PAGE`."""
    try:
        size = int(current_app.config.get("QUEUE_PAGE_SIZE", QUEUE_PAGE))
    except (TypeError, ValueError):
        return QUEUE_PAGE
    return size if size > 0 else QUEUE_PAGE


def _queue_page(requested: str | None, total: int, size: int) -> QueuePage:
    """The page asked for, clamped to 1..pages (a missing or non-integer ``page`` is page 1)."""
    pages = max(1, -(-total // size))
    try:
        page = int(requested or 1)
    except ValueError:
        page = 1
    page = min(max(page, 1), pages)
    first = (page - 1) * size
    return QueuePage(page=page, pages=pages, first=first + 1 if total else 0,
                     last=min(first + size, total), total=total)


@bp.route("/treebanks/<int:treebank_id>")
@requires("read")
def queue(treebank_id: int) -> str:
    """The queue (ordered, filtered, one page of it), progress counts and the pre-annotation form.

    ``?page=`` is 1-based; invalid or out-of-range values show the nearest valid page.
    """
    treebank = db.get_or_404(Treebank, treebank_id)
    spec = QueueFilter.from_args(request.args)
    found = build_queue(db.session, treebank, spec, user_id=current_user.id,
                        with_assignees=can(current_user, "manage", treebank))
    paging = _queue_page(request.args.get("page"), len(found.items), _queue_page_size())
    upos, relations = treebank_upos_and_relations(db.session, treebank)
    last_job = db.session.scalar(select(Job).where(Job.treebank_id == treebank.id)
                                 .order_by(Job.id.desc()).limit(1))
    default_tags = "predicted" if pool_has_untagged(db.session, treebank) else "gold"
    return render_template(
        "workspace/queue.html", treebank=treebank, spec=spec,
        items=found.items[paging.first - 1:paging.last] if paging.total else [], paging=paging,
        matching=len(found.items), counts=found.counts, orders=ORDER_HELP, default_order=DEFAULT_ORDER,
        default_order_reason=DEFAULT_ORDER_REASON,
        upos=upos,
        relations=relations, members=list(MEMBERS), default_parsers=default_members(default_tags),
        raw_text_members=[(name, spec.summary) for name, spec in {**CLUSTER_MEMBERS, **META_MEMBERS}.items()],
        extra_members=[(name, spec.summary, missing_requirement(name))
                       for name, spec in EXTRA_MEMBERS.items()],
        pool_size=pool_size(db.session, treebank),
        editor_args=spec.to_args() | ({"page": str(paging.page)} if paging.page > 1 else {}),
        methods=[(name, spec.summary) for name, spec in METHODS.items()], default_methods=DEFAULT_METHODS,
        last_job=last_job.to_dict() if last_job else None,
        default_tags=default_tags,
        externals=external_parsers(db.session, treebank),
        has_dev=bool(split_sentence_ids(db.session, treebank, "dev")),
        voting_methods=[name for name, spec in METHODS.items() if spec.votes],
        quick=quick_parse(db.session, treebank) if can(current_user, "train", treebank) else None,
    )


@bp.route("/sentences/<int:sentence_id>")
@requires("read")
def editor(sentence_id: int) -> str:
    """The sentence editor; its data is handed to static/js/editor.js with ``|tojson``.

    The queue filters in the arguments pick "next in queue"; the queue ``page`` (``?page=``,
    which the queue's links carry) is kept in the links back to the queue and to the next
    sentence.
    """
    sentence = db.get_or_404(Sentence, sentence_id)
    treebank = sentence.document.treebank
    spec = QueueFilter.from_args(request.args)
    page = queue_page_arg(request.args.get("page"))
    back_args = spec.to_args() | ({"page": str(page)} if page else {})
    line = editing_line(db.session, current_user, sentence)
    data = {**editor_data(db.session, sentence, branch=line.branch),
            "tokens": tokens_info(db.session, current_user, sentence)}
    return render_template("workspace/editor.html", data=data,
                           sentence=sentence, treebank=treebank, queue_args=spec.to_args(), line=line,
                           back_args=back_args, can_reparse=treebank_can_reparse(db.session, treebank))
