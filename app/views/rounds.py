"""Training rounds of a treebank: the table, the learning curves, a CSV of the table, and the
sentences a round changed."""

from __future__ import annotations

import re

from flask import Blueprint, Response, abort, render_template
from markupsafe import Markup
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank
from app.parser_models import TrainingRound
from app.services.preannotate import HELD_OUT_EVERY, MIN_HELD_OUT, MIN_TREES_TO_HOLD_OUT
from app.services.rounds import (
    CHANGED_IDS_CAP,
    ENSEMBLE,
    changed_sentences,
    learning_curves,
    round_changes,
    round_rows,
    rounds_csv,
    scored_members,
)
from app.views.access import requires
from parsing.charts import line_chart_svg

bp = Blueprint("rounds", __name__, url_prefix="/treebanks")


@bp.route("/<int:treebank_id>/rounds")
@requires("read")
def index(treebank_id: int) -> str:
    """Every round of the treebank and its learning curves (server-drawn SVG)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    rows = round_rows(db.session, treebank)
    by_tokens, by_round = learning_curves(rows)
    charts = []
    if by_tokens:
        # line_chart_svg escapes every piece of text it writes (member names included), so its
        # output is safe to put in the page as markup.
        charts = [
            Markup(line_chart_svg(by_tokens, title="LAS against annotated tokens",
                                  x_label="words in the human trees trained on", y_label="LAS (%)",
                                  highlight=ENSEMBLE)),
            Markup(line_chart_svg(by_round, title="LAS against rounds", x_label="round",
                                  y_label="LAS (%)", highlight=ENSEMBLE, integer_x=True)),
        ]
    return render_template(
        "rounds/index.html", treebank=treebank, rows=rows, members=scored_members(rows), charts=charts,
        changes=round_changes(rows),
        held_out=any(row.round.evaluation == "held-out" for row in rows),
        unscored=any(row.round.evaluation is None and row.round.finished_at for row in rows),
        held_out_every=HELD_OUT_EVERY, min_held_out=MIN_HELD_OUT, min_trees=MIN_TREES_TO_HOLD_OUT,
    )


@bp.route("/<int:treebank_id>/rounds.csv")
@requires("read")
def download(treebank_id: int) -> Response:
    """The rounds table as a CSV file."""
    treebank = db.get_or_404(Treebank, treebank_id)
    text = rounds_csv(round_rows(db.session, treebank))
    filename = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{treebank.name}-rounds.csv")
    return Response(text.encode("utf-8"), mimetype="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@bp.route("/<int:treebank_id>/rounds/<int:number>/changed")
@requires("read")
def changed(treebank_id: int, number: int) -> str:
    """The sentences whose ensemble tree round ``number`` changed, with links to the editor."""
    treebank = db.get_or_404(Treebank, treebank_id)
    round_ = db.session.scalar(select(TrainingRound).where(
        TrainingRound.treebank_id == treebank.id, TrainingRound.number == number))
    if round_ is None:
        abort(404)
    return render_template("rounds/changed.html", treebank=treebank, round=round_,
                           sentences=changed_sentences(db.session, round_), cap=CHANGED_IDS_CAP)
