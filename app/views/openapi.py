"""``GET /api/openapi.json``: an OpenAPI 3.1 description of the JSON API, built from the same
schemas that check its input (:mod:`app.views.api_schemas`), so the two cannot drift apart.

Every operation needs a signed-in session (the cookie from ``/auth/login``); writes also need
the CSRF token (``<meta name="csrf-token">`` of any page) in the ``X-CSRFToken`` header.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from app.models import SPLITS
from app.services.queue import ORDERS, STATUSES
from app.views import api_schemas as s
from app.views.access import public
from app.views.api_input import MAX_ID

bp = Blueprint("openapi", __name__)

Schema = dict[str, Any]


def _json(schema: Schema, description: str) -> Schema:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERRORS: dict[str, Schema] = {
    "400": _json(s.ERROR, "the body is not a JSON object (or the CSRF token is missing)"),
    "401": _json(s.ERROR, "not signed in"),
    "403": _json(s.ERROR, "the user's role on the treebank does not allow this"),
    "404": _json(s.ERROR, "no such sentence, treebank or job"),
}
WRONG_FIELD = {"422": _json(s.ERROR, "a field has a wrong type or value; `field` names it")}


def _id(name: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "schema": s.ID}


def _query(name: str, schema: Schema, description: str = "") -> Schema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


QUEUE_FILTERS = [
    _query("order", {"type": "string", "enum": list(ORDERS)}),
    _query("status", {"type": "string", "enum": list(STATUSES)}),
    _query("split", {"type": "string", "enum": list(SPLITS)}),
    _query("upos", {"type": "string", "maxLength": 32}, "sentences with a word of this UPOS"),
    _query("relation", {"type": "string", "maxLength": 64}, "sentences with an arc of this label"),
    _query("disputed", {"type": "string", "maxLength": 64}, "... on which the members disagree"),
]


LIMIT: Schema = {"type": "integer", "minimum": 1, "maximum": 2000}
AFTER: Schema = {"type": "integer", "minimum": 0, "maximum": MAX_ID}


def _operation(summary: str, *, body: Schema | None = None, params: list[Schema] | None = None,
               answers: dict[str, Schema], post: bool = False) -> Schema:
    operation: Schema = {"summary": summary, "parameters": params or [],
                         "responses": {**answers, **ERRORS, **(WRONG_FIELD if body or params else {})}}
    if body is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if post:
        operation["security"] = [{"session": [], "csrf": []}]
    return operation


def document() -> Schema:
    """The OpenAPI document."""
    sentence = [_id("sentence_id")]
    treebank = [_id("treebank_id")]
    saved = {"type": "object", "required": ["tree", "state"],
             "properties": {"tree": s.TREE_OUT, "state": s.STATE_OUT, "unchanged": {"type": "boolean"},
                            "warnings": {"type": "array", "items": {"type": "object"}}}}
    conflict = {"type": "object", "required": ["error", "theirs"],
                "properties": {"error": {"type": "string"}, "theirs": s.TREE_OUT,
                               "differing": {"type": "array", "items": {"type": "integer"}}}}
    job_answer = {"type": "object", "required": ["job"], "properties": {"job": s.JOB_OUT}}
    invalid_tree = {"type": "object", "required": ["error"], "properties": {
        "error": {"type": "string"}, "field": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "object"}}}}
    paths = {
        "/api/sentences/{sentence_id}": {"get": _operation(
            "Editor data: words, member/ensemble/current trees, labels, state, notes",
            params=sentence, answers={"200": _json(s.EDITOR_OUT, "the editor's data")})},
        "/api/sentences/{sentence_id}/check": {"post": _operation(
            "Validate a tree without saving it", body=s.TREE, params=sentence, post=True,
            answers={"200": _json({"type": "object", "required": ["errors", "non_projective"]},
                                  "the problems (empty: valid) and the non-projective words")})},
        "/api/sentences/{sentence_id}/annotations": {"post": _operation(
            "Save a corrected tree as the next annotation version", body=s.SAVE, params=sentence,
            post=True, answers={
                "201": _json(saved, "saved as a new version"),
                "200": _json(saved, "someone saved exactly this tree first (`unchanged`): nothing new"),
                "409": _json(conflict, "someone saved a different tree first: theirs, the differing words"),
                "422": _json(invalid_tree, "a wrong field (`field`) or an invalid tree (`errors`)")})},
        "/api/sentences/{sentence_id}/state": {"post": _operation(
            "Set the review status and/or the reviewed words", body=s.STATE, params=sentence, post=True,
            answers={"200": _json({"type": "object", "required": ["state"],
                                   "properties": {"state": s.STATE_OUT}}, "the new state")})},
        "/api/sentences/{sentence_id}/history": {"get": _operation(
            "Every tree version, newest first", params=sentence,
            answers={"200": _json({"type": "object", "required": ["history"],
                                   "properties": {"history": {"type": "array"}}}, "the versions")})},
        "/api/sentences/{sentence_id}/revert": {"post": _operation(
            "Make an older tree the newest annotation", body=s.REVERT, params=sentence, post=True,
            answers={"201": _json({"type": "object", "required": ["tree"],
                                   "properties": {"tree": s.TREE_OUT}}, "the new version"),
                     "409": _json(conflict, "someone saved first")})},
        "/api/sentences/{sentence_id}/tokens": {"post": _operation(
            "Split or merge words or sentences, add or remove a multiword token, undo the newest such edit",
            body=s.TOKEN_EDIT, params=sentence, post=True, answers={
                "201": _json({"type": "object", "required": ["edit", "sentence_id"]},
                             "the edit (the sentence's trees were carried over as new versions)"),
                "409": _json(s.ERROR, "the edit cannot be made now (undo of an edit that is not the newest)"),
                "422": _json(s.ERROR, "a missing or wrong argument (`field` names it)")})},
        "/api/sentences/{sentence_id}/notes": {"post": _operation(
            "Add a note", body=s.NOTE, params=sentence, post=True,
            answers={"201": _json({"type": "object", "required": ["notes"],
                                   "properties": {"notes": {"type": "array"}}}, "all notes")})},
        "/api/sentences/{sentence_id}/values": {"get": _operation(
            "The values the editor offers for UPOS, XPOS, FEATS and LEMMA, most frequent first",
            params=sentence, answers={"200": _json(s.VALUES_OUT, "the known values")})},
        "/api/sentences/{sentence_id}/reparse": {"post": _operation(
            "Re-parse the sentence around the annotator's arcs (nothing is stored)", body=s.REPARSE,
            params=sentence, post=True, answers={
                "200": _json(s.REPARSE_OUT, "the constrained ensemble and member trees, the changed words"),
                "409": _json(s.ERROR, "the treebank has no trained models to re-parse with"),
                "422": _json(s.ERROR, "a wrong field, or arcs no tree can hold (`field` names them)")})},
        "/api/treebanks/{treebank_id}/queue": {"get": _operation(
            "The annotation queue", params=[*treebank, *QUEUE_FILTERS, _query("limit", LIMIT)],
            answers={"200": _json({"type": "object", "required": ["items", "counts", "matching"]},
                                  "the first `limit` items, counts and how many match")})},
        "/api/treebanks/{treebank_id}/queue/next": {"get": _operation(
            "The sentence after `after` in the queue",
            params=[*treebank, *QUEUE_FILTERS, _query("after", AFTER)],
            answers={"200": _json({"type": "object", "required": ["id"],
                                   "properties": {"id": {"type": ["integer", "null"]}}},
                                  "its id (null at the end)")})},
        "/api/treebanks/{treebank_id}/labels": {"post": _operation(
            "Add a label to the treebank's inventory (curators; the settings page lists it)",
            body=s.ADD_LABEL, params=treebank, post=True, answers={
                "200": _json(s.ADD_LABEL_OUT, "the label, whether it was new, and every accepted label"),
                "422": _json(s.ERROR, "not a UD relation with at most one subtype")})},
        "/api/treebanks/{treebank_id}/preannotate": {"post": _operation(
            "Start a pre-annotation job; poll /jobs/{job_id}", body=s.PREANNOTATE, params=treebank,
            post=True, answers={"202": _json(job_answer, "the queued job"),
                                "409": _json(s.ERROR, "a round is already queued or running")})},
        "/jobs/{job_id}": {"get": _operation(
            "A background job's state, progress and (plain-language) error", params=[_id("job_id")],
            answers={"200": _json(s.JOB_OUT, "the job")})},
        "/jobs/{job_id}/cancel": {"post": _operation(
            "Cancel a queued job, or ask a running one to stop", params=[_id("job_id")], post=True,
            answers={"200": _json(job_answer, "the job, cancelled or cancelling"),
                     "409": _json(s.ERROR, "the job already ended")})},
        "/jobs/{job_id}/download": {"get": _operation(
            "The CoNLL-U file a finished export job wrote", params=[_id("job_id")],
            answers={"200": {"description": "the file (attachment; `X-Arcvote-Omitted`: sentences "
                                            "without a tree left out)",
                             "content": {"text/plain": {"schema": {"type": "string"}}}},
                     "409": _json(s.ERROR, "not an export job, or not done"),
                     "410": _json(s.ERROR, "the file was replaced by a newer export, or expired")})},
        "/jobs/{job_id}/retry": {"post": _operation(
            "Queue a failed or cancelled job again, as a new job", params=[_id("job_id")], post=True,
            answers={"202": _json(job_answer, "the new job"),
                     "409": _json(s.ERROR, "the job did not fail, or another round is queued or running")})},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "arcvote JSON API", "version": "1",
                 "description": __doc__.split("\n\n", 1)[1].strip() if __doc__ else ""},
        "paths": paths,
        "components": {"securitySchemes": {
            "session": {"type": "apiKey", "in": "cookie", "name": "session"},
            "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRFToken"}}},
        "security": [{"session": []}],
    }


@bp.get("/api/openapi.json")
@public
def openapi() -> Response:
    """The OpenAPI description (public: it holds no data)."""
    return jsonify(document())
