"""A treebank's settings page: language, label and feature inventories, annotators per sentence
and the guidelines link. Everyone who may read the treebank sees it; curators and owners edit it
(annotators per sentence: owners, as on the assignments page); a curator may also add one label
from the editor (JSON)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, jsonify, redirect, render_template, url_for
from flask_login import current_user
from werkzeug.wrappers import Response

from app.extensions import db
from app.forms import SettingsForm
from app.models import Treebank
from app.services.assignments import update_settings as update_assignment_rules
from app.services.permissions import can
from app.services.settings import (
    SettingsError,
    add_label,
    feature_inventory,
    inventory,
    label_inventory,
    read_feats,
    read_labels,
    read_language,
    read_url,
    update,
    validator_features,
    validator_relations,
)
from app.services.ud_checks import levels_for
from app.views import api_schemas as schemas
from app.views.access import requires
from app.views.api_input import json_body
from app.views.errors import as_sentence

bp = Blueprint("settings", __name__)


def _form(treebank: Treebank) -> SettingsForm:
    return SettingsForm(language=treebank.language, guidelines_url=treebank.guidelines_url,
                        extra_labels="\n".join(treebank.extra_labels or []),
                        extra_feats="\n".join(treebank.extra_feats or []),
                        annotators_per_sentence=treebank.annotators_per_sentence)


def _features(language: str) -> dict[str, list[str]]:
    """The validator's features for ``language``: feature → its values."""
    grouped: dict[str, list[str]] = {}
    for pair in validator_features(language):
        feature, value = pair.split("=", 1)
        grouped.setdefault(feature, []).append(value)
    return grouped


def _page(treebank: Treebank, form: SettingsForm | None = None, status: int = 200) -> tuple[str, int]:
    language = treebank.language or ""
    return render_template(
        "treebanks/settings.html", treebank=treebank, form=form or _form(treebank),
        inventory=inventory(treebank), total=len(label_inventory(treebank)), features=_features(language),
        feature_total=len(feature_inventory(treebank)), levels=levels_for(language),
        known_language=bool(validator_relations(language))), status


@bp.get("/treebanks/<int:treebank_id>/settings")
@requires("read")
def show(treebank_id: int) -> tuple[str, int]:
    """The settings, read only unless the user may curate."""
    return _page(db.get_or_404(Treebank, treebank_id))


def _changes(form: SettingsForm) -> dict[str, Any]:
    """The form's values as :func:`app.services.settings.update` takes them (:raise SettingsError:)."""
    return {"language": read_language(form.language.data or ""),
            "guidelines_url": read_url(form.guidelines_url.data or ""),
            "extra_labels": read_labels(form.extra_labels.data or ""),
            "extra_feats": read_feats(form.extra_feats.data or "")}


@bp.post("/treebanks/<int:treebank_id>/settings")
@requires("curate")
def save(treebank_id: int) -> Response | tuple[str, int]:
    """Save the settings (one ``settings`` audit event naming what changed)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    form = SettingsForm()
    if not form.validate_on_submit():
        return _page(treebank, form, 400)
    try:
        changed = update(db.session, treebank, _changes(form), by=current_user)
        per_sentence = form.annotators_per_sentence.data
        owner_changes = can(current_user, "manage", treebank) and per_sentence
        if owner_changes and per_sentence != treebank.annotators_per_sentence:
            update_assignment_rules(db.session, treebank, assigned_only=treebank.assigned_only,
                                    per_sentence=per_sentence, by=current_user)
            changed.append("annotators_per_sentence")
    except SettingsError as error:
        db.session.rollback()
        field = getattr(form, error.field)
        field.errors = [*field.errors, as_sentence(error)]
        return _page(treebank, form, 422)
    db.session.commit()
    names = ", ".join(name.replace("_", " ") for name in changed)
    flash(f"Saved: {names}." if changed else "Nothing changed.", "success")
    return redirect(url_for("settings.show", treebank_id=treebank.id))


@bp.post("/api/treebanks/<int:treebank_id>/labels")
@requires("curate")
def add_label_json(treebank_id: int) -> tuple[Response, int]:
    """Add one label to the curator's labels: ``{"label": "advmod:emph"}`` → ``{"label",
    "added", "labels"}`` (``added`` false: the inventory had it); 422 names a bad label."""
    treebank = db.get_or_404(Treebank, treebank_id)
    label = str(json_body(schemas.ADD_LABEL)["label"])
    try:
        added = add_label(db.session, treebank, label, by=current_user)
    except SettingsError as error:
        db.session.rollback()
        return jsonify(error=str(error), field="label"), 422
    db.session.commit()
    return jsonify(label=label.strip(), added=added, labels=label_inventory(treebank)), 200
