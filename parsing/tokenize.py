"""A rule tokenizer for raw text: sentences, then words, then CoNLL-U without trees.

Language-agnostic and Unicode-aware, so a team can start a treebank from plain text before
any model exists. It is deliberately simple and predictable; annotators fix what it gets
wrong (a word split or merged) before or while they annotate.

Whitespace. Every run of whitespace inside a sentence (spaces, tabs, line breaks) becomes
one space, so a sentence's ``# text`` is one line and the words with their ``SpaceAfter``
give it back exactly: ``"".join(form + (" " if space_after else "") ...)`` (the last word's
space is dropped) equals the sentence.

Sentences (:func:`split_sentences`). Running text is cut

* at blank lines (paragraphs, headings and list items without a full stop stand alone);
* after a terminator: ``. ! ? …``, a run of them (``?!``, ``...``), or another script's
  ``। ॥ 。 ！ ？ ؟ ۔ ። ፧ ።`` and the like (:data:`TERMINATORS`), together with the closing
  quotes and brackets that follow it (``He left."`` ends after the quote), when whitespace
  or the end of the text follows. The full-width terminators of Chinese and Japanese
  (``。！？``) end a sentence even without whitespace after them.

It is not cut

* after a single capital letter and a period (an initial: ``J. R. R. Tolkien``);
* after a dotted abbreviation (``e.g.``, ``U.S.``: a letter, a period, a letter, a period);
* where the next word begins with a lowercase letter (``etc. and``, ``approx. five``): in
  scripts with case a sentence starts with an uppercase letter, a digit or punctuation. This is
  the one abbreviation rule, the same for every language; a title before a name (``Dr. Smith``)
  still ends a sentence, because no language-agnostic rule tells it from ``...to Bob. Then``.

Numbers such as ``3.5`` are never cut, since no whitespace follows their period.

Words (:func:`tokenize`). A word is a run of word characters, by Unicode category: letters
(``L*``), marks (``M*``, so the vowel signs and viramas of Tamil, Telugu and Devanagari stay in
their word), digits and other numbers (``N*``), and the zero-width (non-)joiners ``U+200C`` and
``U+200D`` that Indic scripts use inside words. Inside a word, these join two word characters:

* an apostrophe (``' ’ ʼ``): ``l'homme``, ``don't``, ``O’Brien`` stay one word. Splitting
  clitics (French ``l'``, English ``n't``, Welsh ``'r``) is a language's rule, not a script's,
  and an apostrophe is a letter in some orthographies; a word-initial or word-final
  apostrophe is split off as punctuation;
* a hyphen (``- ‐ ‑``): ``well-known``, ``Jean-Paul``;
* a period or comma between two digits: ``3.5``, ``1,000``, ``12.03.2024``.

URLs (``https://…``, ``www.…``) and e-mail addresses are one word (their trailing
punctuation is split off). Every other character is punctuation or a symbol and becomes a
word of its own, except that a run of the same character stays together (``...``, ``!!``,
``--``).
"""

from __future__ import annotations

import re
import unicodedata

from parsing.conllu_io import ConlluSentence

TERMINATORS = frozenset(".!?…‼⁇⁈⁉।॥。！？｡؟۔።፧፨᙮᠃᠉߹")
"""Characters that end a sentence (Latin, Devanagari and other Indic danda, CJK full-width,
Arabic and Urdu, Ethiopic, Canadian syllabics, Mongolian, N'Ko)."""

NO_SPACE_TERMINATORS = frozenset("。！？｡")
"""Terminators of scripts written without spaces: they end a sentence with no space after."""

CLOSERS = frozenset("\"'”’»›)]}」』】〕〉》）］｝〙〗")
"""Closing quotes and brackets that stay with the sentence they follow."""

APOSTROPHES = frozenset("'’ʼ")
HYPHENS = frozenset("-‐‑")
NUMBER_SEPARATORS = frozenset(".,")
JOINERS = frozenset("\u200c\u200d")

_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")
_EMAIL = re.compile(r"[^\W_][\w.+-]*@[^\W_][\w-]*(?:\.[\w-]+)+")
_URL_TRAILING = ".,;:!?\"')]}»”’"
_SPACES = re.compile(r"\s+")
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")


def normalize_space(text: str) -> str:
    """``text`` with every whitespace run as one space and none at either end."""
    return _SPACES.sub(" ", text).strip()


def split_sentences(text: str) -> list[str]:
    """The sentences of running text, each with its whitespace normalised (see the module doc).

    Examples:
        >>> split_sentences("It costs 3.5 euros. J. Smith paid!  Did he?\\n\\nA heading")
        ['It costs 3.5 euros.', 'J. Smith paid!', 'Did he?', 'A heading']
    """
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        sentences.extend(_split_paragraph(normalize_space(paragraph)))
    return sentences


def _split_paragraph(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    i = 0
    while i < len(text):
        if text[i] not in TERMINATORS:
            i += 1
            continue
        end = i
        while end < len(text) and text[end] in TERMINATORS:
            end += 1
        while end < len(text) and text[end] in CLOSERS:
            end += 1
        if _ends_sentence(text, i, end):
            sentence = text[start:end].strip()
            if sentence:
                sentences.append(sentence)
            start = end
        i = end
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _ends_sentence(text: str, first: int, end: int) -> bool:
    """Whether the terminators ``text[first:end]`` (with closers) end a sentence."""
    if end == len(text):
        return True
    marks = text[first:end]
    if not text[end].isspace():
        return any(mark in NO_SPACE_TERMINATORS for mark in marks)
    following = text[end + 1:end + 2]
    if following and following.islower():
        return False
    if marks == ".":
        before = text[:first].rsplit(" ", 1)[-1].lstrip("\"'“‘«(‹[")
        if len(before) == 1 and before.isupper():
            return False
        if _is_dotted_abbreviation(before + "."):
            return False
    return True


def _is_dotted_abbreviation(word: str) -> bool:
    """``e.g.``, ``U.S.``: letters each followed by a period, at least two of them."""
    parts = word.split(".")
    return len(parts) >= 3 and parts[-1] == "" and all(len(p) == 1 and p.isalpha() for p in parts[:-1])


def is_word_char(char: str) -> bool:
    """A letter, mark or number (by Unicode category), or a zero-width (non-)joiner."""
    return unicodedata.category(char)[0] in "LMN" or char in JOINERS


def tokenize(sentence: str) -> list[tuple[str, bool]]:
    """``(form, space_after)`` for every word of ``sentence`` (see the module doc for the rules).

    ``space_after`` is False where the next word follows without a space; the last word's is
    True. Whitespace runs count as one space.

    Examples:
        >>> tokenize("L'homme paid 1,000.50 (well-known).")  # doctest: +NORMALIZE_WHITESPACE
        [("L'homme", True), ('paid', True), ('1,000.50', True), ('(', False),
         ('well-known', False), (')', False), ('.', True)]
    """
    tokens: list[tuple[str, bool]] = []
    for chunk in sentence.split():
        forms = _split_chunk(chunk)
        tokens.extend((form, i == len(forms) - 1) for i, form in enumerate(forms))
    return tokens


def _split_chunk(chunk: str) -> list[str]:
    """The words of a whitespace-free piece of text."""
    forms: list[str] = []
    i = 0
    while i < len(chunk):
        end = (_special_end(chunk, i) or _emoji_end(chunk, i) or _word_end(chunk, i)
               or _punctuation_end(chunk, i))
        forms.append(chunk[i:end])
        i = end
    return forms


def _special_end(chunk: str, i: int) -> int:
    """The end of a URL or e-mail address starting at ``i``, or 0."""
    if i > 0 and is_word_char(chunk[i - 1]):
        return 0
    match = _URL.match(chunk, i) or _EMAIL.match(chunk, i)
    if match is None:
        return 0
    end = match.end()
    while end > i and chunk[end - 1] in _URL_TRAILING:
        end -= 1
    return end if end > i else 0


def _word_end(chunk: str, i: int) -> int:
    """The end of the word starting at ``i``, or 0 when ``chunk[i]`` is no word character."""
    if not is_word_char(chunk[i]):
        return 0
    end = i + 1
    while end < len(chunk):
        char = chunk[end]
        if is_word_char(char):
            end += 1
        elif end + 1 < len(chunk) and is_word_char(chunk[end + 1]) and _joins(chunk[end - 1], char,
                                                                              chunk[end + 1]):
            end += 2
        else:
            break
    return end


def _joins(before: str, char: str, after: str) -> bool:
    """Whether ``char`` between the word characters ``before`` and ``after`` stays in the word."""
    if char in APOSTROPHES or char in HYPHENS:
        return True
    return char in NUMBER_SEPARATORS and before.isdigit() and after.isdigit()


EMOJI_MODIFIERS = frozenset("\ufe0e\ufe0f\u20e3" + "".join(chr(c) for c in range(0x1F3FB, 0x1F400)))
"""What continues an emoji: variation selectors, the keycap and the five skin tones."""


def _is_regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _emoji_end(chunk: str, i: int) -> int:
    """The end of one emoji of several code points starting at ``i`` (a symbol with its modifiers
    and zero-width-joined symbols, or a pair of regional indicators: a flag), or 0 (a lone
    symbol is punctuation): 👨‍👩‍👧 is one word, not five.

    >>> _emoji_end("\U0001F468\u200d\U0001F469\u200d\U0001F467!", 0)
    5
    """
    if unicodedata.category(chunk[i]) != "So":
        return 0
    if _is_regional(chunk[i]):
        return i + 2 if i + 1 < len(chunk) and _is_regional(chunk[i + 1]) else 0
    end = i + 1
    while end < len(chunk):
        if chunk[end] in EMOJI_MODIFIERS:
            end += 1
        elif chunk[end] == "\u200d" and end + 1 < len(chunk) and unicodedata.category(chunk[end + 1]) == "So":
            end += 2
        else:
            break
    return end if end > i + 1 else 0


def _punctuation_end(chunk: str, i: int) -> int:
    """The end of a run of the same punctuation character starting at ``i``."""
    end = i + 1
    while end < len(chunk) and chunk[end] == chunk[i]:
        end += 1
    return end


def sentence_rows(sentence: str) -> list[list[str]]:
    """The CoNLL-U word lines of one sentence: ID, FORM, ``SpaceAfter=No`` in MISC, else ``_``."""
    return [[str(number), form, "_", "_", "_", "_", "_", "_", "_", "_" if space_after else "SpaceAfter=No"]
            for number, (form, space_after) in enumerate(tokenize(sentence), start=1)]


def sentences_from_text(text: str, *, one_per_line: bool, sent_id_prefix: str) -> list[ConlluSentence]:
    """CoNLL-U sentences without trees from plain text.

    Args:
        text: the text (a file's whole content).
        one_per_line: every non-blank line is one sentence; else the text is running text cut by
            :func:`split_sentences`.
        sent_id_prefix: the ``# sent_id`` of the k-th sentence (from 1) is ``f"{prefix}{k}"``.

    Returns:
        Sentences with ``# sent_id``, ``# text`` (the sentence with normalised whitespace) and
        one line per word whose columns are ``_`` except ID, FORM and ``SpaceAfter=No``.
    """
    if one_per_line:
        texts = [normalize_space(line) for line in text.splitlines()]
    else:
        texts = split_sentences(text)
    sentences: list[ConlluSentence] = []
    for sentence in texts:
        if not sentence:
            continue
        comments = [f"# sent_id = {sent_id_prefix}{len(sentences) + 1}", f"# text = {sentence}"]
        sentences.append(ConlluSentence(comments, sentence_rows(sentence)))
    return sentences
