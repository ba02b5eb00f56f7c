"""``POST /api/sentences/<id>/tokens``: token and sentence split and merge from the editor's
Tokens menu (issue #32; :mod:`app.services.token_edits` says what each operation keeps).

The body names the ``operation`` and its arguments (:data:`app.views.api_schemas.TOKEN_EDIT`).
Answers: 201 ``{edit, sentence_id, new_sentence_id}`` (the editor reloads the sentence) · 422
``{error, field}`` a missing or wrong argument · 403 who may not write the sentence's tree (the
same rule as saving it; a blind annotator may not re-tokenize; merging needs the right on both
sentences) · 409 ``{error}`` the edit cannot be made now (an undo of an edit that is not the
newest) · 404 no such sentence or edit.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, jsonify
from flask_login import current_user

from app.extensions import db
from app.models import Sentence, TokenEdit
from app.services import token_edits as edits
from app.views import api_schemas as schemas
from app.views.access import requires
from app.views.api_input import InputError, json_body
from parsing.tokens_edit import TokenEditError

bp = Blueprint("tokens_api", __name__, url_prefix="/api")

REQUIRED = {
    "split-word": ("word", "at"),
    "merge-words": ("word",),
    "add-multiword": ("first", "last", "form"),
    "remove-multiword": ("first",),
    "split-sentence": ("after",),
    "merge-sentence": (),
    "undo": ("edit_id",),
}
"""The arguments each operation needs."""


@bp.post("/sentences/<int:sentence_id>/tokens")
@requires("annotate")
def edit_tokens(sentence_id: int) -> tuple[Response, int]:
    """Split or merge words or sentences, add or remove a multiword token, or undo the newest edit."""
    target = db.get_or_404(Sentence, sentence_id)
    body = json_body(schemas.TOKEN_EDIT)
    operation = body["operation"]
    for name in REQUIRED[operation]:
        if name not in body:
            raise InputError(name, f"is required to {operation.replace('-', ' ')}")
    if (why := edits.refusal(db.session, current_user, target)) is not None:
        abort(403, why)
    following = edits.next_sentence(db.session, target) if operation == "merge-sentence" else None
    if following is not None and (why := edits.refusal(db.session, current_user, following)) is not None:
        abort(403, f"the next sentence: {why}")
    try:
        done = _apply(target, operation, body)
    except TokenEditError as error:
        db.session.rollback()
        return jsonify(error=str(error), field=error.field), 422
    except edits.EditConflict as error:
        db.session.rollback()
        return jsonify(error=str(error)), 409
    except LookupError as error:
        db.session.rollback()
        return jsonify(error=str(error)), 404
    db.session.commit()
    return jsonify(
        edit=edits.edit_dict(done), sentence_id=target.id, new_sentence_id=done.params.get("new_sentence_id")
    ), 201


def _apply(target: Sentence, operation: str, body: dict[str, object]) -> TokenEdit:
    session, user = db.session, current_user
    number = {key: int(value) for key, value in body.items() if isinstance(value, int)}
    if operation == "split-word":
        return edits.split_word(session, target, word=number["word"], at=number["at"], user=user)
    if operation == "merge-words":
        return edits.merge_words(session, target, word=number["word"], user=user)
    if operation == "add-multiword":
        return edits.add_multiword(
            session,
            target,
            first=number["first"],
            last=number["last"],
            form=str(body["form"]).strip(),
            user=user,
        )
    if operation == "remove-multiword":
        return edits.remove_multiword(session, target, first=number["first"], user=user)
    if operation == "split-sentence":
        return edits.split_sentence(session, target, after=number["after"], user=user)
    if operation == "merge-sentence":
        return edits.merge_sentence(session, target, user=user)
    return edits.undo_edit(session, target, edit_id=number["edit_id"], user=user)
