"""Comparing parsers on a whole treebank: the scoreboard, two sources side by side, one sentence's
two trees, CSV downloads, and uploading another parser's output (issue #16).

Reading needs ``read`` on the treebank; uploading another parser's output needs ``import``
(:mod:`app.views.access`).
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from markupsafe import Markup
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.forms import ParseUploadForm
from app.models import SPLITS, Sentence, Treebank
from app.services.compare import Comparison, compare_sources
from app.services.external import UploadError, add_parse, external_parsers
from app.services.scoreboard import (
    SUMMARY_HEADER,
    Scoreboard,
    agreement_rows,
    breakdown_rows,
    breakdowns,
    scoreboard,
    summary_rows,
    to_csv,
)
from app.services.sources import (
    REFERENCES,
    SourceError,
    load_trees,
    parser_sources,
    round_starts,
    split_sentence_ids,
)
from app.views.access import requires
from app.wording import counted
from parsing.charts import OKABE_ITO, bar_chart_svg
from parsing.conllu_io import ConlluError

bp = Blueprint("compare", __name__, url_prefix="/treebanks")

TABLES = ("scores", "upos", "relations", "directions", "agreement")
"""The scoreboard's CSV tables (``/treebanks/<id>/scoreboard/<table>.csv``)."""

SHOWN_DIFFERENCES = 200
"""Differing sentences listed on the compare page (the CSV has them all)."""


def _choice(name: str, allowed: tuple[str, ...], default: str) -> str:
    """A query argument that must be one of ``allowed`` (400 naming it otherwise)."""
    value = request.args.get(name) or default
    if value not in allowed:
        abort(400, description=f"{name}: must be one of {', '.join(allowed)}")
    return value


def _board_args() -> tuple[str | None, str, str]:
    split = request.args.get("split") or None
    if split is not None and split not in SPLITS:
        abort(400, description=f"split: must be one of {', '.join(SPLITS)}")
    return split, _choice("against", REFERENCES, "gold"), _choice("metric", ("LAS", "UAS"), "LAS")


def _csv(text: str, name: str) -> Response:
    filename = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    return Response(text.encode("utf-8"), mimetype="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


def _charts(board: Scoreboard, metric: str) -> dict[str, Markup]:
    """The scores and the by-UPOS bar charts, each source in the same colour in both (server-drawn
    SVG: bar_chart_svg escapes every text it writes, so it is safe markup)."""
    if not board.sources:
        return {}
    colours = {s.name: OKABE_ITO[i % len(OKABE_ITO)] for i, s in enumerate(board.sources)}
    scores = {name: {s.name: s.percent(name) for s in board.sources} for name in ("UAS", "LAS", "CLAS")}
    scores["label"] = {s.name: board.label_percent(s.name) for s in board.sources}
    upos = breakdowns(board, metric)[0]
    by_tag = {row: {c: v for c, v in upos.values[row].items() if c != "oracle"} for row in upos.rows}
    return {"scores": Markup(bar_chart_svg(scores, title=f"Scores against {board.against}", y_label="%",
                                           highlight="ensemble", colours=colours)),
            "upos": Markup(bar_chart_svg(by_tag, title=f"{metric} by UPOS", y_label=f"{metric} (%)",
                                         width=max(760, 64 * len(upos.rows)), highlight="ensemble",
                                         colours=colours))}


@bp.route("/<int:treebank_id>/scoreboard")
@requires("read")
def board(treebank_id: int) -> str:
    """Every source scored against gold or reviewed trees, and which to trust for what."""
    treebank = db.get_or_404(Treebank, treebank_id)
    split, against, metric = _board_args()
    result = scoreboard(db.session, treebank, split=split, against=against)
    return render_template(
        "compare/scoreboard.html", treebank=treebank, board=result, split=split, against=against,
        metric=metric, splits=SPLITS, references=REFERENCES, rows=summary_rows(result),
        tables=breakdowns(result, metric) if result.sources else [], charts=_charts(result, metric),
        agreement=agreement_rows(result), externals=external_parsers(db.session, treebank))


@bp.route("/<int:treebank_id>/scoreboard/<table>.csv")
@requires("read")
def board_csv(treebank_id: int, table: str) -> Response:
    """One scoreboard table as CSV: ``scores``, ``upos``, ``relations``, ``directions``, ``agreement``."""
    treebank = db.get_or_404(Treebank, treebank_id)
    if table not in TABLES:
        abort(404)
    split, against, metric = _board_args()
    result = scoreboard(db.session, treebank, split=split, against=against)
    if table == "scores":
        header, rows = SUMMARY_HEADER, summary_rows(result)
    elif table == "agreement":
        header, rows = agreement_rows(result)
    else:
        found = breakdowns(result, metric) if result.sources else []
        index = ("upos", "relations", "directions").index(table)
        header, rows = breakdown_rows(found[index]) if found else ([table], [])
    return _csv(to_csv(header, rows), f"{treebank.name}-{split or 'all'}-{against}-{table}.csv")


def _source_options(treebank: Treebank) -> list[str]:
    """Names offered in the compare form: references, ensemble, parsers, ``ensemble@N`` per round."""
    ids = split_sentence_ids(db.session, treebank, None)
    rounds = [f"ensemble@{number}" for _, number in round_starts(db.session, treebank)]
    return ["gold", "reviewed", "latest", "ensemble", *parser_sources(db.session, ids), *rounds]


def _comparison(treebank: Treebank) -> tuple[Comparison | None, str | None]:
    """The comparison the query asks for (None until two sources are chosen) or the error."""
    split, against, _ = _board_args()
    a, b = request.args.get("a", ""), request.args.get("b", "")
    if not (a and b):
        return None, None
    try:
        return compare_sources(db.session, treebank, a, b, split=split, against=against), None
    except SourceError as error:
        return None, str(error)


@bp.route("/<int:treebank_id>/compare")
@requires("read")
def pair(treebank_id: int) -> tuple[str, int]:
    """Two sources: scores, significance, label confusion, the sentences they differ on."""
    treebank = db.get_or_404(Treebank, treebank_id)
    result, error = _comparison(treebank)
    return render_template(
        "compare/pair.html", treebank=treebank, result=result, error=error, options=_source_options(treebank),
        a=request.args.get("a", ""), b=request.args.get("b", ""), split=request.args.get("split") or None,
        against=request.args.get("against") or "gold", splits=SPLITS, references=REFERENCES,
        shown=SHOWN_DIFFERENCES), 400 if error else 200


@bp.route("/<int:treebank_id>/compare/<table>.csv")
@requires("read")
def pair_csv(treebank_id: int, table: str) -> Response:
    """The comparison's ``confusion`` matrix or its differing ``sentences`` as CSV."""
    treebank = db.get_or_404(Treebank, treebank_id)
    result, error = _comparison(treebank)
    if table not in ("confusion", "sentences"):
        abort(404)
    if result is None:
        abort(400, description=error or "a, b: choose two sources")
    if table == "confusion":
        labels = result.labels
        rows = [[first, *(result.confusion.get((first, second), 0) for second in labels)] for first in labels]
        text = to_csv([f"{result.a} \\ {result.b}", *labels], rows)
    else:
        text = to_csv(["sentence_id", "sent_id", "words", "different_heads", "different_labels", "text"],
                      [[d.sentence_id, d.sent_id or "", d.difference.words, d.difference.heads,
                        d.difference.labels, d.text or ""] for d in result.differing])
    return _csv(text, f"{treebank.name}-{result.a}-vs-{result.b}-{table}.csv")


@bp.route("/<int:treebank_id>/compare/sentences/<int:sentence_id>")
@requires("read")
def sentence(treebank_id: int, sentence_id: int) -> str:
    """One sentence's trees from sources ``a`` and ``b`` side by side, differing arcs marked."""
    treebank = db.get_or_404(Treebank, treebank_id)
    found = db.session.get(Sentence, sentence_id)
    if found is None or found.document.treebank_id != treebank.id:
        abort(404)
    a, b = request.args.get("a", ""), request.args.get("b", "")
    try:
        trees = {name: load_trees(db.session, treebank, [sentence_id], name).trees.get(sentence_id)
                 for name in (a, b)}
    except SourceError as error:
        abort(400, description=f"a, b: {error}")
    words = [{"id": t.word, "form": t.form, "upos": t.upos} for t in found.tokens if t.word]
    sides = [{"source": name, "version": tree.version if tree else None,
              "heads": tree.heads if tree else None, "deprels": tree.deprels if tree else None}
             for name, tree in trees.items()]
    return render_template("compare/sentence.html", treebank=treebank, sentence=found, a=a, b=b,
                           payload={"words": words, "sides": sides, "direction": treebank.direction})


@bp.route("/<int:treebank_id>/parses/upload", methods=["GET", "POST"])
@requires("import")
def upload(treebank_id: int) -> str | BaseResponse | tuple[str, int]:
    """Upload another parser's CoNLL-U output; it becomes an external parser of the treebank."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = ParseUploadForm()
    if not form.validate_on_submit():
        status = 400 if request.method == "POST" else 200
        return render_template("compare/upload.html", treebank=treebank, form=form,
                               externals=external_parsers(db.session, treebank)), status
    file = form.file.data
    try:
        result = add_parse(db.session, treebank, data=file.read(), filename=file.filename or "upload.conllu",
                           label=(form.label.data or "").strip(), user=current_user,
                           max_bytes=current_app.config["MAX_CONTENT_LENGTH"])
    except (UploadError, ConlluError) as error:
        db.session.rollback()
        return render_template("compare/upload.html", treebank=treebank, form=form, error=error,
                               externals=external_parsers(db.session, treebank)), 422
    db.session.commit()
    flash(f"Stored {counted(result.sentences, 'tree')} of {result.parser.label}; it is scored below.",
          "success")
    return redirect(url_for("compare.board", treebank_id=treebank.id))
