"""The search page of a treebank (issue #32): a Grew-match pattern over one source and split, the
matching sentences drawn with the matched words highlighted, a CoNLL-U download of them, and the
treebank's named queries.

Searching and running a named query need ``read``; saving and deleting a named query need
``curate`` (curators and owners).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.models import SPLITS, Treebank
from app.search_models import QUERY_PATTERN_LENGTH
from app.services.saved_queries import QueryError, delete_query, save_query, saved_queries
from app.services.search import (
    SearchResult,
    matching_conllu,
    search_sources,
    search_treebank,
    sentence_views,
)
from app.services.sources import SourceError
from app.views.access import requires
from parsing.grew import GrewSyntaxError, SearchTooLong

bp = Blueprint("search", __name__, url_prefix="/treebanks")

PER_PAGE = 10
"""Matching sentences drawn per page."""
MAX_MATCHES = 100_000
"""Matches a page search collects at most (the page says when it stopped there)."""
SECONDS = 20.0
"""Time a page search may spend matching before it stops with an error."""

EXAMPLE = "pattern {\n  H -[obl]-> N;\n  N [upos=NOUN]\n}\nwithout { N -[case]-> C }"


@dataclass(frozen=True)
class Query:
    """The search the URL asks for."""

    pattern: str
    source: str
    split: str | None


def _query() -> Query:
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        abort(400, description=f"split: must be one of {', '.join(SPLITS)}")
    return Query(request.args.get("pattern", "").strip(), request.args.get("source") or "gold", split)


def _run(treebank: Treebank, query: Query) -> tuple[SearchResult | None, str | None]:
    """The result (None without a pattern) or the error to show."""
    if not query.pattern:
        return None, None
    if len(query.pattern) > QUERY_PATTERN_LENGTH:
        return None, f"Pattern: at most {QUERY_PATTERN_LENGTH} characters."
    try:
        found = search_treebank(db.session, treebank, query.pattern, source=query.source, split=query.split,
                                limit=MAX_MATCHES, seconds=SECONDS)
        return found, None
    except GrewSyntaxError as error:
        return None, f"Pattern: {error}."
    except SearchTooLong as error:
        return None, f"Stopped: {error}."
    except SourceError as error:
        return None, f"Source: {error}."


@bp.route("/<int:treebank_id>/search")
@requires("read")
def page(treebank_id: int) -> tuple[str, int]:
    """The search form, the result's counts and one page of matching sentences."""
    treebank = db.get_or_404(Treebank, treebank_id)
    query = _query()
    result, error = _run(treebank, query)
    number = max(1, request.args.get("page", 1, type=int) or 1)
    shown: list[dict[str, object]] = []
    pages = 1
    if result is not None:
        ids = result.sentence_ids
        pages = max(1, -(-len(ids) // PER_PAGE))
        number = min(number, pages)
        shown = sentence_views(db.session, treebank, result, ids[(number - 1) * PER_PAGE:number * PER_PAGE])
    return render_template(
        "search/page.html", treebank=treebank, query=query, result=result, error=error, shown=shown,
        page_number=number, pages=pages, sources=search_sources(db.session, treebank), splits=SPLITS,
        queries=saved_queries(db.session, treebank), example=EXAMPLE,
        payload={"direction": treebank.direction, "sentences": shown}), 400 if error else 200


@bp.route("/<int:treebank_id>/search.conllu")
@requires("read")
def download(treebank_id: int) -> BaseResponse:
    """The matching sentences as CoNLL-U, with the searched source's trees."""
    treebank = db.get_or_404(Treebank, treebank_id)
    query = _query()
    result, error = _run(treebank, query)
    if result is None:
        abort(400, description=error or "pattern: give a pattern")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{treebank.name}-{query.source}-search.conllu")
    return Response(matching_conllu(db.session, treebank, result).encode("utf-8"),
                    mimetype="text/plain; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.route("/<int:treebank_id>/queries", methods=["POST"])
@requires("curate")
def save(treebank_id: int) -> BaseResponse:
    """Save the form's pattern under its name (replacing a query of that name)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    name, pattern = request.form.get("name", ""), request.form.get("pattern", "")
    try:
        query = save_query(db.session, treebank, name=name, pattern=pattern, user=current_user)
    except (QueryError, GrewSyntaxError) as error:
        db.session.rollback()
        flash(f"Not saved: {error}", "error")
    else:
        db.session.commit()
        flash(f"Saved the query {query.name!r}.", "success")
    return redirect(url_for("search.page", treebank_id=treebank.id, pattern=pattern.strip() or None))


@bp.route("/<int:treebank_id>/queries/delete", methods=["POST"])
@requires("curate")
def delete(treebank_id: int) -> BaseResponse:
    """Delete the treebank's named query ``query_id`` (a form field)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    query_id = request.form.get("query_id", type=int)
    if query_id is not None and delete_query(db.session, treebank, query_id, user=current_user):
        db.session.commit()
        flash("Query deleted.", "success")
    else:
        flash("Not deleted: this treebank has no such query.", "error")
    return redirect(url_for("search.page", treebank_id=treebank.id))
