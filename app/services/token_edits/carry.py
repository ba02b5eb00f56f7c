"""Carrying every source's trees and word columns to the new words of a token edit
(:mod:`app.services.token_edits`): a stored tree version as data, joined for merged sentences,
carried with a :class:`~parsing.tokens_edit.WordMap` (scores, provenance, tags), stored as a new
version; and the review marks that survive an edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.models import Sentence, TreeVersion, User
from app.services import DbSession
from app.services.token_edits.records import Rows
from app.services.trees import add_version
from app.services.workspace import set_state
from parsing import tokens_edit as te
from parsing.conllu_io import DEPREL, FEATS, FORM, HEAD, LEMMA, UPOS, XPOS

TREE_ATTRIBUTES = ("heads", "deprels", "scores", "upos", "provenance", "xpos", "lemmas", "feats")

COLUMN_OF = {"upos": UPOS, "xpos": XPOS, "lemmas": LEMMA, "feats": FEATS}
"""A tree version's stored word column → its token column."""

TreeData = dict[str, Any]
"""A tree's ``kind``, ``name`` and :data:`TREE_ATTRIBUTES` (lists over words 1..n, or None)."""


def _tree_data(tree: TreeVersion) -> TreeData:
    return {"kind": tree.kind, "name": tree.name, **{a: _copy(getattr(tree, a)) for a in TREE_ATTRIBUTES}}


def _copy(values: Any) -> Any:
    return None if values is None else list(values)


def _flat_tree(kind: str, name: str, n: int) -> TreeData:
    """A placeholder tree for a source one of two merged sentences lacks: every word headless
    (:func:`~parsing.tokens_edit.as_tree` hangs them from the first)."""
    carried = te.as_tree([-1, *[None] * n], ["", *["dep"] * n])
    return {
        "kind": kind,
        "name": name,
        "heads": carried.heads[1:],
        "deprels": carried.deprels[1:],
        **{a: None for a in TREE_ATTRIBUTES[2:]},
        "provenance": ["parser"] * n if kind == "annotation" else None,
    }


def _tree_for(newest: dict[tuple[str, str], TreeVersion], line: tuple[str, str], n: int) -> TreeData:
    """The sentence's tree of ``line`` (for joining two sentences whose sources differ); for an
    annotation line the sentence lacks, its starting tree (main annotation, ensemble, gold) with
    ``parser`` provenance; else a flat one (no made-up parser or gold arcs)."""
    keys = [line, ("annotation", ""), ("ensemble", ""), ("gold", "")] if line[0] == "annotation" else [line]
    for key in keys:
        if key in newest and len(newest[key].heads) == n:
            found = _tree_data(newest[key])
            if key != line:
                found.update(
                    kind=line[0],
                    name=line[1],
                    scores=None,
                    provenance=["parser"] * n if line[0] == "annotation" else None,
                )
                if line[0] != "annotation" or key[0] != "annotation":
                    found.update(xpos=None, lemmas=None, feats=None, upos=None)
            return found
    return _flat_tree(*line, n)


def _join(first: TreeData, second: TreeData, rows: tuple[Rows, Rows]) -> TreeData:
    """Two sentences' trees as one tree over their joined words (two roots: carry it)."""
    heads, deprels = te.join_trees(
        ([-1, *first["heads"]], ["", *first["deprels"]]), ([-1, *second["heads"]], ["", *second["deprels"]])
    )
    joined: TreeData = {
        "kind": first["kind"],
        "name": first["name"],
        "heads": heads[1:],
        "deprels": deprels[1:],
    }
    for attribute in TREE_ATTRIBUTES[2:]:
        parts = (first[attribute], second[attribute])
        if parts == (None, None):
            joined[attribute] = None
            continue
        filled = []
        for values, words in zip(parts, rows, strict=True):
            if values is None:
                values = (
                    ["human"] * len(words)
                    if attribute == "provenance"
                    else [0.0] * len(words)
                    if attribute == "scores"
                    else [w[COLUMN_OF[attribute]] for w in words]
                )
            filled.extend(values)
        joined[attribute] = filled
    return joined


def _carry(
    data: TreeData, words: te.WordMap, touched: dict[int, list[str]], new_words: Rows
) -> tuple[TreeData, list[int]]:
    """``data`` carried to the new words: the tree, its scores (0 for a changed arc), provenance
    (``parser`` for a changed arc), and word columns (a rewritten token's own values). The gold
    tree is the new token lines' own HEAD and DEPREL (carried the same way by the edit), so the
    imported tree and the gold versions agree."""
    carried = te.carry_tree([-1, *data["heads"]], ["", *data["deprels"]], words)
    if data["kind"] == "gold" and all(w[HEAD].isdigit() for w in new_words):
        heads, labels = [-1, *(int(w[HEAD]) for w in new_words)], ["", *(w[DEPREL] for w in new_words)]
        moved = sorted(
            set(carried.changed) | {w for w in range(1, len(heads)) if heads[w] != carried.heads[w]}
        )
        carried = te.Carried(heads, labels, carried.origin, moved)
    changed = set(carried.changed)
    out: TreeData = {
        "kind": data["kind"],
        "name": data["name"],
        "heads": carried.heads[1:],
        "deprels": carried.deprels[1:],
    }
    scores = data["scores"]
    out["scores"] = (
        None
        if scores is None
        else [
            0.0 if word in changed else value
            for word, value in enumerate(te.carry_column(list(scores), carried, 0.0), start=1)
        ]
    )
    provenance = data["provenance"]
    if provenance is None:
        provenance = ["human"] * len(data["heads"]) if data["kind"] == "annotation" and changed else None
    out["provenance"] = (
        None
        if provenance is None or data["kind"] != "annotation"
        else [
            "parser" if word in changed else value
            for word, value in enumerate(te.carry_column(list(provenance), carried, "parser"), start=1)
        ]
    )
    for attribute, column in COLUMN_OF.items():
        values = data[attribute]
        if values is None:
            out[attribute] = None
            continue
        new = te.carry_column(list(values), carried, "")
        if data["kind"] == "annotation":  # an annotator's value of a word whose token changed: the token's
            new = [
                touched[word][column] if word in touched else value for word, value in enumerate(new, start=1)
            ]
        else:  # a parser's predicted tag: kept; a new word has none yet
            new = [value or "X" for value in new]
        out[attribute] = new
    return out, sorted(changed)


def _touched(words: te.WordMap, old_words: Rows, new_words: Rows) -> dict[int, list[str]]:
    """The new words whose token line the edit rewrote (split parts, merged words), with it."""
    return {
        number: row
        for number, (sources, row) in enumerate(zip(words.sources, new_words, strict=True), start=1)
        if len(sources) != 1 or old_words[sources[0] - 1][FORM] != row[FORM]
    }


def _store(
    session: DbSession, sentence: Sentence, data: TreeData, user: User, based_on: TreeVersion | None
) -> TreeVersion:
    kind, name = data["kind"], data["name"]
    source = "annotation" if kind == "annotation" else name if kind == "parser" else kind
    return add_version(
        session,
        sentence_id=sentence.id,
        source=source,
        heads=data["heads"],
        deprels=data["deprels"],
        user=user,
        scores=data["scores"],
        based_on=based_on,
        provenance=data["provenance"],
        columns={a: data[a] for a in COLUMN_OF},
        branch=name if kind == "annotation" else "",
    )


def _label(tree: TreeVersion) -> str:
    if tree.kind == "annotation":
        return f"{tree.name}'s branch v{tree.version}" if tree.name else f"latest v{tree.version}"
    return f"{tree.source} v{tree.version}"


def _carry_state(
    session: DbSession, sentence: Sentence, user: User, reviewed: set[int], status: str | None
) -> None:
    """The review marks after an edit: ``reviewed`` (new numbering); a reviewed sentence that lost
    some goes back in progress."""
    if status is None and not reviewed:
        return
    marks = sorted(w for w in reviewed if 1 <= w <= sentence.n_words)
    if status == "reviewed" and len(marks) < sentence.n_words:
        status = "in_progress"
    set_state(session, sentence, user=user, reviewed_words=marks, status=status or "todo")


def _carried_marks(snapshot: dict[str, Any], words: te.WordMap, changed: Sequence[int]) -> set[int]:
    old = set(snapshot["reviewed"])
    return {
        number
        for number, sources in enumerate(words.sources, start=1)
        if sources and all(s in old for s in sources) and number not in changed
    }
