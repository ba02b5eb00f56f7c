"""The word columns an annotator edits besides the tree: UPOS, XPOS, LEMMA and FEATS.

A *columns* value is ``{"upos": [...], "xpos": [...], "lemma": [...], "feats": [...]}``, one
string per word 1..n. An ``annotation`` tree version stores a column (``TreeVersion.upos``,
``xpos``, ``lemmas``, ``feats``) only when some word's value differs from the imported tokens'
column; ``None`` means "as imported". Other kinds never carry edited columns: a parser's or
the ensemble's ``upos`` (and, from a self-tagging member, ``xpos``, ``lemmas`` and ``feats``:
:func:`predicted_attributes`) are what it predicted, shown for words imported without tags
(:func:`completed_columns`).

Rules for a value that differs from the word's imported value (an unchanged value is accepted
as imported, e.g. ``_`` in a pool of raw text, or a lemma with a space from a treebank that has
them):

* UPOS: one of the 17 universal tags (:data:`UD_UPOS`).
* XPOS: ``_`` or a non-empty string without whitespace.
* LEMMA: a non-empty string without whitespace. UD allows spaces in LEMMA only for the words
  of the languages listed in the validator's ``tospace`` data; arcvote keeps it simple and
  refuses them (the validator would flag the rest anyway).
* FEATS: ``_`` or ``Name=Value(,Value)*`` pairs joined by ``|`` (UD's character classes),
  sorted by name case-insensitively, each name once, values sorted and unique.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from app.models import Document, Sentence, Token, TreeVersion
from app.services import DbSession
from app.services.validation import TreeError
from parsing.word_columns import WordColumns

if TYPE_CHECKING:
    from app.services.sources import StoredTree

COLUMNS = ("upos", "xpos", "lemma", "feats")
"""The editable word columns, in CoNLL-U order."""

TITLES = {"upos": "UPOS", "xpos": "XPOS", "lemma": "LEMMA", "feats": "FEATS"}

STORED = {"upos": "upos", "xpos": "xpos", "lemma": "lemmas", "feats": "feats"}
"""Column → the :class:`~app.models.TreeVersion` attribute that stores it."""

UD_UPOS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
           "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")
"""The 17 universal part-of-speech tags of UD v2."""

KNOWN_LIMIT = 200
"""At most this many XPOS tags and Feature=Value pairs are offered (most frequent first)."""

_VALUE = r"[A-Z0-9][A-Za-z0-9]*"
_FEATURE = re.compile(rf"([A-Z][A-Za-z0-9]*(?:\[[a-z0-9]+\])?)=({_VALUE}(?:,{_VALUE})*)")
_SPACE = re.compile(r"\s")

Columns = dict[str, list[str]]


def feats_problem(value: str) -> str | None:
    """Why ``value`` is not a valid FEATS string (``None`` when it is)."""
    if value == "_":
        return None
    names: list[str] = []
    for pair in value.split("|"):
        match = _FEATURE.fullmatch(pair)
        if match is None:
            return f"{pair!r} is not Name=Value (a name [A-Z][A-Za-z0-9]*, values [A-Z0-9][A-Za-z0-9]*)"
        values = match.group(2).split(",")
        lowered = [v.lower() for v in values]
        if len(set(values)) != len(values) or lowered != sorted(lowered):
            return f"the values of {match.group(1)} must be sorted and unique"
        names.append(match.group(1))
    if len(set(names)) != len(names):
        return "each feature may appear once"
    if [n.lower() for n in names] != sorted(n.lower() for n in names):
        return "features must be sorted by name (case-insensitive)"
    return None


def value_problem(column: str, value: str) -> str | None:
    """Why ``value`` cannot be the word's ``column`` (``None`` when it can)."""
    if column == "upos":
        return None if value in UD_UPOS else "must be one of the 17 UD tags"
    if column == "feats":
        return feats_problem(value)
    if not value or _SPACE.search(value):
        return "must be non-empty without spaces or tabs"
    return None


def predicted_attributes(predicted: WordColumns, upos: Sequence[str] | None) -> dict[str, list[str] | None]:
    """The ``xpos``, ``lemmas`` and ``feats`` a parser or ensemble version keeps of a self-tagging
    member's ``predicted`` columns (:func:`parsing.word_columns.member_columns`, words 1..n), for a
    version whose UPOS is ``upos`` (words 1..n; None: the member's own).

    A value the editor would refuse (:func:`value_problem`, e.g. a lemma with a space) becomes
    ``_``; so do XPOS and FEATS where the member tagged the word other than the version does (the
    ensemble's UPOS may be the tagger's, :mod:`parsing.tag_source`): they describe the member's
    tag, not that one. The lemma is kept. A column the member did not predict is None.

    Examples:
        >>> predicted_attributes(WordColumns(upos=["NOUN", "VERB", "X"], xpos=["NN", "VB", "FW"],
        ...                                  lemmas=["dog", "bark", "a b"],
        ...                                  feats=["Number=Sing", "Tense=Pres", "_"]), ["NOUN", "NOUN", "X"])
        {'xpos': ['NN', '_', 'FW'], 'lemmas': ['dog', 'bark', '_'], 'feats': ['Number=Sing', '_', '_']}
    """
    own = predicted.upos
    same_tag = [own is None or upos is None or own[i] == upos[i] for i in range(len(upos or own or []))]
    kept: dict[str, list[str] | None] = {}
    for column, attribute in (("xpos", "xpos"), ("lemma", "lemmas"), ("feats", "feats")):
        values = getattr(predicted, attribute)
        kept[attribute] = None if values is None else [
            value if value_problem(column, value) is None and (column == "lemma" or same_tag[i]) else "_"
            for i, value in enumerate(values)]
    return kept


def completed_columns(imported: Columns, predicted: Mapping[str, Sequence[Any] | None]) -> Columns:
    """The columns as the editor shows a word nobody edited: ``imported``, except that a word
    imported without UPOS (raw text: every column ``_``) takes ``predicted[column]`` (values over
    words 1..n, None: not predicted) in each column it has none, where the editor would accept
    the value. A tagged word's ``_`` (no XPOS, no features) is the treebank's answer and stays.

    Examples:
        >>> raw = {"upos": ["_", "NOUN"], "xpos": ["_", "_"], "lemma": ["_", "_"], "feats": ["_", "_"]}
        >>> guessed = {"upos": ["VERB", "NOUN"], "lemma": ["run", "dog"], "feats": ["Tense=Past", "x"]}
        >>> completed_columns(raw, guessed)
        {'upos': ['VERB', 'NOUN'], 'xpos': ['_', '_'], 'lemma': ['run', '_'], 'feats': ['Tense=Past', '_']}
    """
    untagged = [tag == "_" for tag in imported["upos"]]
    shown: Columns = {}
    for column, values in imported.items():
        guesses = predicted.get(column)
        if guesses is None or len(guesses) != len(values) or not any(untagged):
            shown[column] = list(values)
            continue
        shown[column] = [str(guess) if bare and own == "_" and guess not in (None, "_")
                         and value_problem(column, str(guess)) is None else own
                         for own, guess, bare in zip(values, guesses, untagged, strict=True)]
    return shown


def stored_columns(tree: TreeVersion) -> dict[str, list[Any] | None]:
    """The columns a tree version stores (``None`` = not stored)."""
    return {column: getattr(tree, attribute) for column, attribute in STORED.items()}


def stored_attributes(tree: TreeVersion | StoredTree) -> dict[str, list[Any] | None]:
    """An annotation's stored columns by ``TreeVersion`` attribute (to copy them into a new
    version); nothing for other kinds, whose ``upos`` are predicted tags, not edits."""
    if tree.kind != "annotation":
        return {}
    return {attribute: getattr(tree, attribute) for attribute in STORED.values()}


def imported_columns(session: DbSession, sentence_id: int) -> tuple[list[str], Columns]:
    """``(forms, columns)`` of the sentence's words as imported."""
    rows = session.execute(
        select(Token.form, Token.upos, Token.xpos, Token.lemma, Token.feats)
        .where(Token.sentence_id == sentence_id, Token.word.is_not(None)).order_by(Token.position)
    ).all()
    return [row.form for row in rows], {column: [getattr(row, column) for row in rows] for column in COLUMNS}


def version_columns(tree: TreeVersion | None, base: Columns) -> Columns:
    """The columns of a version as the editor shows them: an annotation's stored columns, else
    ``base`` (the imported columns, UPOS completed with the parsers' tags)."""
    stored = stored_columns(tree) if tree is not None and tree.kind == "annotation" else {}
    n = len(base["upos"])
    return {column: list(values) if (values := stored.get(column)) is not None and len(values) == n
            else list(base[column]) for column in COLUMNS}


def resolve_columns(
    given: Any, *, forms: Sequence[str], imported: Columns, carried: Columns
) -> tuple[Columns, list[TreeError]]:
    """The columns to save: ``given`` (the request's partial ``{column: values}``, or ``None``)
    over ``carried`` (those of the version being edited), and every problem with them."""
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        return carried, [TreeError(0, "columns", "columns must be an object of lists", field="columns")]
    n = len(forms)
    expected = ", ".join(COLUMNS)
    errors = [TreeError(0, "columns", f"unknown column {key!r} (expected {expected})", field=str(key))
              for key in given if key not in COLUMNS]
    final: Columns = {}
    for column in COLUMNS:
        values = given.get(column, carried[column])
        if not isinstance(values, list) or len(values) != n or not all(isinstance(v, str) for v in values):
            errors.append(TreeError(0, "columns", f"columns.{column} must be a list of {n} strings",
                                    field=column))
            continue
        final[column] = values
        for word, (value, before) in enumerate(zip(values, imported[column], strict=True), start=1):
            problem = None if value == before else value_problem(column, value)
            if problem:
                errors.append(TreeError(word, column, f"word {word} ({forms[word - 1]}): {TITLES[column]} "
                                        f"{value!r} {problem}", field=column))
    return final, errors


def to_store(final: Columns, imported: Columns) -> dict[str, list[str] | None]:
    """``TreeVersion`` attribute → the list to store, ``None`` for a column as imported."""
    return {STORED[column]: None if final[column] == imported[column] else list(final[column])
            for column in COLUMNS}


def column_changes(before: Columns, after: Columns, forms: Sequence[str]) -> list[dict[str, Any]]:
    """``[{word, form, column, from, to}]`` for every value that differs, in word order."""
    return [
        {"word": word, "form": forms[word - 1], "column": column, "from": old, "to": new}
        for word in range(1, len(forms) + 1) for column in COLUMNS
        if (old := before[column][word - 1]) != (new := after[column][word - 1])
    ]


def known_values(session: DbSession, treebank_id: int, forms: Sequence[str],
                 inventory: Sequence[str] = ()) -> dict[str, Any]:
    """What the editor offers, the treebank's most frequent first: ``upos`` (all 17 tags),
    ``xpos``, ``feats`` (Feature=Value pairs, then those of the feature ``inventory`` not used
    yet) and ``lemmas`` (form → its lemmas)."""
    words = (select(Token).join(Sentence).join(Document)
             .where(Document.treebank_id == treebank_id, Token.word.is_not(None)).subquery())

    def counts(column: Any) -> list[tuple[str, int]]:
        rows = session.execute(select(column, func.count()).group_by(column).order_by(func.count().desc()))
        return [(str(value), int(count)) for value, count in rows if value not in (None, "", "_")]

    upos = [tag for tag, _ in counts(words.c.upos) if tag in UD_UPOS]
    pairs: Counter[str] = Counter()
    for feats, count in counts(words.c.feats):
        for pair in feats.split("|"):
            pairs[pair] += count
    lemmas: dict[str, list[str]] = {}
    if forms:
        rows = session.execute(select(words.c.form, words.c.lemma, func.count())
                               .where(words.c.form.in_(sorted(set(forms))), words.c.lemma != "_")
                               .group_by(words.c.form, words.c.lemma).order_by(func.count().desc()))
        for form, lemma, _ in rows:
            lemmas.setdefault(form, []).append(lemma)
    return {
        "upos": upos + [tag for tag in UD_UPOS if tag not in upos],
        "xpos": [tag for tag, _ in counts(words.c.xpos)][:KNOWN_LIMIT],
        "feats": list(dict.fromkeys([*(pair for pair, _ in pairs.most_common(KNOWN_LIMIT)), *inventory])),
        "lemmas": lemmas,
    }
