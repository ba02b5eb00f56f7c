"""The token columns a member predicted beside its tree (UPOS, XPOS, FEATS, LEMMA), in a form a
caller can store: one :class:`WordColumns` per sentence, lists over words ``1..n`` (ROOT left
out), JSON-ready.

A self-tagging member (``biaffine``: :func:`parsing.members.is_self_tagging`) predicts all four
(``Parse.extras["upos"]``, ``["xpos"]``, ``["feats"]``, ``["lemmas"]``: ``n+1`` strings each, ROOT
first); with predicted tags ``Parse.upos`` holds the tags it parsed with. Other members predict
none; with predicted tags the pipeline writes the UPOS they parsed with (the tagger's, or the
self-tagging member's: :mod:`parsing.tag_source`) into their ``Parse.upos``.

The web app stores parses as tree versions (``heads``, ``deprels``, ``scores``, ``upos``); a
version also has ``xpos``, ``lemmas`` and ``feats`` lists, so a round that pre-annotates raw text
could keep the member's predictions there (:meth:`WordColumns.to_json`'s keys are those names).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parsing.members import is_self_tagging
from parsing.types import Parse

COLUMNS: tuple[str, ...] = ("upos", "xpos", "feats", "lemmas")
"""The columns, in CoNLL-U order (LEMMA is the ``lemmas`` list), as :meth:`WordColumns.to_json` names them."""


@dataclass(frozen=True)
class WordColumns:
    """Predicted columns of one sentence, each a list over words ``1..n`` or None (not predicted)."""

    upos: list[str] | None = None
    xpos: list[str] | None = None
    feats: list[str] | None = None
    lemmas: list[str] | None = None

    def __bool__(self) -> bool:
        """True when any column was predicted."""
        return any(getattr(self, name) is not None for name in COLUMNS)

    def to_json(self) -> dict[str, list[str]]:
        """The predicted columns only, by name (``{"upos": [...], "lemmas": [...]}``)."""
        return {name: list(values) for name in COLUMNS if (values := getattr(self, name)) is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WordColumns:
        """The columns :meth:`to_json` wrote.

        Raises:
            ValueError: an unknown column, or one that is not a list of strings, or columns of
                different lengths.
        """
        unknown = sorted(set(data) - set(COLUMNS))
        if unknown:
            raise ValueError(f"unknown column(s) {', '.join(unknown)}; known: {', '.join(COLUMNS)}")
        for name, values in data.items():
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"column {name} must be a list of strings")
        if len({len(values) for values in data.values()}) > 1:
            raise ValueError("the columns have different lengths")
        return cls(**{name: list(values) for name, values in data.items()})


def _words(values: object, size: int, name: str) -> list[str] | None:
    """``values`` (``n+1`` strings, ROOT's first) without ROOT's, or None when absent.

    Raises:
        ValueError: a list of another length.
    """
    if values is None:
        return None
    if not isinstance(values, list | tuple) or len(values) != size + 1:
        count = len(values) if isinstance(values, list | tuple) else "no"
        raise ValueError(f"the parse's {name} has {count} entries for {size} words (+ ROOT)")
    return [str(value) for value in values[1:]]


def predicted_columns(parse: Parse) -> WordColumns:
    """What ``parse``'s member predicted beside the tree: UPOS (its own, ``extras["upos"]``, else
    ``Parse.upos``, the tags it parsed with), XPOS, FEATS and lemmas, over words ``1..n``.

    Raises:
        ValueError: a column whose length does not fit the tree.

    Examples:
        >>> import numpy as np
        >>> parse = Parse(np.array([-1, 0]), ["", "root"], upos=["<ROOT>", "NOUN"],
        ...               extras={"xpos": ["<ROOT>", "NN"], "lemmas": ["<ROOT>", "cat"]})
        >>> predicted_columns(parse).to_json()
        {'upos': ['NOUN'], 'xpos': ['NN'], 'lemmas': ['cat']}
    """
    size = len(parse)
    upos = parse.extras.get("upos", parse.upos)
    return WordColumns(upos=_words(upos, size, "upos"),
                       xpos=_words(parse.extras.get("xpos"), size, "xpos"),
                       feats=_words(parse.extras.get("feats"), size, "feats"),
                       lemmas=_words(parse.extras.get("lemmas"), size, "lemmas"))


def column_source(names: Sequence[str]) -> str | None:
    """The first self-tagging member of ``names`` (the one whose XPOS, FEATS and lemmas a caller
    would store), or None.

    Examples:
        >>> column_source(["graph1", "biaffine"]), column_source(["graph1"])
        ('biaffine', None)
    """
    return next((name for name in names if is_self_tagging(name)), None)


def member_columns(parses: Mapping[str, Sequence[Parse]], names: Sequence[str] | None = None
                   ) -> list[WordColumns] | None:
    """One :class:`WordColumns` per sentence from the self-tagging member among ``parses``
    (members' parses by name, as :meth:`parsing.pipeline.ModelBundle.parse` returns them; only
    ``names`` if given), or None when none of them tags by itself.

    Raises:
        ValueError: a parse whose columns do not fit its tree.
    """
    source = column_source(list(names if names is not None else parses))
    if source is None:
        return None
    return [predicted_columns(parse) for parse in parses[source]]
