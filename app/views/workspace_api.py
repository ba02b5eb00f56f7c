"""JSON endpoints behind the annotation editor and the queue (the table below documents them).

Writes are POST with a JSON body and the CSRF token in the ``X-CSRFToken`` header; they use
the same service-layer validation as the CLI. Each request commits at most once.

=====================================  ======  ================================================
URL                                    Method  What
=====================================  ======  ================================================
/api/sentences/<id>                    GET     editor data (words, member/ensemble/current trees)
/api/sentences/<id>/check              POST    {heads, deprels} → {errors, non_projective}
/api/sentences/<id>/annotations        POST    save: 201 {tree} · 422 {errors} · 409 {theirs, yours}
/api/sentences/<id>/state              POST    {status?, reviewed_words?} → {state}
/api/sentences/<id>/history            GET     every version, newest first, with changed arcs
/api/sentences/<id>/revert             POST    {version_id, expected_version} → 201 {tree} · 409
/api/sentences/<id>/notes              POST    {body} → 201 {notes}
/api/treebanks/<id>/queue              GET     ?order&status&upos&relation&disputed&split → items
/api/treebanks/<id>/queue/next         GET     ?after=<sentence id>&filters → {id}
/api/treebanks/<id>/preannotate        POST    {parsers?, tags?, ensemble?, sentences?,
                                               self_training?, warm?} → 202 {job} · 422 {error, field?}
=====================================  ======  ================================================
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request
from flask_login import current_user

from app.extensions import db
from app.jobs import create_job, submit
from app.models import Sentence, SentenceState, Treebank
from app.services.preannotate import DEFAULT_PARSERS
from app.services.queue import QueueFilter, build_queue, next_in_queue
from app.services.self_training import SettingsError, parse_settings
from app.services.workspace import (
    Conflict,
    InvalidTree,
    add_note,
    check_tree,
    conflict_diff,
    editor_data,
    history,
    notes,
    revert,
    save_annotation,
    set_state,
    state_dict,
    tree_dict,
)
from parsing.ensemble.registry import DEFAULT_METHOD, method_spec
from parsing.members import member_names

bp = Blueprint("workspace_api", __name__, url_prefix="/api")

JsonResponse = Response | tuple[Response, int]


def api_login_required(view: Callable[..., JsonResponse]) -> Callable[..., JsonResponse]:
    """Like ``login_required`` but answers 401 JSON instead of redirecting."""
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> JsonResponse:
        if not current_user.is_authenticated:
            return jsonify(error="sign in first"), 401
        return view(*args, **kwargs)
    return wrapped


def _body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        abort(400, "expected a JSON object")
    return body


def _tree_body(body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    heads, deprels = body.get("heads"), body.get("deprels")
    if not isinstance(heads, list) or not isinstance(deprels, list):
        abort(400, "heads and deprels must be lists")
    return heads, deprels


@bp.get("/sentences/<int:sentence_id>")
@api_login_required
def sentence(sentence_id: int) -> JsonResponse:
    """Editor data of one sentence."""
    return jsonify(editor_data(db.session, db.get_or_404(Sentence, sentence_id)))


@bp.post("/sentences/<int:sentence_id>/check")
@api_login_required
def check(sentence_id: int) -> JsonResponse:
    """Validate a tree without saving it."""
    heads, deprels = _tree_body(_body())
    return jsonify(check_tree(db.get_or_404(Sentence, sentence_id), heads, deprels))


@bp.post("/sentences/<int:sentence_id>/annotations")
@api_login_required
def save(sentence_id: int) -> JsonResponse:
    """Save a corrected tree as a new version (422 invalid, 409 someone saved first)."""
    target = db.get_or_404(Sentence, sentence_id)
    body = _body()
    heads, deprels = _tree_body(body)
    try:
        tree = save_annotation(
            db.session, target, heads=heads, deprels=deprels,
            expected_version=int(body.get("expected_version", 0)), user=current_user,
            based_on_id=body.get("based_on_id"), reviewed_words=body.get("reviewed_words"),
            status=body.get("status"),
        )
    except InvalidTree as error:
        db.session.rollback()
        return jsonify(error="the tree was not saved", errors=[e.to_dict() for e in error.errors]), 422
    except Conflict as conflict:
        db.session.rollback()
        yours = {"heads": heads, "deprels": deprels, "expected_version": body.get("expected_version")}
        return jsonify(error=str(conflict), theirs=conflict.theirs, yours=yours,
                       differing=conflict_diff(conflict.theirs, heads, deprels)), 409
    except ValueError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 422
    db.session.commit()
    return jsonify(tree=tree_dict(tree), state=state_dict(db.session.get(SentenceState, target.id))), 201


@bp.post("/sentences/<int:sentence_id>/state")
@api_login_required
def state(sentence_id: int) -> JsonResponse:
    """Set the review status and/or the reviewed words (no new tree version)."""
    target = db.get_or_404(Sentence, sentence_id)
    body = _body()
    try:
        saved = set_state(db.session, target, user=current_user, status=body.get("status"),
                          reviewed_words=body.get("reviewed_words"))
    except (ValueError, TypeError) as error:
        db.session.rollback()
        return jsonify(error=str(error)), 422
    db.session.commit()
    return jsonify(state=state_dict(saved))


@bp.get("/sentences/<int:sentence_id>/history")
@api_login_required
def sentence_history(sentence_id: int) -> JsonResponse:
    """Every version of the sentence's trees, newest first."""
    return jsonify(history=history(db.session, db.get_or_404(Sentence, sentence_id)))


@bp.post("/sentences/<int:sentence_id>/revert")
@api_login_required
def sentence_revert(sentence_id: int) -> JsonResponse:
    """Make an older tree the newest annotation (a new version)."""
    target = db.get_or_404(Sentence, sentence_id)
    body = _body()
    try:
        tree = revert(db.session, target, version_id=int(body.get("version_id", 0)),
                      expected_version=int(body.get("expected_version", 0)), user=current_user)
    except LookupError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 404
    except Conflict as conflict:
        db.session.rollback()
        return jsonify(error=str(conflict), theirs=conflict.theirs), 409
    db.session.commit()
    return jsonify(tree=tree_dict(tree)), 201


@bp.post("/sentences/<int:sentence_id>/notes")
@api_login_required
def sentence_notes(sentence_id: int) -> JsonResponse:
    """Add a note to the sentence."""
    target = db.get_or_404(Sentence, sentence_id)
    try:
        add_note(db.session, target, body=str(_body().get("body", "")), user=current_user)
    except ValueError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 422
    db.session.commit()
    return jsonify(notes=notes(db.session, target.id)), 201


@bp.get("/treebanks/<int:treebank_id>/queue")
@api_login_required
def queue(treebank_id: int) -> JsonResponse:
    """The queue's items and counts."""
    found = build_queue(db.session, db.get_or_404(Treebank, treebank_id), QueueFilter.from_args(request.args))
    limit = min(request.args.get("limit", 200, type=int) or 200, 2000)
    return jsonify(items=found.items[:limit], counts=found.counts, matching=len(found.items))


@bp.get("/treebanks/<int:treebank_id>/queue/next")
@api_login_required
def queue_next(treebank_id: int) -> JsonResponse:
    """The sentence after ``after`` in the queue (``id`` null at the end)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    following = next_in_queue(db.session, treebank, QueueFilter.from_args(request.args),
                              request.args.get("after", 0, type=int))
    return jsonify(id=following)


@bp.post("/treebanks/<int:treebank_id>/preannotate")
@api_login_required
def preannotate(treebank_id: int) -> JsonResponse:
    """Start a pre-annotation job (train a round, parse the pool); poll ``GET /jobs/<id>``."""
    treebank = db.get_or_404(Treebank, treebank_id)
    body = _body()
    try:
        parsers = member_names(body.get("parsers") or ",".join(DEFAULT_PARSERS))
    except ValueError as error:
        return jsonify(error=str(error)), 422
    tags = body.get("tags") or "gold"
    if tags not in ("gold", "predicted"):
        return jsonify(error="tags must be gold or predicted"), 422
    ensemble = body.get("ensemble") or DEFAULT_METHOD
    try:
        if not method_spec(str(ensemble)).uses(parsers):
            return jsonify(error=f"ensemble {ensemble} combines none of {', '.join(parsers)}"), 422
    except ValueError as error:
        return jsonify(error=str(error)), 422
    try:
        self_training = parse_settings(body.get("self_training"))
    except SettingsError as error:
        return jsonify(error=str(error), field=f"self_training.{error.field}".rstrip(".")), 422
    warm = body.get("warm", False)
    if not isinstance(warm, bool):
        return jsonify(error="warm must be true or false", field="warm"), 422
    params: dict[str, Any] = {"parsers": parsers, "tags": tags, "ensemble": ensemble,
                              "self_training": self_training, "warm": warm}
    if body.get("sentences"):
        params["sentences"] = [int(i) for i in body["sentences"]]
    job = create_job(db.session, kind="preannotate", user=current_user, treebank_id=treebank.id,
                     params=params)
    db.session.commit()
    submit(current_app._get_current_object(), job.id)  # type: ignore[attr-defined]
    return jsonify(job=job.to_dict()), 202
