"""The rules page of a treebank (issue #32): a Grew rule, the preview of every change it makes,
applying it in one step, and reverting a recent application. Curators and owners only."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.models import SPLITS, Treebank
from app.search_models import QUERY_PATTERN_LENGTH
from app.services.rules import Preview, RuleError, apply_rule, preview_rule, revert_rule, rule_events
from app.services.trees import StaleVersionError
from app.views.access import requires
from parsing.grew import GrewSyntaxError, SearchTooLong

bp = Blueprint("rules", __name__, url_prefix="/treebanks")

SECONDS = 20.0
"""Time a rule may spend finding its matches before the page stops it with an error."""
SHOWN_SENTENCES = 200
"""Changed sentences listed in a preview (the counts cover them all)."""

EXAMPLE = ('rule {\n  pattern { e: H -[obl]-> N; N -[case]-> C; C [lemma="by"] }\n'
           '  commands { e.label = "obl:agent" }\n}')


def _split(value: str | None) -> str | None:
    if value and value not in SPLITS:
        abort(400, description=f"split: must be one of {', '.join(SPLITS)}")
    return value or None


@bp.route("/<int:treebank_id>/rules")
@requires("curate")
def page(treebank_id: int) -> tuple[str, int]:
    """The rule box; with a rule, the preview of its changes and the button that applies them."""
    treebank = db.get_or_404(Treebank, treebank_id)
    text, split = request.args.get("rule", "").strip(), _split(request.args.get("split"))
    preview: Preview | None = None
    error = None
    if len(text) > QUERY_PATTERN_LENGTH:
        error = f"Rule: at most {QUERY_PATTERN_LENGTH} characters."
    elif text:
        try:
            preview = preview_rule(db.session, treebank, text, split=split, seconds=SECONDS)
        except GrewSyntaxError as problem:
            error = f"Rule: {problem}."
        except SearchTooLong as problem:
            error = f"Stopped: {problem}."
    return render_template("rules/page.html", treebank=treebank, text=text, split=split, splits=SPLITS,
                           preview=preview, error=error, shown=SHOWN_SENTENCES, example=EXAMPLE,
                           events=rule_events(db.session, treebank)), 400 if error else 200


@bp.route("/<int:treebank_id>/rules/apply", methods=["POST"])
@requires("curate")
def apply(treebank_id: int) -> BaseResponse:
    """Apply the previewed rule: one new version per changed sentence, one audit event."""
    treebank = db.get_or_404(Treebank, treebank_id)
    text, split = request.form.get("rule", "").strip(), _split(request.form.get("split"))
    expected = request.form.get("expected", type=int)
    try:
        event = apply_rule(db.session, treebank, text, user=current_user, split=split, expected=expected,
                           seconds=SECONDS)
    except (RuleError, GrewSyntaxError, StaleVersionError, SearchTooLong) as problem:
        db.session.rollback()
        flash(f"Not applied: {problem}", "error")
        return redirect(url_for("rules.page", treebank_id=treebank.id, rule=text or None, split=split))
    details = event.details
    db.session.commit()
    flash(f"Applied: {details['matches']} matches changed {details['sentences']} sentences.", "success")
    return redirect(url_for("rules.page", treebank_id=treebank.id))


@bp.route("/<int:treebank_id>/rules/revert", methods=["POST"])
@requires("curate")
def revert(treebank_id: int) -> BaseResponse:
    """Revert one rule application (``event_id``, a form field)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    event_id = request.form.get("event_id", type=int) or 0
    try:
        event = revert_rule(db.session, treebank, event_id, user=current_user)
    except (RuleError, StaleVersionError) as problem:
        db.session.rollback()
        flash(f"Not reverted: {problem}", "error")
        return redirect(url_for("rules.page", treebank_id=treebank.id))
    reverted, kept = len(event.details["reverted"]), len(event.details["kept"])
    db.session.commit()
    note = f"; {kept} edited since were left as they are" if kept else ""
    flash(f"Reverted {reverted} sentences{note}.", "success")
    return redirect(url_for("rules.page", treebank_id=treebank.id))
