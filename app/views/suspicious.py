"""The suspicious-arcs page of a treebank (issue #32): every arc of one source's trees ranked by
the arc error detector's probability that it is wrong, each linked to its sentence in the editor.

Works on the ensemble's trees and on gold, reviewed or corrected ones (an imported treebank's own
inconsistencies); the newest round with a detector scores them from its members' stored trees.
Needs ``read``.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from app.extensions import db
from app.models import SPLITS, Treebank
from app.services.detector import MAX_SCORED, SOURCES, newest_detector_round, round_detector, suspicious_arcs
from app.services.sources import SourceError
from app.views.access import requires
from parsing.persist import ModelFormatError

bp = Blueprint("suspicious", __name__, url_prefix="/treebanks")

PER_PAGE = 100
"""Arcs drawn per page."""


@bp.route("/<int:treebank_id>/suspicious")
@requires("read")
def page(treebank_id: int) -> tuple[str, int]:
    """One page of arcs, most likely wrong first (``source``, ``split``, ``page``)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    source = request.args.get("source") or "ensemble"
    if source not in SOURCES:
        abort(400, description=f"source: must be one of {', '.join(SOURCES)}")
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        abort(400, description=f"split: must be one of {', '.join(SPLITS)}")
    number = max(1, request.args.get("page", 1, type=int) or 1)
    round_ = newest_detector_round(db.session, treebank)
    error, found, rows, pages = None, None, [], 1
    if round_ is None:
        error = ("No training round of this treebank has an arc error detector yet: pre-annotate it "
                 "(a round fits one on its dev or held-out trees).")
    else:
        try:
            detector = round_detector(round_.model_dir)
            if detector is None:
                raise ModelFormatError(f"round {round_.number}: its detector file is gone")
            found = suspicious_arcs(db.session, treebank, source=source, split=split, detector=detector,
                                    round_number=round_.number)
        except (SourceError, ModelFormatError) as problem:
            error = str(problem)
    if found is not None:
        pages = max(1, -(-len(found.rows) // PER_PAGE))
        number = min(number, pages)
        rows = found.rows[(number - 1) * PER_PAGE:number * PER_PAGE]
    return render_template("suspicious/page.html", treebank=treebank, found=found, rows=rows, error=error,
                           source=source, split=split, sources=SOURCES, splits=SPLITS, page_number=number,
                           pages=pages, per_page=PER_PAGE, max_scored=MAX_SCORED,
                           first=(number - 1) * PER_PAGE), 200
