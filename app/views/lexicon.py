"""The lexicon page of a treebank (issue #32; Arborator-Grew's lexicon view): the form/lemma/UPOS
entries whose FEATS, DEPREL or both vary in one source and split, each variant with its count,
links to its sentences, a search pre-filled with the Grew pattern that finds it and (for
curators) a rule that annotates it as the entry's most frequent variant. Needs ``read``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template, request

from app.extensions import db
from app.models import SPLITS, Treebank
from app.services.lexicon_table import Lexicon, treebank_lexicon
from app.services.search import search_sources
from app.services.sources import SourceError
from app.views.access import requires
from parsing.lexicon import COMPARED, SORTS, Entry, sort_entries, variant_pattern, variant_rule

bp = Blueprint("lexicon", __name__, url_prefix="/treebanks")

PER_PAGE = 50
"""Entries drawn per page."""
PLACES = 5
"""Sentences linked per variant (the count covers them all)."""


def _choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = request.args.get(name) or default
    if value not in choices:
        abort(400, description=f"{name}: must be one of {', '.join(choices)}")
    return value


def _rows(table: Lexicon, entries: list[Entry]) -> list[dict[str, Any]]:
    """What the page draws per entry: ``{entry, variants: [{variant, share, places, pattern, rule}]}``."""
    rows = []
    for entry in entries:
        majority = entry.variants[0]
        rows.append({"entry": entry, "variants": [
            {"variant": variant, "share": variant.count / entry.total,
             "places": table.places(variant.where[:PLACES]), "pattern": variant_pattern(entry, variant),
             "rule": variant_rule(entry, variant, majority) if variant is not majority else None}
            for variant in entry.variants]})
    return rows


@bp.route("/<int:treebank_id>/lexicon")
@requires("read")
def page(treebank_id: int) -> tuple[str, int]:
    """One page of the lexicon table (``source``, ``split``, ``compare``, ``sort``, ``page``)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    source = request.args.get("source") or "gold"
    split = _choice("split", ("", *SPLITS), "") or None
    compare = _choice("compare", COMPARED, "feats")
    order = _choice("sort", SORTS, "rare")
    error, table, rows, pages = None, None, [], 1
    number = max(1, request.args.get("page", 1, type=int) or 1)
    try:
        table = treebank_lexicon(db.session, treebank, source=source, split=split, compare=compare)  # type: ignore[arg-type]
    except SourceError as problem:
        error = f"Source: {problem}."
    if table is not None:
        entries = sort_entries(table.entries, order)
        pages = max(1, -(-len(entries) // PER_PAGE))
        number = min(number, pages)
        rows = _rows(table, entries[(number - 1) * PER_PAGE:number * PER_PAGE])
    return render_template(
        "lexicon/page.html", treebank=treebank, table=table, rows=rows, error=error, source=source,
        split=split, compare=compare, order=order, page_number=number, pages=pages,
        sources=search_sources(db.session, treebank), splits=SPLITS, compares=COMPARED, sorts=SORTS,
        per_page=PER_PAGE), 400 if error else 200
