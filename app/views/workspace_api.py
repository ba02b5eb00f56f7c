"""JSON endpoints behind the annotation editor and the queue (the table below documents them).

Writes are POST with a JSON body and the CSRF token in the ``X-CSRFToken`` header. Bodies and
numeric query arguments are read as :mod:`app.views.api_input` says, against the schemas of
:mod:`app.views.api_schemas` (400: not a JSON object; 422 ``{error, field}``: a wrong field);
then the same service-layer validation as the CLI applies. Each request commits at most once.
The whole API is described at ``/api/openapi.json``. Each endpoint names its permission with
``@requires`` (:mod:`app.views.access`): reads need ``read`` (viewer), the sentence writes
``annotate`` (annotator), pre-annotation ``train`` (owner). Saves, reverts and status changes go
to the line :func:`app.services.assignments.editing_line` picks (a blind annotator's branch,
else the main line, which it may refuse: 403 with the reason).

=====================================  ======  ================================================
URL                                    Method  What
=====================================  ======  ================================================
/api/sentences/<id>                    GET     editor data (words, member/ensemble/current trees)
/api/sentences/<id>/check              POST    {heads, deprels} → {errors, non_projective}
/api/sentences/<id>/annotations        POST    {heads, deprels, columns?, human_words?: a partial
                                               tree's human arcs, ...} → 201 {tree, state,
                                               warnings} · 200 {tree, state, warnings, unchanged}
                                               (the same version was saved first) · 422 {errors}
                                               · 409 {theirs, yours}
/api/sentences/<id>/values             GET     known UPOS/XPOS/Feature=Value/lemmas, most frequent first
/api/sentences/<id>/state              POST    {status?, reviewed_words?} → {state}
/api/sentences/<id>/history            GET     every version, newest first, with changed arcs,
                                               and the review status changes (status_history)
/api/sentences/<id>/revert             POST    {version_id, expected_version} → 201 {tree} · 409
/api/sentences/<id>/notes              POST    {body} → 201 {notes}
/api/sentences/<id>/tokens             POST    {operation, word?, at?, first?, last?, form?, after?,
                                               edit_id?} → 201 {edit} (app.views.tokens_api)
/api/sentences/<id>/reparse            POST    {constraints: [{id, head, deprel}], previous?}
                                               → {ensemble, members, changed} · 422 {error,
                                               field} · 409 {error}: no trained models
/api/treebanks/<id>/queue              GET     ?order&status&upos&relation&disputed&split&assigned
                                               → items (yours first; owners: with assignees)
/api/treebanks/<id>/queue/next         GET     ?after=<sentence id>&filters → {id}
/api/treebanks/<id>/preannotate        POST    {parsers?, tags?, ensemble?, sentences?,
                                               self_training?, warm?, externals?, raw_text?} → 202 {job};
                                               {with_round: N, sentences?}: parse with round N's
                                               models (default: the pool no round parsed yet)
=====================================  ======  ================================================
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request
from flask_login import current_user

from app.extensions import db
from app.jobs import RoundBusy, create_job, submit
from app.models import Sentence, SentenceState, Treebank
from app.services.assignments import Line, editing_line
from app.services.audit import status_history
from app.services.external_votes import VoterError, check_voters
from app.services.history import Superseded, history, revert
from app.services.model_cache import DEFAULT_SIZE, ModelCache
from app.services.notes import add_note, notes
from app.services.parse_with_round import reusable_round
from app.services.permissions import can
from app.services.preannotate import require_installed
from app.services.queue import QueueFilter, build_queue, next_in_queue
from app.services.raw_text_rounds import RawTextError, check_raw_text
from app.services.reparse import NoModels, ReparseError, read_constraints, read_previous, reparse
from app.services.self_training import SettingsError, parse_settings
from app.services.settings import feature_inventory, label_inventory
from app.services.token_columns import imported_columns, known_values
from app.services.token_edits import tokens_info
from app.services.ud_checks import tree_warnings
from app.services.workspace import (
    Conflict,
    InvalidTree,
    branch_state,
    check_tree,
    conflict_diff,
    editor_data,
    save_annotation,
    set_branch_status,
    set_state,
    state_dict,
    with_columns,
)
from app.views import api_schemas as schemas
from app.views.access import requires
from app.views.api_input import InputError, json_body, query_int
from parsing.ensemble.registry import default_method, method_spec
from parsing.members import default_members, member_names

bp = Blueprint("workspace_api", __name__, url_prefix="/api")

JsonResponse = Response | tuple[Response, int]




def _line(target: Sentence, *, writing: bool = True) -> Line:
    """The line the signed-in user edits on ``target``; 403 when ``writing`` and refused."""
    line = editing_line(db.session, current_user, target)
    if writing and line.refusal is not None:
        abort(403, line.refusal)
    return line


@bp.get("/sentences/<int:sentence_id>")
@requires("read")
def sentence(sentence_id: int) -> JsonResponse:
    """Editor data of one sentence (a blind annotator's: their branch)."""
    target = db.get_or_404(Sentence, sentence_id)
    return jsonify({**editor_data(db.session, target, branch=_line(target, writing=False).branch),
                    "tokens": tokens_info(db.session, current_user, target)})


@bp.post("/sentences/<int:sentence_id>/check")
@requires("annotate")
def check(sentence_id: int) -> JsonResponse:
    """Validate a tree without saving it (for who may save one: issue #31)."""
    body = json_body(schemas.TREE)
    return jsonify(check_tree(db.get_or_404(Sentence, sentence_id), body["heads"], body["deprels"]))


@bp.post("/sentences/<int:sentence_id>/annotations")
@requires("annotate")
def save(sentence_id: int) -> JsonResponse:
    """Save a corrected tree as a new version (422 invalid, 409 someone saved first)."""
    target = db.get_or_404(Sentence, sentence_id)
    line = _line(target)
    body = json_body(schemas.SAVE)
    heads, deprels = body["heads"], body["deprels"]
    try:
        saved = save_annotation(
            db.session, target, heads=heads, deprels=deprels,
            expected_version=body.get("expected_version", 0), user=current_user,
            based_on_id=body.get("based_on_id"), reviewed_words=body.get("reviewed_words"),
            status=body.get("status"), human_words=body.get("human_words"), columns=body.get("columns"),
            branch=line.branch,
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
    state_now = branch_state(db.session, target, line.branch) if line.branch else state_dict(
        db.session.get(SentenceState, target.id))
    answer = {"tree": with_columns(db.session, saved.tree), "state": state_now,
              "warnings": tree_warnings(db.session, target, saved.tree)}
    if not saved.created:  # someone saved exactly this version first: nothing new, no conflict
        return jsonify(**answer, unchanged=True), 200
    return jsonify(**answer), 201


@bp.get("/sentences/<int:sentence_id>/values")
@requires("read")
def column_values(sentence_id: int) -> JsonResponse:
    """The values the editor offers for the word columns (the treebank's most frequent first)."""
    target = db.get_or_404(Sentence, sentence_id)
    forms, _ = imported_columns(db.session, target.id)
    return jsonify(known_values(db.session, target.document.treebank_id, forms,
                                feature_inventory(target.document.treebank)))


@bp.post("/sentences/<int:sentence_id>/state")
@requires("annotate")
def state(sentence_id: int) -> JsonResponse:
    """Set the review status and/or the reviewed words (no new tree version)."""
    target = db.get_or_404(Sentence, sentence_id)
    line = _line(target)
    body = json_body(schemas.STATE)
    try:
        if line.branch:
            saved = set_branch_status(db.session, target, user=current_user, status=body.get("status"))
        else:
            saved = state_dict(set_state(db.session, target, user=current_user, status=body.get("status"),
                                         reviewed_words=body.get("reviewed_words")))
    except (ValueError, TypeError) as error:
        db.session.rollback()
        return jsonify(error=str(error)), 422
    db.session.commit()
    return jsonify(state=saved)


@bp.get("/sentences/<int:sentence_id>/history")
@requires("read")
def sentence_history(sentence_id: int) -> JsonResponse:
    """Every version of the sentence's trees, newest first, and its review status changes (a
    blind annotator sees only their own branch and status changes)."""
    target = db.get_or_404(Sentence, sentence_id)
    branch = _line(target, writing=False).branch
    changes = status_history(db.session, sentence_id)
    if branch:
        changes = [change for change in changes if change["user"] == current_user.username]
    return jsonify(history=history(db.session, target, branches=[branch] if branch else None),
                   status_history=changes)


@bp.post("/sentences/<int:sentence_id>/revert")
@requires("annotate")
def sentence_revert(sentence_id: int) -> JsonResponse:
    """Make an older tree the newest annotation (a new version); the reply's ``state`` has the
    review ticks that follow the tree reverted to (none for a parser's tree)."""
    target = db.get_or_404(Sentence, sentence_id)
    line = _line(target)
    body = json_body(schemas.REVERT)
    try:
        tree = revert(db.session, target, version_id=body["version_id"],
                      expected_version=body.get("expected_version", 0), user=current_user,
                      branch=line.branch)
    except LookupError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 404
    except Conflict as conflict:
        db.session.rollback()
        return jsonify(error=str(conflict), theirs=conflict.theirs), 409
    except Superseded as error:
        db.session.rollback()
        return jsonify(error=str(error)), 409
    db.session.commit()
    state_now = branch_state(db.session, target, line.branch) if line.branch else state_dict(
        db.session.get(SentenceState, target.id))
    return jsonify(tree=with_columns(db.session, tree), state=state_now), 201


@bp.post("/sentences/<int:sentence_id>/notes")
@requires("annotate")
def sentence_notes(sentence_id: int) -> JsonResponse:
    """Add a note to the sentence."""
    target = db.get_or_404(Sentence, sentence_id)
    text = json_body(schemas.NOTE)["body"]
    try:
        add_note(db.session, target, body=text, user=current_user)
    except ValueError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 422
    db.session.commit()
    return jsonify(notes=notes(db.session, target.id)), 201


def model_cache() -> ModelCache:
    """The app's cache of loaded model directories (``REPARSE_CACHE_SIZE`` of them)."""
    cache = current_app.extensions.get("arcvote.models")
    if cache is None:
        cache = current_app.extensions.setdefault(
            "arcvote.models", ModelCache(int(current_app.config.get("REPARSE_CACHE_SIZE", DEFAULT_SIZE))))
    assert isinstance(cache, ModelCache)
    return cache


@bp.post("/sentences/<int:sentence_id>/reparse")
@requires("annotate")
def sentence_reparse(sentence_id: int) -> JsonResponse:
    """Re-parse the sentence around the annotator's arcs (nothing is stored)."""
    target = db.get_or_404(Sentence, sentence_id)
    body = json_body(schemas.REPARSE)
    try:
        constraints = read_constraints(body.get("constraints"), target.n_words,
                                       label_inventory(target.document.treebank))
        previous = read_previous(body.get("previous"), target.n_words)
        return jsonify(reparse(db.session, target, constraints, model_cache(), previous))
    except ReparseError as error:
        return jsonify(error=str(error), field=error.field), error.status
    except NoModels as error:
        return jsonify(error=str(error)), 409


@bp.get("/treebanks/<int:treebank_id>/queue")
@requires("read")
def queue(treebank_id: int) -> JsonResponse:
    """The queue's items and counts."""
    treebank = db.get_or_404(Treebank, treebank_id)
    found = build_queue(db.session, treebank, QueueFilter.from_args(request.args), user_id=current_user.id,
                        with_assignees=can(current_user, "manage", treebank))
    limit = query_int("limit", 200, minimum=1, maximum=2000)
    return jsonify(items=found.items[:limit], counts=found.counts, matching=len(found.items))


@bp.get("/treebanks/<int:treebank_id>/queue/next")
@requires("read")
def queue_next(treebank_id: int) -> JsonResponse:
    """The sentence after ``after`` in the queue (``id`` null at the end)."""
    treebank = db.get_or_404(Treebank, treebank_id)
    following = next_in_queue(db.session, treebank, QueueFilter.from_args(request.args),
                              query_int("after", 0), user_id=current_user.id)
    return jsonify(id=following)


@bp.post("/treebanks/<int:treebank_id>/preannotate")
@requires("train")
def preannotate(treebank_id: int) -> JsonResponse:
    """Start a pre-annotation job (train a round, parse the pool; with ``with_round``, parse
    with that round's models, no training); poll ``GET /jobs/<id>``."""
    treebank = db.get_or_404(Treebank, treebank_id)
    body = json_body(schemas.PREANNOTATE)
    if body.get("with_round") is not None:
        try:
            reused = reusable_round(db.session, treebank, int(body["with_round"]))
        except ValueError as error:
            raise InputError("with_round", str(error)) from None
        chosen = {"sentences": body["sentences"]} if body.get("sentences") else {}
        return _start_round_job(treebank, {"with_round": reused.number, **chosen})
    requested = body.get("parsers")
    tags = body.get("tags") or "gold"
    try:
        parsers = member_names((",".join(requested) if isinstance(requested, list) else requested)
                               or ",".join(default_members(tags)))
        require_installed(parsers)
    except ValueError as error:
        raise InputError("parsers", str(error)) from None
    ensemble = body.get("ensemble") or default_method(tags)
    try:
        combines = method_spec(ensemble).uses(parsers)
    except ValueError as error:
        raise InputError("ensemble", str(error)) from None
    if not combines:
        raise InputError("ensemble", f"ensemble {ensemble} combines none of {', '.join(parsers)}")
    try:
        self_training = parse_settings(body.get("self_training"))
    except SettingsError as error:
        raise InputError(f"self_training.{error.field}".rstrip("."), error.problem) from None
    warm = body.get("warm", False)
    raw_text = body.get("raw_text", False)
    if raw_text:
        try:
            check_raw_text(db.session, treebank, parsers)
        except RawTextError as error:
            raise InputError("raw_text", str(error)) from None
    try:
        externals = check_voters(db.session, treebank, body.get("externals") or [], ensemble)
    except VoterError as error:
        raise InputError("externals", str(error)) from None
    params: dict[str, Any] = {"parsers": parsers, "tags": tags, "ensemble": ensemble,
                              "self_training": self_training, "warm": warm, "externals": externals,
                              "raw_text": raw_text}
    if body.get("sentences"):
        params["sentences"] = body["sentences"]
    return _start_round_job(treebank, params)


def _start_round_job(treebank: Treebank, params: dict[str, Any]) -> JsonResponse:
    """Queue a ``preannotate`` job with ``params``: 202 with the job, 409 while another runs."""
    try:
        job = create_job(db.session, kind="preannotate", user=current_user, treebank_id=treebank.id,
                         params=params)
    except RoundBusy as busy:
        return jsonify(error=str(busy), active_job=busy.active), 409
    db.session.commit()
    submit(current_app._get_current_object(), job.id)  # type: ignore[attr-defined]
    return jsonify(job=job.to_dict()), 202
