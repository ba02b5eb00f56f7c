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
:func:`plugin_calls` (read), :func:`call_plugins` (no database: the caller holds no transaction
while plugins run, :mod:`app.jobs.plugin_runs`) and :func:`store_plugin_parses` (write) run them
over each batch a pre-annotation parses and store their trees the same way.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
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
    UNREACHABLE,
    ExternalParserError,
    PluginUnreachable,
    check_url,
    parse_of_rows,
    run_command_parser,
    run_http_parser,
    token_difference,
)
from parsing.http_post import url_refusal
from parsing.members import MEMBERS
from parsing.types import Parse

LABEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
"""An external parser's label: a letter or digit, then up to 39 letters, digits, ``.``, ``_``, ``-``."""

NOT_LABELS = frozenset({*RESERVED_SOURCES, "reviewed", "oracle"})

PLUGIN_ALLOWED_HOSTS = "PLUGIN_ALLOWED_HOSTS"
"""The config key (``FLASK_PLUGIN_ALLOWED_HOSTS`` in the environment) naming the non-public hosts,
addresses and networks (``10.0.0.0/8``; ``*``: any) HTTP plugins may reach besides public
addresses; default none: loopback, private and link-local addresses are refused (issue #31)."""


def allowed_hosts(config: Mapping[str, Any]) -> tuple[str, ...]:
    """:data:`PLUGIN_ALLOWED_HOSTS` of ``config`` as a tuple (a string is split at commas and spaces).

    >>> allowed_hosts({"PLUGIN_ALLOWED_HOSTS": "127.0.0.1, 10.0.0.0/8"})
    ('127.0.0.1', '10.0.0.0/8')
    """
    value = config.get(PLUGIN_ALLOWED_HOSTS) or ()
    entries = value.replace(",", " ").split() if isinstance(value, str) else [str(v) for v in value]
    return tuple(entry for entry in entries if entry)


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
    sentences = parse_conllu(decode_utf8(data, source=filename), source=filename, single_root=False)
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
               user: User, url: str | None = None, allowed: Sequence[str] | None = None) -> ExternalParser:
    """Configure (or with neither ``command`` nor ``url`` stop) the plugin ``label`` of
    ``treebank``, run during pre-annotation: a ``command`` that reads CoNLL-U on stdin and writes
    it parsed on stdout, or an HTTP ``url`` CoNLL-U is POSTed to. The caller checks who may
    (:func:`app.services.permissions.plugin_refusal`). With ``allowed``
    (:func:`allowed_hosts`), a URL whose host resolves to an address plugins may not reach is
    refused now (and every run checks again).

    :raise UploadError: a bad label, both or an empty command, a URL that is not http(s) or holds
        a character URLs may not, a host plugins may not reach, or a timeout outside 0-3600 s.
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
        refusal = None if allowed is None else url_refusal(url, allowed)
        if refusal:
            raise UploadError(f"url: {refusal}; plugins may reach public addresses and those an "
                              "administrator allows (PLUGIN_ALLOWED_HOSTS)")
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


@dataclass(frozen=True)
class PluginCall:
    """What running one plugin needs, read from its row so that no database row (or transaction)
    is held while it runs."""

    label: str
    command: str | None
    url: str | None
    timeout: float


def run_plugin(plugin: PluginCall, sentences: Sequence[ConlluSentence], *, max_bytes: int,
               allowed: Sequence[str] | None = ()) -> list[Parse]:
    """Parse ``sentences`` with ``plugin``'s command or endpoint; an endpoint may be at a global
    address or one ``allowed`` names (:data:`PLUGIN_ALLOWED_HOSTS`).

    :raise ExternalParserError: it failed, timed out or returned other tokens (the message says);
        :class:`~parsing.external.PluginUnreachable` when an endpoint gave no usable answer.
    """
    if plugin.url:
        return run_http_parser(plugin.url, sentences, timeout=plugin.timeout, max_bytes=max_bytes,
                               name=plugin.label, allowed=allowed)
    return run_command_parser(plugin.command or "", sentences, timeout=plugin.timeout, name=plugin.label)


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


Outcome = dict[str, dict[str, Any]]
"""``{label: {"sentences": parsed, "error": message or None, "detail": full message}}`` of one
pre-annotation's plugins: ``error`` is what anyone who may read the job sees (one sentence for
every kind of unreachable endpoint, so that a job does not tell open ports from closed),
``detail`` what happened, for those who may manage the treebank (:func:`public_outcome`)."""


def plugin_calls(session: DbSession, treebank: Treebank, sentence_ids: Sequence[int], outcome: Outcome
                 ) -> tuple[list[PluginCall], list[ConlluSentence]]:
    """The plugins of ``treebank`` still to run (none that failed earlier in ``outcome``) and the
    stored CoNLL-U of ``sentence_ids`` they parse: read in one go, before any of them runs."""
    plugins = [PluginCall(p.label, p.command, p.url, p.timeout_s)
               for p in external_parsers(session, treebank)
               if (p.command or p.url) and not (outcome.get(p.label) or {}).get("error")]
    if not plugins or not sentence_ids:
        return [], []
    return plugins, stored_conllu(session, sentence_ids)


def call_plugins(calls: Sequence[PluginCall], raws: Sequence[ConlluSentence], outcome: Outcome, *,
                 max_reply: int = MAX_REPLY_BYTES, allowed: Sequence[str] | None = ()
                 ) -> dict[str, list[Parse]]:
    """Run every plugin of ``calls`` over ``raws`` (no database here: the caller holds no
    transaction meanwhile); their parses by label. A plugin that fails is skipped, its error
    recorded in ``outcome``."""
    parsed: dict[str, list[Parse]] = {}
    for call in calls:
        state = outcome.setdefault(call.label, {"sentences": 0, "error": None})
        try:
            parsed[call.label] = run_plugin(call, raws, max_bytes=max_reply, allowed=allowed)
        except ExternalParserError as error:
            state["error"] = UNREACHABLE if isinstance(error, PluginUnreachable) else str(error)
            state["detail"] = str(error)
    return parsed


def store_plugin_parses(session: DbSession, treebank: Treebank, sentence_ids: Sequence[int],
                        parsed: dict[str, list[Parse]], *, user: User, outcome: Outcome) -> None:
    """Add each plugin's tree of each sentence as a new ``parser`` version (flushes)."""
    for label, parses in parsed.items():
        for sentence_id, parse in zip(sentence_ids, parses, strict=True):
            add_version(session, sentence_id=sentence_id, source=label,
                        heads=[int(h) for h in parse.heads[1:]], deprels=parse.deprels[1:], user=user)
        state = outcome[label]
        state["sentences"] += len(parses)
        plugin = find_parser(session, treebank, label)
        if plugin is not None:
            plugin.sentences = state["sentences"]
    session.flush()


def public_outcome(outcome: Outcome) -> Outcome:
    """``outcome`` without the ``detail`` of failures (what a reader of the job sees)."""
    return {label: {k: v for k, v in state.items() if k != "detail"} for label, state in outcome.items()}
