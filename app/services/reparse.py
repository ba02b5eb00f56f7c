"""Re-parse a sentence around the arcs an annotator has set or confirmed (issue 12).

The editor sends every arc the human has set or confirmed as a constraint; the members of
the treebank's newest trained round parse the sentence under them
(:meth:`parsing.pipeline.ModelBundle.parse_constrained`) and the round's ensemble combines
their trees with the forced arcs kept. The reply has the shape the editor already reads for
a sentence (``members`` and ``ensemble`` trees with ``heads``, ``deprels``, ``scores`` over
words 1..n; the ensemble's scores are the vote shares, weighted as the stored ones) and the
words whose arc changed as a consequence (``changed``: free words whose head or label
differs from the tree shown before).

Input is validated field by field (the view first checks the body's shape against
:data:`app.views.api_schemas.REPARSE`): :class:`ReparseError` carries the field and the HTTP
status (422, the API's status for a wrong field); :class:`NoModels` says the treebank has no
trained round to re-parse with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import select
from threadpoolctl import ThreadpoolController

from app.jobs.model_files import ModelFilesChanged
from app.models import Sentence, Treebank
from app.parser_models import TrainingRound
from app.services import DbSession
from app.services.model_cache import ModelCache
from app.services.parsing_adapter import load_sentences, parse_of_tree, tree_of_parse
from app.services.preannotate import ensemble_confidence
from app.services.tag_checks import require_tags
from app.services.validation import unknown_label
from app.services.workspace import newest_trees
from parsing.constraints import Constraints
from parsing.persist import ModelFormatError
from parsing.pipeline import MANIFEST
from parsing.types import Parse

_THREADPOOLS = ThreadpoolController()
"""Found once: ``threadpool_limits`` looks for the BLAS libraries on every call (~5 ms)."""

MAX_CONSTRAINTS = 2000
"""More constraints than this in one request is not an annotator's sentence."""


class NoModels(LookupError):
    """The treebank has no trained round (with an ensemble) whose models are on disk."""


class ReparseError(ValueError):
    """Bad re-parse input: ``field`` names it; ``status`` 422 (a wrong field, as
    :mod:`app.views.api_input` answers them)."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.field = field
        self.status = status


def reparse_round(session: DbSession, treebank: Treebank) -> TrainingRound | None:
    """The treebank's newest finished round whose models (with an ensemble) are on disk."""
    rounds = session.scalars(select(TrainingRound).where(
        TrainingRound.treebank_id == treebank.id, TrainingRound.finished_at.is_not(None))
        .order_by(TrainingRound.number.desc()))
    return next((r for r in rounds if (Path(r.model_dir) / MANIFEST).is_file()), None)


def read_constraints(raw: Any, n: int, labels: Sequence[str]) -> Constraints:
    """``[{"id": int, "head": int, "deprel": str | null}, ...]`` as :class:`Constraints` of an
    ``n``-word sentence; ``labels`` are the labels the treebank allows.

    Raises:
        ReparseError: a wrong type, a repeated word, an unknown word or label, a root label
            off ROOT (or a ROOT arc with another label), a cycle or two words under ROOT.
    """
    if not isinstance(raw, list):
        raise ReparseError("constraints", "constraints must be a list of {id, head, deprel}")
    if len(raw) > MAX_CONSTRAINTS:
        raise ReparseError("constraints", f"at most {MAX_CONSTRAINTS} constraints")
    heads: dict[int, int] = {}
    forced: dict[int, str] = {}
    known = set(labels)
    for i, item in enumerate(raw):
        where = f"constraints[{i}]"
        if not isinstance(item, dict):
            raise ReparseError(where, f"{where} must be an object {{id, head, deprel}}")
        word, head, label = item.get("id"), item.get("head"), item.get("deprel")
        for name, value in (("id", word), ("head", head)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise ReparseError(f"{where}.{name}", f"{where}.{name} must be an integer")
        assert isinstance(word, int) and isinstance(head, int)
        if label is not None and not isinstance(label, str):
            raise ReparseError(f"{where}.deprel", f"{where}.deprel must be a string or null")
        if word in heads:
            raise ReparseError(f"{where}.id", f"word {word} is constrained twice")
        if not 1 <= word <= n:
            raise ReparseError(f"{where}.id", f"word {word} is not a word of this {n}-word sentence")
        if not 0 <= head <= n or head == word:
            raise ReparseError(f"{where}.head", f"word {word} cannot attach to {head}")
        if label is not None and label.strip():
            label = label.strip()
            if label not in known:
                raise ReparseError(f"{where}.deprel", unknown_label(label, word))
            if (label == "root") != (head == 0):
                raise ReparseError(f"{where}.deprel",
                                   f"word {word}: only the word attached to ROOT is labelled root")
            forced[word] = label
        heads[word] = head
    constraints = Constraints(heads, forced)
    try:
        constraints.validate(n)
    except ValueError as error:
        raise ReparseError("constraints", f"these arcs cannot be in one tree: {error}") from None
    return constraints


def read_previous(raw: Any, n: int) -> Parse | None:
    """The tree the editor showed before (``{"heads", "deprels"}`` over words 1..n), or None."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ReparseError("previous", "previous must be {heads, deprels} or null")
    heads, deprels = raw.get("heads"), raw.get("deprels")
    if not isinstance(heads, list) or len(heads) != n or not all(
            isinstance(h, int) and not isinstance(h, bool) and 0 <= h <= n for h in heads):
        raise ReparseError("previous.heads", f"previous.heads must be {n} integers in 0..{n}")
    if not isinstance(deprels, list) or len(deprels) != n or not all(isinstance(d, str) for d in deprels):
        raise ReparseError("previous.deprels", f"previous.deprels must be {n} strings")
    return parse_of_tree(heads, deprels)


def reparse(
    session: DbSession, sentence: Sentence, constraints: Constraints, cache: ModelCache,
    previous: Parse | None = None,
) -> dict[str, Any]:
    """The constrained ensemble tree of ``sentence`` (module docstring for the reply's shape).

    ``previous`` is the tree the editor showed (default: the stored ensemble tree): free words
    whose head did not move keep its labels, and ``changed`` is measured against it.

    Raises:
        NoModels: no trained round to parse with.
        ReparseError: (422) the round needs UPOS the sentence lacks.
    """
    treebank = sentence.document.treebank
    round_ = reparse_round(session, treebank)
    if round_ is None:
        raise NoModels(f"treebank {treebank.name} has no trained models yet: pre-annotate it first")
    try:
        require_tags(session, [sentence.id], round_.tags)
    except ValueError as error:
        raise ReparseError("constraints", str(error)) from None
    try:
        cached = cache.get(round_.model_dir, round_.checksums)
    except (ModelFilesChanged, ModelFormatError) as error:  # changed, or pickled by an old version
        raise NoModels(f"round {round_.number} of {treebank.name}: {error}") from None
    bundle = cached.bundle
    if bundle.ensemble is None:
        raise NoModels(f"round {round_.number} of {treebank.name} has no ensemble to re-parse with")
    words = load_sentences(session, [sentence.id])
    if previous is None:
        shown = newest_trees(session, sentence.id).get(("ensemble", ""))
        previous = parse_of_tree(shown.heads, shown.deprels) if shown is not None else None
    sentence_key = (sentence.id, tuple(words[0].forms), tuple(words[0].upos))  # re-tagged: parsed again
    with cached.lock, _THREADPOOLS.limit(limits=1, user_api="blas"):  # small matrices: see parsing.cli
        unconstrained = cached.unconstrained(sentence_key, words[0])
        by_name, combined = bundle.parse_constrained(
            words, [constraints], previous=[previous] if previous is not None else None,
            unconstrained=unconstrained, start=cached.earlier(sentence_key, constraints))
        cached.remember(sentence_key, constraints, by_name)
    names = [name for name in round_.parsers if name in by_name]
    weights = dict(zip(round_.parsers, round_.weights or [1.0] * len(round_.parsers), strict=False))
    parses = [by_name[name][0] for name in names]
    tree = _root_labels(combined[0], parses)
    confidence = ensemble_confidence(parses, [weights.get(name, 1.0) for name in names], tree)
    heads, deprels, _ = tree_of_parse(tree)
    return {
        "round": round_.number,
        "ensemble": {"heads": heads, "deprels": deprels,
                     "scores": [round(float(token.vote_share), 6) for token in confidence.tokens]},
        "members": [_member(name, parse) for name, parse in zip(names, parses, strict=True)],
        "changed": _changed(previous, tree, constraints),
        "constrained": sorted(constraints.heads),
    }


def _member(name: str, parse: Parse) -> dict[str, Any]:
    heads, deprels, scores = tree_of_parse(parse)
    return {"name": name, "source": name, "kind": "parser", "heads": heads, "deprels": deprels,
            "scores": scores}


def _root_labels(tree: Parse, parses: Sequence[Parse]) -> Parse:
    """``tree`` with ``root`` exactly on the word under ROOT: a word moved off ROOT gets the
    label most members give it (else ``dep``), as the editor's ``suggestLabel`` does."""
    labels = list(tree.deprels)
    for word in range(1, len(labels)):
        if tree.heads[word] == 0:
            labels[word] = "root"
        elif labels[word] == "root":
            votes = Counter(p.deprels[word] for p in parses if p.deprels[word] not in ("root", "_", ""))
            labels[word] = votes.most_common(1)[0][0] if votes else "dep"
    return replace(tree, deprels=labels)


def _changed(previous: Parse | None, tree: Parse, constraints: Constraints) -> list[int]:
    """Free words whose head or label differs from ``previous`` (all free words without one)."""
    n = len(tree.heads) - 1
    free = [w for w in range(1, n + 1) if w not in constraints.heads]
    if previous is None:
        return free
    return [w for w in free if int(tree.heads[w]) != int(previous.heads[w])
            or tree.deprels[w] != previous.deprels[w]]


def treebank_can_reparse(session: DbSession, treebank: Treebank) -> bool:
    """Whether the editor should offer re-parsing: a trained round is on disk."""
    return reparse_round(session, treebank) is not None

