"""The UD validator's checks of one sentence, as warnings for the editor (``udtools``).

``udtools.Validator.validate_sentence`` runs every check that needs one sentence only. Which
levels run:

* **1–3 always**: the CoNLL-U format (level 1), the format of every column, the tree, the
  ``# sent_id``/``# text`` comments (level 2), and the universal consequences of the guidelines
  (level 3: UPOS vs DEPREL, left-to-right relations, a single subject, ``fixed``/``goeswith``
  spans, expected features, punctuation attachment...).
* **4–5 when the treebank's language is one the validator has data for** (``Treebank.language``
  is its ISO code): the features, relation subtypes, auxiliaries and copulas documented for
  that language. For other languages they would flag every feature as undocumented, so only
  levels 1–3 run (with language ``ud``).

Not run, because they need the whole file or treebank: unique sentence ids, newdoc/newpar and
SpaceAfter continuity across sentences, a missing feature reported only once the treebank is
known to have features (a sentence without any FEATS gets no "missing feature" warning), and
the end-of-treebank enhanced-graph check. Level 6 (coreference in MISC) is optional and off.

Every message is a warning (the tree itself was already checked by
:mod:`app.services.validation`); each names the word of the line it was found on, else 0
(the whole sentence, e.g. the metadata checks of ``# text`` and ``# sent_id``).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from app.extensions import db
from app.models import Sentence, Treebank, TreeVersion
from app.services import DbSession
from app.services.exports import sentence_conllu
from parsing.conllu_io import ID, ConlluSentence

_LOCK = threading.Lock()
"""udtools keeps per-check defaults (line, level) on a class: one validation at a time."""


@lru_cache(maxsize=16)
def _validator(language: str) -> tuple[Any, int]:
    """A quiet validator for ``language`` and the highest level it runs (built once per
    language: 0.3–1 s to load its data; udtools is imported here, not when the app starts)."""
    from udtools import Validator

    validator = Validator(lang="ud", level=3, output=None)
    data = validator.data
    if language and language in data.feats and language in data.deprel:
        return Validator(lang=language, level=5, output=None), 5
    return validator, 3


def levels_for(language: str) -> int:
    """The highest validation level run for a treebank in ``language`` (3 or 5)."""
    return _validator(language)[1]


def _word_of(row_id: str) -> int:
    """The word a token line names: its ID, a range's first word, an empty node's word before."""
    head = row_id.split("-")[0].split(".")[0]
    return int(head) if head.isdigit() else 0


def ud_warnings(raw: ConlluSentence, language: str) -> list[dict[str, Any]]:
    """``[{word, level, test, message}]`` from the UD validator for one sentence, in line order.

    The same sentence text in the same language gives the same warnings, so they are kept for
    the last :data:`WARNINGS_KEPT` sentences of this process: opening a sentence again (the
    editor, the sentence page, a save's reply opened by the next annotator) skips the validator,
    about a third of an editor page's server time.
    """
    key = (language, tuple(raw.comments), tuple(tuple(row) for row in raw.rows))
    return [dict(warning) for warning in _warnings_of_text(key)]


WARNINGS_KEPT = 4096
"""How many sentences' warnings a process keeps (a few MB at most)."""


@lru_cache(maxsize=WARNINGS_KEPT)
def _warnings_of_text(
    key: tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]],
) -> tuple[dict[str, Any], ...]:
    """The validator's warnings of one sentence, ``key`` = (language, comments, token rows)."""
    language, comments, rows = key
    raw = ConlluSentence(comments=list(comments), rows=[list(row) for row in rows])
    return tuple(_validate(raw, language))


def _validate(raw: ConlluSentence, language: str) -> list[dict[str, Any]]:
    """Run the validator on one sentence (:func:`ud_warnings` without its cache)."""
    lines = [*raw.comments, *("\t".join(row) for row in raw.rows), ""]
    first_row = len(raw.comments) + 1  # 1-based line number of the first token line
    from udtools.state import State

    state = State()
    state.current_line = len(lines)  # line numbers count from the sentence's first line
    validator, _ = _validator(language)
    with _LOCK:
        validator.validate_sentence(lines, state)
    found = []
    for incident in sorted(state.error_tracker, key=lambda incident: incident.lineno):
        node = str(incident.nodeid or "")
        if str(incident.testclass) == "METADATA":  # about the comments, found "on" the first word
            word = 0
        elif node.isdigit():
            word = int(node)
        elif 0 <= incident.lineno - first_row < len(raw.rows):
            word = _word_of(raw.rows[incident.lineno - first_row][ID])
        else:
            word = 0
        found.append({"word": word, "level": int(incident.level), "test": str(incident.testid),
                      "message": str(incident.message)})
    return found


def tree_warnings(session: DbSession, sentence: Sentence, tree: TreeVersion) -> list[dict[str, Any]]:
    """:func:`ud_warnings` of the sentence as exported with ``tree`` (a validator failure is
    one warning, never an error of the request)."""
    language = sentence.document.treebank.language or ""
    try:
        return ud_warnings(sentence_conllu(session, sentence, tree), language)
    except Exception as error:  # a tree without heads, or a bug in the checker: never a 500
        return [{"word": 0, "level": 0, "test": "validator-failed",
                 "message": f"the UD validator failed: {error}"}]


def warm_validators(app: Flask) -> list[str]:
    """Build the validators of every treebank language of ``app``'s database now (0.5–1.5 s
    each), so that no request waits for one under the validator's lock: a web worker calls it
    before it serves (``gunicorn.conf.py``). Returns the languages warmed (``""``: levels 1–3).
    A database that cannot be read yet (before its migrations) warms only ``""``."""
    languages = {""}
    try:
        with app.app_context():
            languages |= {language for language in db.session.scalars(select(Treebank.language).distinct())
                          if language}
    except SQLAlchemyError:
        pass
    for language in sorted(languages):
        _validator(language)
    return sorted(languages)
