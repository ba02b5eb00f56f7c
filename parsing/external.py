"""Parsers outside this library: check another parser's CoNLL-U against the sentences it should
have parsed, and run a parser given as a command (CoNLL-U on stdin, CoNLL-U on stdout) or as
an HTTP endpoint (CoNLL-U POSTed, CoNLL-U in the reply).

A parser must keep the tokens it was given: the same syntactic words with the same forms, in
the same order (the scorer does not re-tokenise). :func:`token_difference` names the first
place where it did not.

Conventions: index 0 is ROOT; a :class:`~parsing.types.Parse` has ``heads`` of shape ``(n+1,)``
with ``heads[0] == -1``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Sequence
from urllib.parse import urlsplit

import numpy as np

from parsing.conllu_io import DEPREL, FORM, HEAD, ID, ConlluError, ConlluSentence, format_conllu, parse_conllu
from parsing.http_post import PostError, post
from parsing.types import NO_HEAD, Parse


class ExternalParserError(RuntimeError):
    """The external parser failed, timed out, or returned other tokens; the message says which."""


class PluginUnreachable(ExternalParserError):
    """An HTTP parser gave no usable answer: unknown host, an address it may not reach, refused,
    late, not HTTP or an HTTP error status (the message says which; :data:`UNREACHABLE` is the
    one sentence to show those who should not learn which ports of a host are open)."""


UNREACHABLE = "the plugin is unreachable (no usable HTTP answer in time)"


MAX_REPLY_BYTES = 64 * 2**20
"""The largest reply :func:`run_http_parser` reads by default (64 MB)."""

URL_SCHEMES = ("http", "https")
"""The only URL schemes an HTTP parser may use."""

URL_CHARACTER = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
"""A character a URL may hold as it is (RFC 3986); any other must be percent-encoded."""


def check_url(url: str) -> str:
    """``url`` when it can name an HTTP parser: ``http`` or ``https``, with a host, at most
    2000 characters.

    Raises:
        ValueError: naming what is wrong.

    Examples:
        >>> check_url("http://localhost:8080/parse")
        'http://localhost:8080/parse'
        >>> check_url("file:///etc/passwd")
        Traceback (most recent call last):
        ...
        ValueError: only http:// and https:// URLs, not file://
        >>> check_url("http://h/a b")
        Traceback (most recent call last):
        ...
        ValueError: character 11 (' ') may not appear in a URL: percent-encode it (a space is %20)
    """
    if len(url) > 2000:
        raise ValueError("the URL is longer than 2000 characters")
    url = url.strip()
    for position, character in enumerate(url, start=1):
        if not URL_CHARACTER.fullmatch(character):
            raise ValueError(f"character {position} ({character!r}) may not appear in a URL: "
                             "percent-encode it (a space is %20)")
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as error:
        raise ValueError(f"not a URL: {error}") from None
    if parts.scheme not in URL_SCHEMES:
        raise ValueError(f"only http:// and https:// URLs, not {parts.scheme or '(none)'}://")
    if not parts.hostname:
        raise ValueError("the URL has no host")
    return url


def token_difference(expected: Sequence[str], found: Sequence[str]) -> str | None:
    """What differs between the expected word forms and a parser's, or None when they agree.

    Examples:
        >>> token_difference(["a", "b"], ["a", "b"]) is None
        True
        >>> token_difference(["a", "b"], ["a", "c"])
        "word 2 is 'c' instead of 'b'"
        >>> token_difference(["a", "b"], ["ab"])
        '1 word instead of 2'
    """
    if len(expected) != len(found):
        return f"{len(found)} word{'' if len(found) == 1 else 's'} instead of {len(expected)}"
    for word, (want, got) in enumerate(zip(expected, found, strict=True), start=1):
        if want != got:
            return f"word {word} is {got!r} instead of {want!r}"
    return None


def parse_of_rows(raw: ConlluSentence) -> Parse:
    """The HEAD and DEPREL columns of ``raw``'s words as a parse (``_`` heads become -1).

    Raises:
        ValueError: a head that is not a number.
    """
    heads = [NO_HEAD if row[HEAD] == "_" else int(row[HEAD]) for row in raw.words]
    deprels = ["", *(row[DEPREL] for row in raw.words)]
    return Parse(heads=np.array([NO_HEAD, *heads], dtype=np.intp), deprels=deprels)


def blank_trees(sentences: Sequence[ConlluSentence]) -> list[ConlluSentence]:
    """Copies of ``sentences`` with HEAD and DEPREL of every word set to ``_`` (input to parse)."""
    result = []
    for sentence in sentences:
        rows = [list(row) for row in sentence.rows]
        for row in rows:
            if row[ID].isdigit():  # a syntactic word (not a range or an empty node)
                row[HEAD] = row[DEPREL] = "_"
        result.append(ConlluSentence(list(sentence.comments), rows))
    return result


def run_command_parser(
    command: str | Sequence[str], sentences: Sequence[ConlluSentence], *, timeout: float, name: str = "parser"
) -> list[Parse]:
    """Parse ``sentences`` with an external command: CoNLL-U (trees blanked) on its stdin, CoNLL-U
    with a tree for every word on its stdout. The command runs without a shell (a string is split
    like a shell would), is killed after ``timeout`` seconds, and must keep every token.

    Args:
        command: the program and its arguments.
        sentences: the sentences to parse.
        timeout: seconds before the command is killed.
        name: the parser's name for messages.

    Returns:
        One parse per sentence, in order.

    Raises:
        ExternalParserError: the command is missing, times out, exits with an error (its last
            stderr lines are quoted), writes malformed CoNLL-U, or returns other sentences or
            tokens (naming the first sentence that differs) or words without a head.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ExternalParserError(f"{name}: no command configured")
    if not sentences:
        return []
    try:
        done = subprocess.run(argv, input=format_conllu(blank_trees(sentences)), capture_output=True,
                              text=True, encoding="utf-8", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ExternalParserError(f"{name}: {argv[0]} did not finish within {timeout:g} s") from None
    except OSError as error:
        raise ExternalParserError(f"{name}: cannot run {argv[0]}: {error.strerror or error}") from None
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise ExternalParserError(f"{name}: {argv[0]} exited with status {done.returncode}"
                                  + (f": {tail}" if tail else ""))
    return parses_of_reply(done.stdout, sentences, name=name)


def parses_of_reply(text: str, sentences: Sequence[ConlluSentence], *, name: str = "parser") -> list[Parse]:
    """The trees of an external parser's CoNLL-U reply to ``sentences``, one per sentence.

    Raises:
        ExternalParserError: malformed CoNLL-U (naming its line), another number of sentences,
            other tokens (naming the first sentence that differs) or a word without a head.
    """
    try:
        output = parse_conllu(text, source=f"{name} output", single_root=False)
    except ConlluError as error:
        raise ExternalParserError(str(error)) from None
    if len(output) != len(sentences):
        raise ExternalParserError(f"{name} returned {len(output)} sentences for {len(sentences)}")
    parses = []
    for index, (given, got) in enumerate(zip(sentences, output, strict=True), start=1):
        where = f"{name}, sentence {index}" + (f" (sent_id {given.sent_id})" if given.sent_id else "")
        difference = token_difference([w[FORM] for w in given.words], [w[FORM] for w in got.words])
        if difference:
            raise ExternalParserError(f"{where}: returned other tokens: {difference}")
        parse = parse_of_rows(got)
        if np.any(parse.heads[1:] < 0):
            raise ExternalParserError(f"{where}: a word without a head")
        parses.append(parse)
    return parses


def _read_reply(url: str, body: bytes, *, timeout: float, max_bytes: int, name: str,
                allowed: Sequence[str] | None) -> bytes:
    """POST ``body`` to ``url``; the reply's bytes (:func:`parsing.http_post.post`)."""
    headers = {"Content-Type": "text/x-conllu; charset=utf-8", "Accept": "text/x-conllu, text/plain"}
    try:
        return post(url, body, headers=headers, timeout=timeout, max_bytes=max_bytes, allowed=allowed)
    except PostError as error:
        kind = PluginUnreachable if error.unreachable else ExternalParserError
        raise kind(f"{name}: {url} {error}") from None


def run_http_parser(
    url: str, sentences: Sequence[ConlluSentence], *, timeout: float, max_bytes: int = MAX_REPLY_BYTES,
    name: str = "parser", allowed: Sequence[str] | None = None,
) -> list[Parse]:
    """Parse ``sentences`` with an HTTP endpoint: CoNLL-U (trees blanked) POSTed to ``url``, the
    reply's body CoNLL-U (UTF-8) with a tree for every word. No proxy, no redirect followed;
    the whole exchange (lookup, connection, headers, body, however slowly the server sends them)
    must end within ``timeout`` seconds and the reply stay under ``max_bytes``; the reply must
    keep every token (as :func:`run_command_parser`'s). ``allowed``: None reaches any address;
    a list only global ones and those it names (:func:`parsing.http_post.address_refusal`).

    Raises:
        PluginUnreachable: no usable answer (see the class).
        ExternalParserError: a URL that is not http(s), an oversized reply, text that is not
            UTF-8, or a reply :func:`parses_of_reply` refuses.
    """
    try:
        url = check_url(url)
    except ValueError as error:
        raise ExternalParserError(f"{name}: {error}") from None
    if not sentences:
        return []
    body = format_conllu(blank_trees(sentences)).encode("utf-8")
    data = _read_reply(url, body, timeout=timeout, max_bytes=max_bytes, name=name, allowed=allowed)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExternalParserError(f"{name}: the reply of {url} is not UTF-8 (byte {error.start})") from None
    return parses_of_reply(text, sentences, name=name)
