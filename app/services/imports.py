"""Import CoNLL-U or plain text into a treebank: check everything first, then bulk-insert.

The whole file is parsed and checked by :mod:`parsing.conllu_io` before the first row is
written, so a malformed file leaves the database untouched; the caller commits or rolls back.
A sentence may have at most :data:`MAX_SENTENCE_WORDS` (500) words.

Trees and splits. A sentence whose heads are all ``_`` has no tree: it can only go to the
``pool`` (the sentences to annotate). The train, dev and test splits need a tree for every
sentence, so a file with an untreed sentence is refused there, naming that sentence's first
word line. A pool file may mix both: sentences with trees keep them as their ``gold`` version,
the others wait for pre-annotation. Plain text (:func:`import_text`) is tokenized by
:mod:`parsing.tokenize` and always goes to the pool.

Who: the importer of a new treebank becomes its owner; importing into an existing one needs
the ``import`` permission (:mod:`app.services.permissions`). Every import is an audit event.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, func, insert, select

from app.models import SPLITS, Base, Document, Membership, Sentence, Token, Treebank, TreeVersion, User
from app.services import DbSession
from app.services.audit import record
from app.services.permissions import require
from app.services.settings import set_language_if_blank
from parsing.conllu_io import (
    DEPREL,
    HEAD,
    ConlluError,
    ConlluSentence,
    decode_utf8,
    parse_conllu,
)
from parsing.tokenize import sentences_from_text

MAX_SENTENCE_WORDS = 500
"""Most words (token lines with an integer ID) one sentence may have. The longest sentences of
the UD treebanks have a few hundred words; a longer "sentence" is a paragraph or a file that
lost its blank lines, and would make the editor draw thousands of arcs."""

BatchReport = Callable[[Treebank, Document, int, int], None]
"""Called after each stored batch with the treebank, the document, the sentences stored so far
and the file's sentence count (a background import reports progress and commits there)."""

_LANGUAGE_FROM_FILENAME = re.compile(r"([a-z]{2,3})_[a-z0-9]+-ud-")
_WORD_ID = re.compile(r"[1-9][0-9]*")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import added."""

    treebank: Treebank
    document: Document
    sentences: int
    words: int
    trees: int


def import_conllu(
    session: DbSession,
    *,
    data: bytes,
    filename: str,
    treebank_name: str,
    split: str,
    user: User,
    language: str | None = None,
    max_bytes: int | None = None,
    batch: int | None = None,
    report: BatchReport | None = None,
) -> ImportResult:
    """Add ``data`` (a CoNLL-U file) to treebank ``treebank_name``, creating it if needed.

    Sentences without a tree (heads ``_``) are accepted only in the ``pool`` split. ``batch``:
    store that many sentences at a time, calling ``report`` after each (default: all at once).

    :raise ConlluError: the file is too large, not UTF-8, empty or malformed, or has a sentence
        without a tree outside the pool (with its line).
    :raise ValueError: ``split`` is not one of :data:`app.models.SPLITS` or the name is empty.
    """
    _check_request(split, treebank_name, len(data), max_bytes, filename)
    sentences = parse_conllu(decode_utf8(data, source=filename), source=filename)
    if split != "pool":
        _require_trees(sentences, split, filename)
    return _store(session, sentences, filename=filename, treebank_name=treebank_name, split=split,
                  user=user, language=language, batch=batch, report=report)


def import_text(
    session: DbSession,
    *,
    data: bytes,
    filename: str,
    treebank_name: str,
    user: User,
    split: str = "pool",
    one_per_line: bool = False,
    language: str | None = None,
    max_bytes: int | None = None,
    batch: int | None = None,
    report: BatchReport | None = None,
) -> ImportResult:
    """Tokenize plain UTF-8 text (:mod:`parsing.tokenize`) into the pool of ``treebank_name``.

    ``one_per_line``: every non-blank line is a sentence; else running text is split into
    sentences. Sentence ids are ``<file name without extension>-<k>``.

    :raise ConlluError: too large, not UTF-8, a control character (with its line), or no text.
    :raise ValueError: ``split`` is not ``pool`` (text has no trees) or the name is empty.
    """
    _check_request(split, treebank_name, len(data), max_bytes, filename)
    if split != "pool":
        raise ValueError(f"Plain text has no trees, so it goes into the pool split, not {split}.")
    text = decode_utf8(data, source=filename)
    _refuse_control_characters(text, filename)
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    sentences = sentences_from_text(text, one_per_line=one_per_line, sent_id_prefix=f"{stem}-")
    if not sentences:
        raise ConlluError(0, "the text is empty: no sentence found", source=filename)
    return _store(session, sentences, filename=filename, treebank_name=treebank_name, split=split,
                  user=user, language=language, batch=batch, report=report)


def _check_request(split: str, treebank_name: str, size: int, max_bytes: int | None, filename: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if not treebank_name.strip():
        raise ValueError("the treebank needs a name")
    if max_bytes is not None and size > max_bytes:
        raise ConlluError(0, f"file is larger than the {max_bytes // 2**20} MB limit",
                          source=filename)


def _require_trees(sentences: Sequence[ConlluSentence], split: str, filename: str) -> None:
    """Refuse a sentence without a tree (heads ``_``) outside the pool, naming its first word line."""
    for sentence in sentences:
        if sentence.words[0][HEAD] == "_":
            offset = next(i for i, row in enumerate(sentence.rows) if _WORD_ID.fullmatch(row[0]))
            line = sentence.first_line + len(sentence.comments) + offset
            raise ConlluError(line, f"this sentence has no tree (HEAD is _): the {split} split needs "
                                    "trees; import sentences without trees into the pool",
                              source=filename)


def _refuse_control_characters(text: str, filename: str) -> None:
    for number, line in enumerate(text.split("\n"), start=1):
        for char in line:
            if unicodedata.category(char) == "Cc" and not char.isspace():
                raise ConlluError(number, f"control character U+{ord(char):04X} in the text",
                                  source=filename)


def _refuse_long_sentences(sentences: Sequence[ConlluSentence], filename: str) -> None:
    """Refuse a sentence of more than :data:`MAX_SENTENCE_WORDS` words, naming it and its line."""
    for number, sentence in enumerate(sentences, start=1):
        if len(sentence.words) > MAX_SENTENCE_WORDS:
            name = sentence.sent_id or f"number {number}"
            raise ConlluError(sentence.first_line, f"sentence {name} has {len(sentence.words):,} words; "
                                                   f"a sentence may have at most {MAX_SENTENCE_WORDS} "
                                                   "(split it into shorter sentences)", source=filename)


def _store(
    session: DbSession, sentences: Sequence[ConlluSentence], *, filename: str, treebank_name: str,
    split: str, user: User, language: str | None, batch: int | None = None,
    report: BatchReport | None = None,
) -> ImportResult:
    _refuse_long_sentences(sentences, filename)  # before the first row is written
    treebank = _get_or_create_treebank(
        session, treebank_name.strip(), user, language or guess_language(filename), sentences
    )
    document = _add_document(session, treebank, filename, split, user)
    words = trees = 0
    step = max(1, batch or len(sentences))
    for start in range(0, len(sentences), step):
        chunk = sentences[start:start + step]
        sentence_ids = _insert_sentences(session, document, chunk, first=start + 1)
        words += _insert_tokens(session, sentence_ids, chunk)
        trees += _insert_gold_trees(session, sentence_ids, chunk, user)
        if report is not None:
            report(treebank, document, start + len(chunk), len(sentences))
    treebank.labels = sorted(set(treebank.labels) | _labels(sentences))
    record(session, "import", user=user, treebank=treebank, document=filename, split=split,
           sentences=len(sentences), words=words)
    return ImportResult(treebank, document, len(sentences), words, trees)


def guess_language(filename: str) -> str:
    """The language code of a UD file name (``tr_imst-ud-train.conllu`` → ``tr``), or ``""``."""
    match = _LANGUAGE_FROM_FILENAME.match(filename)
    return match[1] if match else ""


def detect_direction(forms: Iterable[str]) -> str:
    """``rtl`` when most strong-direction letters of ``forms`` are right-to-left, else ``ltr``."""
    rtl = ltr = 0
    for form in forms:
        for char in form:
            kind = unicodedata.bidirectional(char)
            if kind in ("R", "AL"):
                rtl += 1
            elif kind == "L":
                ltr += 1
    return "rtl" if rtl > ltr else "ltr"


def _get_or_create_treebank(
    session: DbSession, name: str, user: User, language: str, sentences: Sequence[ConlluSentence]
) -> Treebank:
    """The treebank called ``name``, or a new one owned by ``user``; an existing treebank
    without a language takes ``language`` (:func:`~app.services.settings.set_language_if_blank`).

    :raise PermissionDenied: it exists and ``user`` may not import into it.
    """
    treebank = session.scalar(select(Treebank).where(Treebank.name == name))
    if treebank is not None:
        require(user, "import", treebank)
        set_language_if_blank(treebank, language)
        return treebank
    forms = (row[1] for sentence in sentences[:500] for row in sentence.words)
    treebank = Treebank(
        name=name, language=language, direction=detect_direction(forms), labels=[],
        created_by=user, visibility="private",
    )
    treebank.memberships.append(Membership(user=user, role="owner"))
    session.add(treebank)
    session.flush()
    return treebank


def _add_document(
    session: DbSession, treebank: Treebank, filename: str, split: str, user: User
) -> Document:
    last = session.scalar(
        select(func.max(Document.position)).where(Document.treebank_id == treebank.id)
    )
    document = Document(
        treebank=treebank, position=(last or 0) + 1, name=filename, split=split,
        imported_by=user,
    )
    session.add(document)
    session.flush()
    return document


def _insert_sentences(
    session: DbSession, document: Document, sentences: Sequence[ConlluSentence], *, first: int = 1
) -> list[int]:
    rows = [
        {
            "document_id": document.id,
            "position": position,
            "sent_id": sentence.sent_id,
            "text": sentence.text,
            "comments": sentence.comments,
            "n_words": len(sentence.words),
        }
        for position, sentence in enumerate(sentences, start=first)
    ]
    statement = insert(Sentence).returning(Sentence.id, sort_by_parameter_order=True)
    return list(session.scalars(statement, rows))


def _insert_tokens(
    session: DbSession, sentence_ids: Sequence[int], sentences: Sequence[ConlluSentence]
) -> int:
    rows: list[dict[str, Any]] = []
    words = 0
    for sentence_id, sentence in zip(sentence_ids, sentences, strict=True):
        for position, row in enumerate(sentence.rows, start=1):
            word = int(row[0]) if _WORD_ID.fullmatch(row[0]) else None
            rows.append(_token_row(sentence_id, position, word, row))
        words += len(sentence.words)
    _bulk_insert(session, _table(Token), rows)
    return words


def _token_row(sentence_id: int, position: int, word: int | None, row: list[str]) -> dict[str, Any]:
    ident, form, lemma, upos, xpos, feats, head, deprel, deps, misc = row
    return {
        "sentence_id": sentence_id, "position": position, "word": word, "ident": ident,
        "form": form, "lemma": lemma, "upos": upos, "xpos": xpos, "feats": feats,
        "head": head, "deprel": deprel, "deps": deps, "misc": misc,
    }


def _insert_gold_trees(
    session: DbSession, sentence_ids: Sequence[int], sentences: Sequence[ConlluSentence], user: User
) -> int:
    """Store each sentence's imported tree as its ``gold`` version 1 (none if heads are ``_``)."""
    rows = [
        {
            "sentence_id": sentence_id, "kind": "gold", "name": "", "version": 1,
            "heads": [int(word[HEAD]) for word in sentence.words],
            "deprels": [word[DEPREL] for word in sentence.words],
            "scores": None, "user_id": user.id,
        }
        for sentence_id, sentence in zip(sentence_ids, sentences, strict=True)
        if sentence.words[0][HEAD] != "_"
    ]
    if rows:
        session.execute(insert(_table(TreeVersion)), rows)
    return len(rows)


def _bulk_insert(session: DbSession, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` in the session's transaction: COPY on PostgreSQL, else executemany."""
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name == "postgresql" and connection.dialect.driver == "psycopg2":
        columns = list(rows[0])
        buffer = io.StringIO()
        for row in rows:
            buffer.write("\t".join(_copy_text(row[column]) for column in columns) + "\n")
        buffer.seek(0)
        cursor = connection.connection.cursor()
        cursor.copy_expert(f"COPY {table.name} ({', '.join(columns)}) FROM STDIN", buffer)
        cursor.close()
        return
    for start in range(0, len(rows), 20_000):
        session.execute(insert(table), rows[start:start + 20_000])


def _copy_text(value: object) -> str:
    """One field in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    return str(value).translate(_COPY_ESCAPES)


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _table(model: type[Base]) -> Table:
    """The Core table of ``model`` (Core inserts skip the ORM's per-row bookkeeping)."""
    return cast(Table, model.__table__)


def _labels(sentences: Iterable[ConlluSentence]) -> set[str]:
    return {word[DEPREL] for sentence in sentences for word in sentence.words} - {"_"}
