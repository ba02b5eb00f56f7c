"""Vocabularies (string ↔ index) and lemma edit scripts; plain Python, no torch.

A lemma is predicted as an *edit script* from the form (UDPipe's approach, Straka 2018): a
casing rule plus a prefix and a suffix rule over the lower-cased strings, so an unseen word
gets a lemma by the rule of seen words with the same ending (``walked`` → ``walk`` by "drop
``ed``" learned from ``talked``). Scripts that no rule reproduces (suppletion: ``went`` →
``go``) are stored whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

PAD = "<pad>"
UNK = "<unk>"
SPECIALS = 2
"""Index 0 is :data:`PAD`, index 1 :data:`UNK` in every vocabulary; predictions skip both."""

_SEP = "\x1f"
_WHOLE = "="


@dataclass(slots=True)
class Vocabulary:
    """Strings by index: ``items[0] == PAD``, ``items[1] == UNK``, then by decreasing count."""

    items: list[str]
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.items[:SPECIALS] != [PAD, UNK]:
            raise ValueError("a Vocabulary starts with the padding and unknown entries")
        self.index = {item: i for i, item in enumerate(self.items)}

    @classmethod
    def build(cls, values: Iterable[str], *, min_count: int = 1) -> Vocabulary:
        """The values seen at least ``min_count`` times, most frequent first (ties by string).

        Examples:
            >>> Vocabulary.build(["b", "a", "b"]).items
            ['<pad>', '<unk>', 'b', 'a']
        """
        counts = Counter(values)
        kept = sorted((v for v, c in counts.items() if c >= min_count and v not in (PAD, UNK)),
                      key=lambda v: (-counts[v], v))
        return cls([PAD, UNK, *kept])

    def __len__(self) -> int:
        return len(self.items)

    def ids(self, values: Sequence[str]) -> list[int]:
        """Indices of ``values`` (:data:`UNK`'s for unknown ones)."""
        return [self.index.get(value, 1) for value in values]


def _casing(lemma: str) -> str | None:
    """``l`` (lower case), ``u`` (upper case), ``t`` (title case) or None (mixed)."""
    if lemma == lemma.lower():
        return "l"
    if lemma == lemma.upper():
        return "u"
    if lemma == lemma[:1].upper() + lemma[1:].lower():
        return "t"
    return None


def _common_span(first: str, second: str) -> tuple[int, int, int]:
    """The longest common substring: ``(start in first, start in second, length)``."""
    best = (0, 0, 0)
    previous = [0] * (len(second) + 1)
    for i in range(1, len(first) + 1):
        current = [0] * (len(second) + 1)
        for j in range(1, len(second) + 1):
            if first[i - 1] == second[j - 1]:
                current[j] = previous[j - 1] + 1
                if current[j] > best[2]:
                    best = (i - current[j], j - current[j], current[j])
        previous = current
    return best


@lru_cache(maxsize=500_000)
def lemma_script(form: str, lemma: str) -> str:
    """The edit script turning ``form`` into ``lemma`` (:func:`apply_script` inverts it).

    Examples:
        >>> lemma_script("Walked", "walk") == "l" + "\\x1f0\\x1f\\x1f2\\x1f"
        True
        >>> apply_script("Talked", lemma_script("Walked", "walk"))
        'talk'
        >>> apply_script("gone", lemma_script("went", "go"))
        'go'
    """
    casing = _casing(lemma)
    low_form, low_lemma = form.lower(), lemma.lower()
    start_form, start_lemma, length = _common_span(low_form, low_lemma)
    if casing is not None and length > 0:
        script = _SEP.join((casing, str(start_form), low_lemma[:start_lemma],
                            str(len(low_form) - start_form - length), low_lemma[start_lemma + length:]))
        if apply_script(form, script) == lemma:
            return script
    return _WHOLE + lemma


def apply_script(form: str, script: str) -> str:
    """The lemma that ``script`` (from :func:`lemma_script`) makes of ``form``; a script that does
    not fit the form (it would cut more than the form has, or leave nothing: a CoNLL-U lemma is
    never empty) gives the form itself.

    Examples:
        >>> apply_script("a", lemma_script("cd", "d"))  # cuts one letter: nothing left of "a"
        'a'
    """
    if script.startswith(_WHOLE):
        return script[len(_WHOLE):] or form
    parts = script.split(_SEP)
    if len(parts) != 5:
        return form
    casing, cut_prefix, add_prefix, cut_suffix, add_suffix = parts
    low = form.lower()
    head, tail = int(cut_prefix), int(cut_suffix)
    if head + tail > len(low) or (head + tail == len(low) and not add_prefix and not add_suffix):
        return form
    core = add_prefix + low[head:len(low) - tail] + add_suffix
    if casing == "u":
        return core.upper()
    if casing == "t":
        return core[:1].upper() + core[1:]
    return core
