"""An owner configures the treebank's plugins in the browser (issue #16): external parsers run
during pre-annotation, given as an HTTP endpoint or, by site admins only, as a command.

Both routes need ``manage`` (:mod:`app.views.access`); which kind of plugin a user may set is
:func:`app.services.permissions.plugin_refusal`'s rule (403 with its reason otherwise).
"""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.wrappers import Response as BaseResponse

from app.extensions import db
from app.forms import PluginForm
from app.models import Treebank
from app.services.external import (
    UploadError,
    allowed_hosts,
    external_parsers,
    find_parser,
    remove_plugin,
    set_plugin,
)
from app.services.permissions import plugin_refusal
from app.views.access import requires

bp = Blueprint("plugins", __name__, url_prefix="/treebanks")

Page = str | BaseResponse | tuple[str, int]


def _page(treebank: Treebank, form: PluginForm, *, error: str | None = None, status: int = 200,
          failed: str = "The plugin was not saved.") -> tuple[str, int]:
    return render_template(
        "compare/plugins.html", treebank=treebank, form=form, error=error, failed=failed,
        externals=external_parsers(db.session, treebank),
        commands_allowed=plugin_refusal(current_user, treebank, "command") is None), status


def _prefill(form: PluginForm, treebank: Treebank, label: str) -> None:
    """Fill the form with plugin ``label``'s settings (the list's Edit link)."""
    parser = find_parser(db.session, treebank, label)
    if parser is None:
        return
    form.label.data, form.timeout.data = parser.label, parser.timeout_s
    form.kind.data = "command" if parser.command else "http"
    form.url.data, form.command.data = parser.url, parser.command


@bp.route("/<int:treebank_id>/plugins", methods=["GET", "POST"])
@requires("manage")
def index(treebank_id: int) -> Page:
    """The treebank's external parsers, and a form to add or change a plugin."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = PluginForm()
    if request.method == "GET":
        _prefill(form, treebank, request.args.get("edit", ""))
    if not form.validate_on_submit():
        return _page(treebank, form, status=400 if request.method == "POST" else 200)
    kind = form.kind.data or "http"
    refusal = plugin_refusal(current_user, treebank, kind)
    if refusal is not None:
        return _page(treebank, form, error=refusal, status=403)
    target = form.url if kind == "http" else form.command
    if not (target.data or "").strip():
        target.errors = [f"Give the {'endpoint URL' if kind == 'http' else 'command'} of this plugin."]
        return _page(treebank, form, status=422)
    label = (form.label.data or "").strip()
    try:
        value = (target.data or "").strip()
        set_plugin(db.session, treebank, label=label, timeout=float(form.timeout.data or 0),
                   user=current_user, command=value if kind == "command" else None,
                   url=value if kind == "http" else None, allowed=allowed_hosts(current_app.config))
    except UploadError as error:
        db.session.rollback()
        return _page(treebank, form, error=str(error), status=422)
    db.session.commit()
    flash(f"{label} runs during every pre-annotation of {treebank.name}.", "success")
    return redirect(url_for("plugins.index", treebank_id=treebank.id))


@bp.post("/<int:treebank_id>/plugins/<label>/remove")
@requires("manage")
def remove(treebank_id: int, label: str) -> Page:
    """Stop running plugin ``label`` (forgotten if it parsed nothing yet; else its trees stay)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = PluginForm()
    try:
        forgotten = remove_plugin(db.session, treebank, label)
    except UploadError as error:
        db.session.rollback()
        return _page(treebank, form, error=str(error), status=422, failed="The plugin was not stopped.")
    db.session.commit()
    flash(f"{label} no longer runs" + ("." if forgotten else "; its trees stay."), "success")
    return redirect(url_for("plugins.index", treebank_id=treebank.id))
