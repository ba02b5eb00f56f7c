"""A lead's statistics page: per annotator, sentences and words saved, throughput, edits and
agreement with the adjudicated trees (:mod:`app.services.team_stats`)."""

from __future__ import annotations

from flask import Blueprint, render_template

from app.extensions import db
from app.models import Treebank
from app.services.team_stats import IDLE, treebank_stats
from app.views.access import requires

bp = Blueprint("stats", __name__, url_prefix="/treebanks")


@bp.get("/<int:treebank_id>/statistics")
@requires("curate")
def show(treebank_id: int) -> str:
    """The statistics table, one row per user who saved a tree."""
    treebank = db.get_or_404(Treebank, treebank_id)
    rows = treebank_stats(db.session, treebank)
    return render_template("team/statistics.html", treebank=treebank, rows=rows,
                           idle_minutes=int(IDLE.total_seconds() // 60))
