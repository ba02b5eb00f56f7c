"""Agreement and adjudication pages (curators and owners).

* ``/treebanks/<id>/adjudication``: agreement per annotator pair and for the treebank, and the
  doubly annotated sentences (waiting, ready, adjudicated);
* ``/workspace/sentences/<id>/adjudicate``: the annotators' and the ensemble's trees side by
  side, one row per word with the differing arcs marked; the curator picks an arc per word (or
  types another) and saves the adjudicated tree (a plain form post, no script needed). The tree
  is checked as the editor checks a save (:func:`~app.services.validation.validate_tree`
  refuses it; the UD validator's warnings, :func:`~app.services.ud_checks.tree_warnings`, are
  listed): a tree the validator warns about on a word (what the chosen arcs can fix; not, say, a
  missing ``# text``) is saved as reviewed only once the curator ticks ``accept_warnings``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from app.extensions import db
from app.models import Sentence, Treebank
from app.services import adjudication as service
from app.services.settings import label_inventory
from app.services.ud_checks import tree_warnings
from app.services.workspace import Conflict, InvalidTree, newest_trees, word_columns
from app.views.access import requires
from app.views.errors import as_sentence

bp = Blueprint("adjudication", __name__)


@bp.get("/treebanks/<int:treebank_id>/adjudication")
@requires("curate")
def index(treebank_id: int) -> str:
    """Agreement tables and the list of doubly annotated sentences."""
    treebank = db.get_or_404(Treebank, treebank_id)
    pairs, total = service.treebank_agreement(db.session, treebank)
    return render_template("adjudication/index.html", treebank=treebank, pairs=pairs, total=total,
                           sentences=service.double_sentences(db.session, treebank))


def _page(sentence: Sentence, *, errors: list[str] | None = None, picked: MultiDict[str, str] | None = None,
          status: int = 200, warnings: list[dict[str, Any]] | None = None) -> tuple[str, int]:
    """The adjudication page; ``warnings``: the UD validator's on the tree just refused (else
    those of the adjudicated tree, if any)."""
    trees = newest_trees(db.session, sentence.id)
    adjudicated = trees.get(("annotation", ""))
    sources = service.candidates(db.session, sentence)
    forms, _, shown = word_columns(db.session, sentence.id, trees.get(("ensemble", "")))
    words = [{"id": i, "form": form, "upos": shown["upos"][i - 1]} for i, form in enumerate(forms, start=1)]
    rows = service.arc_choices(sources, len(forms), adjudicated)
    differs = [row["word"] for row in rows if row["differs"]]
    drawings = [{"name": name, "differs": differs, "words": [
        {**word, "head": head, "deprel": deprel}
        for word, head, deprel in zip(words, tree.heads, tree.deprels, strict=True)]}
        for name, tree in sources]
    treebank = sentence.document.treebank
    if warnings is None:
        warnings = tree_warnings(db.session, sentence, adjudicated) if adjudicated else []
    return render_template(
        "adjudication/sentence.html", sentence=sentence, treebank=treebank, words=words, rows=rows,
        sources=[name for name, _ in sources], drawings=drawings, labels=label_inventory(treebank),
        version=adjudicated.version if adjudicated else 0, adjudicated=adjudicated, errors=errors or [],
        picked=picked, warnings=warnings, refused=status == 422 and bool(warnings)), status


@bp.get("/workspace/sentences/<int:sentence_id>/adjudicate")
@requires("curate")
def sentence_page(sentence_id: int) -> tuple[str, int]:
    """The versions side by side and the per-arc choice."""
    return _page(db.get_or_404(Sentence, sentence_id))


def read_choices(form: MultiDict[str, str], n: int) -> tuple[list[Any], list[Any], list[str]]:
    """``(heads, deprels, errors)`` from the form: per word ``arc-W`` is ``HEAD:LABEL`` (a
    picked arc) or ``other`` with ``head-W`` and ``deprel-W`` typed in."""
    heads: list[Any] = []
    deprels: list[Any] = []
    errors = []
    for w in range(1, n + 1):
        choice = form.get(f"arc-{w}", "")
        head_text, _, label = choice.partition(":") if choice != "other" else (
            form.get(f"head-{w}", "").strip(), ":", form.get(f"deprel-{w}", "").strip())
        if not (head_text.isascii() and head_text.isdigit() and len(head_text) < 7) or not label:
            errors.append(f"word {w}: pick an arc, or give a head number and a label (field arc-{w})")
            heads.append(None)
            deprels.append(None)
            continue
        heads.append(int(head_text))
        deprels.append(label)
    return heads, deprels, errors


@bp.post("/workspace/sentences/<int:sentence_id>/adjudicate")
@requires("curate")
def save(sentence_id: int) -> Response | tuple[str, int]:
    """Save the adjudicated tree (422: incomplete or invalid, or the UD validator warns and the
    curator has not ticked ``accept_warnings``; 409: someone adjudicated first)."""
    sentence = db.get_or_404(Sentence, sentence_id)
    heads, deprels, errors = read_choices(request.form, sentence.n_words)
    expected = request.form.get("expected_version", "")
    if not (expected.isascii() and expected.isdigit() and len(expected) < 9):
        errors.append("expected_version must be a version number")
    if errors:
        return _page(sentence, errors=errors, picked=request.form, status=422)
    try:
        tree = service.adjudicate(db.session, sentence, heads=heads, deprels=deprels,
                                  expected_version=int(expected), user=current_user)
    except InvalidTree as invalid:
        db.session.rollback()
        return _page(sentence, errors=[as_sentence(e.message) for e in invalid.errors], picked=request.form,
                     status=422)
    except Conflict as conflict:
        db.session.rollback()
        message = as_sentence(f"not saved: {conflict}; here is the newest, choose again")
        return _page(sentence, errors=[message], status=409)
    warnings = tree_warnings(db.session, sentence, tree)
    if any(w["word"] for w in warnings) and request.form.get("accept_warnings") != "yes":
        db.session.rollback()
        return _page(sentence, errors=[_warned(len(warnings))], picked=request.form, status=422,
                     warnings=warnings)
    db.session.commit()
    treebank = sentence.document.treebank
    warned = f" The UD validator gave {_plural(len(warnings), 'warning')} (accepted)." if warnings else ""
    flash(f"Adjudicated {sentence.sent_id or sentence.id}: version {tree.version}, reviewed.{warned}",
          "success")
    waiting = (s.id for s in service.double_sentences(db.session, treebank) if s.ready and not s.adjudicated)
    following = next(waiting, None)
    if following is not None:
        return redirect(url_for("adjudication.sentence_page", sentence_id=following))
    return redirect(url_for("adjudication.index", treebank_id=treebank.id))


def _plural(n: int, noun: str) -> str:
    """``1 warning``, ``2 warnings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _warned(n: int) -> str:
    """The refusal shown when the UD validator warns about the chosen tree."""
    return (f"Not saved: the UD validator gives {_plural(n, 'warning')} on this tree (listed below). "
            "Correct the arcs, or tick “Save despite the warnings” to save it as reviewed anyway.")
