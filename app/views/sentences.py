"""Sentence list with search, and the sentence page with its tree."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, render_template, request

from app.extensions import db
from app.models import SPLITS, Sentence, Treebank
from app.services.browse import (
    SEARCH_FIELDS,
    neighbours,
    search_sentences,
    sentence_view,
    treebank_stats,
)
from app.services.exports import missing_trees
from app.services.queue import queue_page_arg
from app.services.trees import EXPORT_SOURCES
from app.views.access import requires
from app.views.treebanks import safe_filename
from parsing.figures import tikz_dependency, tree_svg

bp = Blueprint("sentences", __name__)


@bp.route("/treebanks/<int:treebank_id>/sentences")
@requires("read")
def index(treebank_id: int) -> str:
    """One page of the treebank's sentences, optionally filtered by a search; the export form
    says how many sentences an export of each source leaves out (no tree from it)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    field = request.args.get("field", "form")
    if field not in SEARCH_FIELDS:
        field = "form"
    split = request.args.get("split") or None
    if split not in SPLITS:
        split = None
    query = request.args.get("q", "")
    page = search_sentences(
        db.session, treebank, query=query, field=field, split=split,
        page=queue_page_arg(request.args.get("page")) or 1,
        per_page=current_app.config["SENTENCES_PER_PAGE"],
    )
    (stats,) = treebank_stats(db.session, treebank.id)
    sources = ["gold", "latest", *sorted(s for s in stats.trees
                                         if s in EXPORT_SOURCES and s not in ("gold", "latest"))]
    return render_template(
        "sentences/index.html", treebank=treebank, page=page, stats=stats, query=query,
        field=field, split=split, fields=SEARCH_FIELDS, splits=SPLITS, export_sources=sources,
        omitted={source: n for source, n in missing_trees(db.session, treebank, sources).items() if n},
    )


@bp.route("/sentences/<int:sentence_id>")
@requires("read")
def show(sentence_id: int) -> str:
    """The sentence's dependency tree (SVG, drawn by static/js/tree.js) and token table."""
    sentence = db.get_or_404(Sentence, sentence_id)
    view = sentence_view(db.session, sentence, request.args.get("source", "gold"))
    previous, following = neighbours(db.session, sentence)
    return render_template(
        "sentences/show.html", sentence=sentence, treebank=sentence.document.treebank,
        view=view, previous=previous, following=following,
    )


FIGURE_TYPES = {"svg": "image/svg+xml", "tex": "text/x-tex; charset=utf-8"}
"""The tree downloads: standalone SVG, and LaTeX for the ``tikz-dependency`` package."""


@bp.route("/sentences/<int:sentence_id>/tree.<any(svg, tex):kind>")
@requires("read")
def tree_figure(sentence_id: int, kind: str) -> Response:
    """The sentence's tree from ``source`` (as on the sentence page) as a file for a paper:
    ``tree.svg`` (drawn here, so it needs no browser) or ``tree.tex`` (tikz-dependency). 404
    when the sentence has no tree from that source."""
    sentence = db.get_or_404(Sentence, sentence_id)
    asked = request.args.get("source", "gold")
    view = sentence_view(db.session, sentence, asked)
    if view["source"] is None or ("source" in request.args and view["source"] != asked):
        message = f"Sentence {sentence.sent_id or sentence.id} has no tree from {asked}.\n"
        return Response(message, status=404, mimetype="text/plain")  # the download's answer, said plainly
    words = view["words"]
    forms, tags = [w["form"] for w in words], [w["upos"] for w in words]
    heads, deprels = [int(w["head"]) for w in words], [str(w["deprel"]) for w in words]
    name = sentence.sent_id or f"sentence-{sentence.id}"
    if kind == "svg":
        text = tree_svg(forms, heads, deprels, tags=tags, title=f"{name} ({view['source']})")
    else:
        text = f"% {name} ({view['source']})\n" + tikz_dependency(forms, heads, deprels, tags=tags) + "\n"
    filename = safe_filename(f"{name}-{view['source']}.{kind}")
    return Response(text.encode("utf-8"), mimetype=FIGURE_TYPES[kind],
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
