"""Lossless CoNLL-U reading, checking and writing.

:func:`parse_conllu` keeps every line of a file (comments, multiword-token ranges ``1-2``,
empty nodes ``3.1``, every column as written), so :func:`format_conllu` gives back the
same bytes. Errors name the line and the problem (:class:`ConlluError`).

The reader is line-based rather than built on ``conllu.parse`` because a lossless round
trip and line-numbered errors need the raw lines, which that parser normalises away
(comment spacing, FEATS order). :func:`to_tokenlist` still hands any sentence to the
``conllu`` package's ``TokenList`` for interoperability.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import conllu
import numpy as np

from parsing.trees import find_cycle
from parsing.types import NO_HEAD, ROOT, Parse, Sentence

COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
ID, FORM, LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS, MISC = range(10)

_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")


class ConlluError(ValueError):
    """Malformed CoNLL-U; ``line`` is 1-based (0 when the problem is the whole input)."""

    def __init__(self, line: int, problem: str, *, source: str = "<input>") -> None:
        self.line = line
        self.problem = problem
        self.source = source
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {problem}")


@dataclass(slots=True)
class ConlluSentence:
    """One sentence exactly as written.

    Attributes:
        comments: comment lines without their newline (``"# text = ..."``).
        rows: every token line split on tabs (10 strings each), in file order: words,
            multiword ranges and empty nodes.
        first_line: 1-based line number of the sentence's first line in its source.
    """

    comments: list[str]
    rows: list[list[str]]
    first_line: int = 0
    _words: list[list[str]] | None = field(default=None, repr=False)

    @property
    def words(self) -> list[list[str]]:
        """The rows of syntactic words (integer IDs), in order."""
        if self._words is None:
            self._words = [row for row in self.rows if _WORD_ID.fullmatch(row[ID])]
        return self._words

    @property
    def sent_id(self) -> str | None:
        """Value of the ``# sent_id = ...`` comment."""
        return _comment_value(self.comments, "sent_id")

    @property
    def text(self) -> str | None:
        """Value of the ``# text = ...`` comment."""
        return _comment_value(self.comments, "text")


def _comment_value(comments: Sequence[str], key: str) -> str | None:
    for line in comments:
        body = line[1:].strip()
        name, sep, value = body.partition("=")
        if sep and name.strip() == key:
            return value.strip()
    return None


def parse_conllu(
    text: str, *, source: str = "<input>", check_trees: bool = True, single_root: bool = True
) -> list[ConlluSentence]:
    """Split CoNLL-U text into sentences, checking it line by line.

    Every sentence ends with a blank line; the file's last one may omit it (written back,
    it gets one). Extra blank lines between sentences are tolerated.

    Args:
        text: the whole file's text.
        source: a name for error messages (a file name).
        check_trees: also require every sentence whose heads are all given to be a tree
            (one ROOT-reaching structure, no cycle). Heads ``_`` everywhere are allowed
            (raw text to be parsed).
        single_root: with ``check_trees``, also refuse a second word on ROOT (a treebank's trees
            have one root; a parser's output may have several and is scored as it is).

    Returns:
        The sentences in order.

    Raises:
        ConlluError: naming the first offending line and what is wrong.

    Examples:
        >>> s = parse_conllu("1\\tHi\\t_\\tINTJ\\t_\\t_\\t0\\troot\\t_\\t_\\n\\n")
        >>> s[0].words[0][FORM]
        'Hi'
    """
    if not text.strip():
        raise ConlluError(0, "the input is empty: no sentence found", source=source)
    sentences: list[ConlluSentence] = []
    current = ConlluSentence([], [], 1)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the text's final newline ends the last line; it is not a blank line
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if "\x00" in line:
            raise ConlluError(number, "holds a NUL character (U+0000), which no text may contain",
                              source=source)
        if not line.strip():
            if line:
                raise ConlluError(number, "a blank line must be empty (found spaces)", source=source)
            if current.rows:
                _check_sentence(current, source, check_trees, single_root)
                sentences.append(current)
            elif current.comments:
                raise ConlluError(number, "comment lines with no token lines after them", source=source)
            current = ConlluSentence([], [], number + 1)  # extra blank lines are tolerated
        elif line.startswith("#"):
            if current.rows:
                raise ConlluError(number, "comment line inside a sentence's token lines", source=source)
            current.comments.append(line)
        else:
            current.rows.append(_split_row(line, number, source))
    if current.rows:  # a final sentence without its blank line is common; accept it
        _check_sentence(current, source, check_trees, single_root)
        sentences.append(current)
    elif current.comments:
        raise ConlluError(len(lines), "comment lines with no token lines after them", source=source)
    return sentences


def _split_row(line: str, number: int, source: str) -> list[str]:
    row = line.split("\t")
    if len(row) != 10:
        raise ConlluError(number, f"expected 10 tab-separated columns, found {len(row)}", source=source)
    for name, value in zip(COLUMNS, row, strict=True):
        if value == "":
            raise ConlluError(number, f"column {name.upper()} is empty (use _)", source=source)
        if name not in ("form", "lemma", "misc") and value != value.strip():
            raise ConlluError(number, f"column {name.upper()} has leading or trailing spaces", source=source)
        if name in NO_SPACE_COLUMNS and any(character.isspace() for character in value):
            raise ConlluError(number, f"column {name.upper()} {value!r} has a space", source=source)
    return row


NO_SPACE_COLUMNS = ("id", "upos", "feats", "head", "deprel", "deps")
"""Columns whose values never hold a space (UD allows them in FORM, LEMMA, XPOS and MISC)."""


def _check_sentence(sentence: ConlluSentence, source: str, check_trees: bool, single_root: bool) -> None:
    first_row = sentence.first_line + len(sentence.comments)
    ranges: list[tuple[int, str, int]] = []
    expected = 1
    for offset, row in enumerate(sentence.rows):
        number = first_row + offset
        token_id = row[ID]
        if _WORD_ID.fullmatch(token_id):
            if int(token_id) != expected:
                problem = "duplicate" if int(token_id) < expected else "out-of-order"
                raise ConlluError(
                    number, f"{problem} word ID {token_id} (expected {expected})", source=source
                )
            expected += 1
        elif match := _RANGE_ID.fullmatch(token_id):
            start, end = int(match[1]), int(match[2])
            if start != expected or end <= start:
                raise ConlluError(number, f"bad multiword range {token_id}", source=source)
            ranges.append((number, token_id, end))
        elif not _EMPTY_ID.fullmatch(token_id):
            raise ConlluError(number, f"ID {token_id!r} is not a word, range or empty-node ID", source=source)
    n_words = expected - 1
    if n_words == 0:
        raise ConlluError(first_row, "sentence has no words (only ranges or empty nodes)", source=source)
    for number, token_id, end in ranges:
        if end > n_words:
            raise ConlluError(number, f"multiword range {token_id} goes past the sentence's last word "
                                      f"({n_words})", source=source)
    heads = _check_heads(sentence, first_row, n_words, source)
    if check_trees and heads is not None:
        _check_tree(heads, sentence, first_row, source, single_root)


def _check_heads(
    sentence: ConlluSentence, first_row: int, n_words: int, source: str
) -> list[int] | None:
    """Validate HEAD values; return them (index 0 = ROOT) or None when all are ``_``."""
    heads = [NO_HEAD]
    unknown = 0
    for offset, row in enumerate(sentence.rows):
        if not _WORD_ID.fullmatch(row[ID]):
            continue
        number = first_row + offset
        if row[HEAD] == "_":
            unknown += 1
            heads.append(NO_HEAD)
            continue
        if not (row[HEAD].isascii() and row[HEAD].isdigit()):  # "０" is a digit, not an ASCII one
            raise ConlluError(number, f"HEAD {row[HEAD]!r} is not an integer", source=source)
        head = int(row[HEAD])
        if head > n_words:
            words = f"{n_words} word{'' if n_words == 1 else 's'}"
            raise ConlluError(number, f"HEAD {head} is out of range (sentence has {words})", source=source)
        if head == int(row[ID]):
            raise ConlluError(number, f"word {row[ID]} is its own head", source=source)
        heads.append(head)
    if unknown == n_words:
        return None
    if unknown:
        offset = next(
            i for i, row in enumerate(sentence.rows) if _WORD_ID.fullmatch(row[ID]) and row[HEAD] == "_"
        )
        line = first_row + offset
        raise ConlluError(line, "HEAD is _ while other words of the sentence have heads", source=source)
    return heads


def _check_tree(heads: list[int], sentence: ConlluSentence, first_row: int, source: str,
                single_root: bool = True) -> None:
    roots = [word for word, head in enumerate(heads) if head == 0]
    if single_root and len(roots) > 1:
        raise ConlluError(_word_line(sentence, first_row, roots[1]),
                          f"a second root: words {roots[0]} and {roots[1]} both have HEAD 0", source=source)
    cycle = find_cycle(heads)
    if cycle:
        word_line = _word_line(sentence, first_row, cycle[0])
        path = " -> ".join(str(word) for word in [*cycle, cycle[0]])
        raise ConlluError(word_line, f"the heads form a cycle: {path}", source=source)


def _word_line(sentence: ConlluSentence, first_row: int, word: int) -> int:
    for offset, row in enumerate(sentence.rows):
        if row[ID] == str(word):
            return first_row + offset
    return first_row


def read_conllu(path: str | Path, *, check_trees: bool = True) -> list[ConlluSentence]:
    """Read and check a CoNLL-U file (UTF-8).

    Raises:
        ConlluError: malformed content or bytes that are not UTF-8 (with the line).
    """
    path = Path(path)
    return parse_conllu(decode_utf8(path.read_bytes(), source=path.name), source=path.name,
                        check_trees=check_trees)


def decode_utf8(data: bytes, *, source: str = "<input>") -> str:
    """Decode UTF-8 bytes (a leading BOM is refused), naming the line of a bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConlluError(line, f"not UTF-8 (byte 0x{data[error.start]:02x})", source=source) from None
    if text.startswith("\ufeff"):
        raise ConlluError(1, "starts with a byte-order mark; save the file as UTF-8 without BOM",
                          source=source)
    return text


def format_conllu(sentences: Iterable[ConlluSentence]) -> str:
    """Write sentences back; the inverse of :func:`parse_conllu` on well-formed files."""
    parts: list[str] = []
    for sentence in sentences:
        parts.extend(line + "\n" for line in sentence.comments)
        parts.extend("\t".join(row) + "\n" for row in sentence.rows)
        parts.append("\n")
    return "".join(parts)


def to_sentence(raw: ConlluSentence) -> Sentence:
    """The syntactic words of ``raw`` as a :class:`~parsing.types.Sentence`."""
    words = raw.words
    heads = [NO_HEAD] + [int(w[HEAD]) if w[HEAD] != "_" else NO_HEAD for w in words]
    return Sentence(
        forms=[ROOT] + [w[FORM] for w in words],
        lemmas=[ROOT] + [w[LEMMA] for w in words],
        upos=[ROOT] + [w[UPOS] for w in words],
        xpos=[ROOT] + [w[XPOS] for w in words],
        feats=[ROOT] + [w[FEATS] for w in words],
        heads=np.array(heads, dtype=np.intp),
        deprels=[""] + [w[DEPREL] for w in words],
        sent_id=raw.sent_id,
    )


def with_parse(raw: ConlluSentence, parse: Parse, *, tags: bool = False) -> ConlluSentence:
    """A copy of ``raw`` whose words carry ``parse``'s HEAD and DEPREL (and UPOS if ``tags``; then
    also LEMMA, XPOS and FEATS where the parse predicted them: ``extras["lemmas"]``, ``["xpos"]``,
    ``["feats"]``, ``n+1`` strings each, as the ``biaffine`` member gives).

    Everything else (comments, ranges, empty nodes, other columns) is kept.
    """
    if len(parse) != len(raw.words):
        raise ValueError(f"parse has {len(parse)} words, sentence has {len(raw.words)}")

    def change(row: list[str], word: int) -> None:
        row[HEAD] = str(int(parse.heads[word]))
        row[DEPREL] = parse.deprels[word] or "_"
        if tags and parse.upos is not None:
            row[UPOS] = parse.upos[word]
        for column, key in ((LEMMA, "lemmas"), (XPOS, "xpos"), (FEATS, "feats")):
            values = parse.extras.get(key) if tags else None
            if isinstance(values, list):
                row[column] = str(values[word]) or "_"  # a CoNLL-U column is never empty
    return _with_words_changed(raw, change)


def with_misc(raw: ConlluSentence, key: str, values: Sequence[str]) -> ConlluSentence:
    """A copy of ``raw`` whose words (``len(values)`` of them, in order) carry ``key=value`` in
    MISC (replacing an earlier ``key``; other attributes kept, ``_`` when MISC was empty).

    Examples:
        >>> s = ConlluSentence([], [["1", "a", "_", "X", "_", "_", "0", "root", "_", "SpaceAfter=No"]])
        >>> with_misc(s, "ArcSource", ["human"]).rows[0][MISC]
        'SpaceAfter=No|ArcSource=human'
    """
    if len(values) != len(raw.words):
        raise ValueError(f"{len(values)} values for {len(raw.words)} words")

    def change(row: list[str], word: int) -> None:
        kept = [item for item in row[MISC].split("|") if item not in ("_", "") and item.split("=")[0] != key]
        row[MISC] = "|".join([*kept, f"{key}={values[word - 1]}"])
    return _with_words_changed(raw, change)


def _with_words_changed(raw: ConlluSentence, change: Callable[[list[str], int], None]) -> ConlluSentence:
    """A copy of ``raw`` with ``change(row, word)`` applied to a copy of each word's row
    (``word`` counts words from 1; ranges and empty nodes are kept as they are)."""
    rows: list[list[str]] = []
    word = 0
    for row in raw.rows:
        new = list(row)
        if _WORD_ID.fullmatch(row[ID]):
            word += 1
            change(new, word)
        rows.append(new)
    return ConlluSentence(list(raw.comments), rows, raw.first_line)


def load_sentences(path: str | Path, *, check_trees: bool = True) -> list[Sentence]:
    """Read a CoNLL-U file straight into :class:`~parsing.types.Sentence` objects.

    ``check_trees=False`` accepts heads that do not form a tree (a system's raw output).
    """
    return [to_sentence(raw) for raw in read_conllu(path, check_trees=check_trees)]


def to_tokenlist(raw: ConlluSentence) -> conllu.TokenList:
    """The sentence as a ``conllu.TokenList`` (parsed by the ``conllu`` package)."""
    return conllu.parse(format_conllu([raw]))[0]
