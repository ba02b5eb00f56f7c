"""External parsers of a treebank: another parser's CoNLL-U output brought in as an *external
member*, and plugin commands run over a treebank's sentences.

An upload is matched to the stored sentences one sentence at a time: by ``sent_id`` when the
treebank has that id, else by the ``# text`` comment, else by the sequence of word forms. Each
matched sentence must keep the treebank's tokens; the first one that does not refuses the whole
upload with a message naming it (nothing is stored). The trees become ``parser`` versions named
by the external parser's label, so the editor lists them beside the members and the scoreboard
and comparisons score them like any member. The upload's UPOS column is not kept: scores use the
treebank's tags.

A *plugin* is an external parser with a command (CoNLL-U on stdin and stdout) or an HTTP
endpoint (CoNLL-U POSTed and returned), set by :func:`set_plugin`; who may set which is
:func:`app.services.permissions.plugin_refusal`'s rule (commands: site admins only).
:func:`run_plugins` runs the plugins over each batch a pre-annotation parses and stores their
trees the same way.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from app.models import Document, Sentence, Token, Treebank, TreeVersion, User
from app.parser_models import ExternalParser
from app.services import DbSession
from app.services.trees import RESERVED_SOURCES, add_version
from parsing.conllu_io import FORM, HEAD, ConlluSentence, decode_utf8, parse_conllu
from parsing.external import (
    MAX_REPLY_BYTES,
    ExternalParserError,
    check_url,
    parse_of_rows,
    run_command_parser,
    run_http_parser,
    token_difference,
)
from parsing.members import MEMBERS
from parsing.types import Parse

LABEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
"""An external parser's label: a letter or digit, then up to 39 letters, digits, ``.``, ``_``, ``-``."""

NOT_LABELS = frozenset({*RESERVED_SOURCES, "reviewed", "oracle"})


class UploadError(ValueError):
    """An upload that cannot be stored; the message names the field or the first bad sentence."""


@dataclass(frozen=True)
class UploadResult:
    """What an upload stored: the parser's label and how many sentences got a tree."""

    parser: ExternalParser
    sentences: int


def check_label(label: str) -> str:
    """``label`` when it may name an external parser (not a member or a reserved source).

    :raise UploadError: naming what is wrong with it.
    """
    if not LABEL_PATTERN.fullmatch(label or ""):
        raise UploadError("parser label: 1 to 40 letters, digits, '.', '_' or '-', starting with a "
                          "letter or digit")
    if label in MEMBERS or label.lower() in NOT_LABELS:
        raise UploadError(f"parser label: {label!r} is taken by a member or a source; choose another")
    return label


@dataclass
class _Stored:
    """The treebank's sentences, looked up by sent_id, by text and by word forms."""

    forms: dict[int, list[str]]
    by_sent_id: dict[str, list[int]]
    by_text: dict[str, list[int]]
    by_forms: dict[tuple[str, ...], list[int]]


def _stored(session: DbSession, treebank: Treebank) -> _Stored:
    rows = session.execute(select(Sentence.id, Sentence.sent_id, Sentence.text).join(Document)
                           .where(Document.treebank_id == treebank.id))
    forms: dict[int, list[str]] = {}
    by_sent_id: dict[str, list[int]] = defaultdict(list)
    by_text: dict[str, list[int]] = defaultdict(list)
    for sentence_id, sent_id, text in rows:
        forms[sentence_id] = []
        if sent_id:
            by_sent_id[sent_id].append(sentence_id)
        if text:
            by_text[text.strip()].append(sentence_id)
    tokens = session.execute(select(Token.sentence_id, Token.form).join(Sentence).join(Document)
                             .where(Document.treebank_id == treebank.id, Token.word.is_not(None))
                             .order_by(Token.sentence_id, Token.position))
    for sentence_id, form in tokens:
        forms[sentence_id].append(form)
    by_forms: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for sentence_id, words in forms.items():
        by_forms[tuple(words)].append(sentence_id)
    return _Stored(forms, by_sent_id, by_text, by_forms)


def _describe(index: int, raw: ConlluSentence) -> str:
    name = f" (sent_id {raw.sent_id})" if raw.sent_id else (f" ({raw.text[:40]!r})" if raw.text else "")
    return f"sentence {index}{name}"


def match_sentences(
    session: DbSession, treebank: Treebank, sentences: Sequence[ConlluSentence]
) -> list[tuple[int, ConlluSentence]]:
    """``(stored sentence id, uploaded sentence)`` for every uploaded sentence, in file order.

    :raise UploadError: naming the first sentence that matches nothing, matches a sentence an
        earlier one matched, has other tokens than the stored sentence, or a word without a head.
    """
    stored = _stored(session, treebank)
    taken: dict[int, int] = {}
    matched = []
    for index, raw in enumerate(sentences, start=1):
        forms = [word[FORM] for word in raw.words]
        candidates = ((stored.by_sent_id.get(raw.sent_id or "") or [])
                      or stored.by_text.get((raw.text or "").strip(), [])
                      or stored.by_forms.get(tuple(forms), []))
        free = [sid for sid in candidates if sid not in taken]
        where = _describe(index, raw)
        if not candidates:
            raise UploadError(f"{where} matches no sentence of {treebank.name} by sent_id, text or words")
        if not free:
            raise UploadError(f"{where} matches the same stored sentence as sentence {taken[candidates[0]]}")
        sentence_id = free[0]
        difference = token_difference(stored.forms[sentence_id], forms)
        if difference:
            raise UploadError(f"{where}: the tokens differ from the treebank's: {difference} "
                              "(parse the treebank's own tokens, e.g. its exported CoNLL-U)")
        if any(word[HEAD] == "_" for word in raw.words):
            raise UploadError(f"{where}: a word has no head")
        taken[sentence_id] = index
        matched.append((sentence_id, raw))
    return matched


def add_parse(
    session: DbSession, treebank: Treebank, *, data: bytes, filename: str, label: str, user: User,
    max_bytes: int | None = None,
) -> UploadResult:
    """Store an uploaded CoNLL-U parse of (some of) the treebank's sentences as parser ``label``.

    A new version of each matched sentence's ``label`` tree is added (an upload never overwrites
    an earlier one); the :class:`~app.models.ExternalParser` row records the file and the count.

    :raise UploadError: a bad label, a file over ``max_bytes``, or a sentence that does not match.
    :raise ConlluError: the file is not well-formed CoNLL-U (naming its line).
    """
    check_label(label)
    if max_bytes is not None and len(data) > max_bytes:
        raise UploadError(f"file: larger than the {max_bytes // 2**20} MB limit")
    sentences = parse_conllu(decode_utf8(data, source=filename), source=filename)
    matched = match_sentences(session, treebank, sentences)
    parser = find_parser(session, treebank, label)
    if parser is None:
        parser = ExternalParser(treebank_id=treebank.id, label=label, user_id=user.id)
        session.add(parser)
    for sentence_id, raw in matched:
        parse = parse_of_rows(raw)
        add_version(session, sentence_id=sentence_id, source=label, heads=[int(h) for h in parse.heads[1:]],
                    deprels=parse.deprels[1:], user=user)
    parser.filename, parser.sentences, parser.user_id = filename[:255], len(matched), user.id
    parser.updated_at = datetime.now(UTC)
    session.flush()
    return UploadResult(parser, len(matched))


def external_parsers(session: DbSession, treebank: Treebank) -> list[ExternalParser]:
    """The treebank's external parsers, by label."""
    return list(session.scalars(select(ExternalParser).where(ExternalParser.treebank_id == treebank.id)
                                .order_by(ExternalParser.label)))


def set_plugin(session: DbSession, treebank: Treebank, *, label: str, command: str | None, timeout: float,
               user: User, url: str | None = None) -> ExternalParser:
    """Configure (or with neither ``command`` nor ``url`` stop) the plugin ``label`` of
    ``treebank``, run during pre-annotation: a ``command`` that reads CoNLL-U on stdin and writes
    it parsed on stdout, or an HTTP ``url`` CoNLL-U is POSTed to. The caller checks who may
    (:func:`app.services.permissions.plugin_refusal`).

    :raise UploadError: a bad label, both or an empty command, a URL that is not http(s), or a
        timeout outside 0-3600 s.
    """
    check_label(label)
    if command is not None and url is not None:
        raise UploadError("give a command or a URL, not both")
    if command is not None and not shlex.split(command):
        raise UploadError("command: give the program to run")
    if url is not None:
        try:
            url = check_url(url)
        except ValueError as error:
            raise UploadError(f"url: {error}") from None
    if not 0 < timeout <= 3600:
        raise UploadError("timeout: between 0 and 3600 seconds")
    parser = find_parser(session, treebank, label)
    if parser is None:
        parser = ExternalParser(treebank_id=treebank.id, label=label, user_id=user.id)
        session.add(parser)
    parser.command, parser.url, parser.timeout_s, parser.user_id = command, url, float(timeout), user.id
    parser.updated_at = datetime.now(UTC)
    session.flush()
    return parser


def remove_plugin(session: DbSession, treebank: Treebank, label: str) -> bool:
    """Stop running plugin ``label``: forgotten when it has no tree yet, else its command and URL
    are cleared and its trees stay (scored, and usable as a voter). True when it was forgotten.

    :raise UploadError: no plugin of ``treebank`` has this label.
    """
    parser = find_parser(session, treebank, label)
    if parser is None or not (parser.command or parser.url):
        raise UploadError(f"label: {treebank.name} has no plugin {label!r}")
    has_trees = session.scalar(select(TreeVersion.id).join(Sentence).join(Document).where(
        Document.treebank_id == treebank.id, TreeVersion.kind == "parser", TreeVersion.name == label)
        .limit(1))
    if has_trees is None:
        session.delete(parser)
    else:
        parser.command = parser.url = None
        parser.updated_at = datetime.now(UTC)
    session.flush()
    return has_trees is None


def find_parser(session: DbSession, treebank: Treebank, label: str) -> ExternalParser | None:
    """The external parser ``label`` of ``treebank``, or None."""
    return session.scalar(select(ExternalParser).where(
        ExternalParser.treebank_id == treebank.id, ExternalParser.label == label))


def run_plugin(plugin: ExternalParser, sentences: Sequence[ConlluSentence], *, max_bytes: int) -> list[Parse]:
    """Parse ``sentences`` with ``plugin``'s command or endpoint.

    :raise ExternalParserError: it failed, timed out or returned other tokens (the message says).
    """
    if plugin.url:
        return run_http_parser(plugin.url, sentences, timeout=plugin.timeout_s, max_bytes=max_bytes,
                               name=plugin.label)
    return run_command_parser(plugin.command or "", sentences, timeout=plugin.timeout_s, name=plugin.label)


def stored_conllu(session: DbSession, sentence_ids: Sequence[int]) -> list[ConlluSentence]:
    """The stored lines (comments and every token row) of each sentence, in the given order."""
    rows = session.execute(select(Token.sentence_id, Token.ident, Token.form, Token.lemma, Token.upos,
                                  Token.xpos, Token.feats, Token.head, Token.deprel, Token.deps, Token.misc)
                           .where(Token.sentence_id.in_(list(sentence_ids))).order_by(Token.position))
    tokens: dict[int, list[list[str]]] = defaultdict(list)
    for sentence_id, *columns in rows:
        tokens[sentence_id].append([str(value) for value in columns])
    comments: dict[int, list[str]] = {
        sentence_id: list(lines or []) for sentence_id, lines in session.execute(
            select(Sentence.id, Sentence.comments).where(Sentence.id.in_(list(sentence_ids))))}
    return [ConlluSentence(comments.get(sid, []), tokens[sid]) for sid in sentence_ids]


def run_plugins(
    session: DbSession, treebank: Treebank, sentence_ids: Sequence[int], *, user: User,
    outcome: dict[str, dict[str, Any]] | None = None, max_reply: int = MAX_REPLY_BYTES,
) -> dict[str, dict[str, Any]]:
    """Parse ``sentence_ids`` with every plugin of ``treebank`` and store their trees (flushes);
    an HTTP plugin's reply may have ``max_reply`` bytes.

    ``outcome`` (``{label: {"sentences": parsed, "error": message or None}}``) carries over from
    earlier batches of the same pre-annotation: a plugin that failed is not run again, and its
    error (it timed out, exited with an error, returned other tokens: see
    :func:`parsing.external.run_command_parser`, :func:`~parsing.external.run_http_parser`) is
    kept for the job's result.
    """
    outcome = {} if outcome is None else outcome
    plugins = [p for p in external_parsers(session, treebank) if p.command or p.url]
    if not plugins or not sentence_ids:
        return outcome
    raws = stored_conllu(session, sentence_ids)
    for plugin in plugins:
        state = outcome.setdefault(plugin.label, {"sentences": 0, "error": None})
        if state["error"]:
            continue
        try:
            parses = run_plugin(plugin, raws, max_bytes=max_reply)
        except ExternalParserError as error:
            state["error"] = str(error)
            continue
        for sentence_id, parse in zip(sentence_ids, parses, strict=True):
            add_version(session, sentence_id=sentence_id, source=plugin.label,
                        heads=[int(h) for h in parse.heads[1:]], deprels=parse.deprels[1:], user=user)
        state["sentences"] += len(parses)
        plugin.sentences = state["sentences"]
    session.flush()
    return outcome
