"""Parsers outside this library: check another parser's CoNLL-U against the sentences it should
have parsed, and run a parser given as a command (CoNLL-U on stdin, CoNLL-U on stdout).

A parser must keep the tokens it was given: the same syntactic words with the same forms, in
the same order (the scorer does not re-tokenise). :func:`token_difference` names the first
place where it did not.

Conventions: index 0 is ROOT; a :class:`~parsing.types.Parse` has ``heads`` of shape ``(n+1,)``
with ``heads[0] == -1``.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Sequence

import numpy as np

from parsing.conllu_io import DEPREL, FORM, HEAD, ID, ConlluError, ConlluSentence, format_conllu, parse_conllu
from parsing.types import NO_HEAD, Parse


class ExternalParserError(RuntimeError):
    """The external parser failed, timed out, or returned other tokens; the message says which."""


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
    try:
        output = parse_conllu(done.stdout, source=f"{name} output")
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
