"""Checks a tree must pass before it is saved, and the facts the editor shows beside it.

Errors (the tree is refused): a word without a head or label, a head outside the sentence,
not exactly one word attached to ROOT, a cycle, a label outside the treebank's label inventory
(:func:`app.services.settings.label_inventory`; the refusal says how a curator adds one).
Facts (shown, not refused): which arcs are non-projective.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

UD_RELATIONS: tuple[str, ...] = (
    "acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf", "compound",
    "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated", "expl", "fixed", "flat",
    "goeswith", "iobj", "list", "mark", "nmod", "nsubj", "nummod", "obj", "obl", "orphan",
    "parataxis", "punct", "reparandum", "root", "vocative", "xcomp",
)
"""The 37 universal dependency relations of UD v2."""


@dataclass(frozen=True, slots=True)
class TreeError:
    """One problem; ``word`` is the 1-based word it concerns (0 for the whole tree); ``field``
    names the word column it is about (``upos``, ``feats``, ...) when it is not the tree."""

    word: int
    code: str
    message: str
    field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``field`` only when set)."""
        found = {"word": self.word, "code": self.code, "message": self.message}
        return found if self.field is None else {**found, "field": self.field}


def allowed_labels(treebank_labels: Iterable[str]) -> list[str]:
    """UD's universal relations plus every label the treebank uses (subtypes included)."""
    return sorted(set(UD_RELATIONS) | {label for label in treebank_labels if label and label != "_"})


def find_cycle(heads: Sequence[int]) -> list[int] | None:
    """The words of one cycle (1-based, over words 1..n; ``heads[i-1]`` is word i's head)."""
    n = len(heads)
    state = [0] * (n + 1)
    for start in range(1, n + 1):
        path: list[int] = []
        word = start
        while 0 < word <= n and state[word] == 0:
            state[word] = 1
            path.append(word)
            word = heads[word - 1]
        if 0 < word <= n and state[word] == 1:
            return path[path.index(word):]
        for visited in path:
            state[visited] = 2
    return None


def validate_tree(
    heads: Sequence[int | None], deprels: Sequence[str | None], labels: Iterable[str]
) -> list[TreeError]:
    """Every reason not to save this tree (empty when it is well formed)."""
    n = len(heads)
    errors: list[TreeError] = []
    if len(deprels) != n:
        return [TreeError(0, "length", f"{n} heads but {len(deprels)} labels")]
    for word, head in enumerate(heads, start=1):
        if head is None or not isinstance(head, int) or isinstance(head, bool):
            errors.append(TreeError(word, "no-head", f"word {word} has no head"))
        elif not 0 <= head <= n or head == word:
            errors.append(TreeError(word, "bad-head", f"word {word} cannot attach to {head}"))
    if errors:
        return errors
    whole = [int(h) for h in heads if h is not None]
    roots = [word for word, head in enumerate(whole, start=1) if head == 0]
    if len(roots) != 1:
        found = ", ".join(map(str, roots)) or "none"
        errors.append(TreeError(roots[1] if len(roots) > 1 else 0, "roots",
                                f"exactly one word must attach to ROOT (found {found})"))
    cycle = find_cycle(whole)
    if cycle:
        errors.append(TreeError(cycle[0], "cycle",
                                "cycle: " + " → ".join(map(str, [*cycle, cycle[0]]))))
    known = set(allowed_labels(labels))
    for word, label in enumerate(deprels, start=1):
        if not label or label == "_":
            errors.append(TreeError(word, "no-label", f"word {word} has no label"))
        elif label not in known:
            errors.append(TreeError(word, "label", unknown_label(label, word)))
        elif (label == "root") != (whole[word - 1] == 0):
            errors.append(TreeError(word, "root-label",
                                    f"word {word}: only the word attached to ROOT is labelled root"))
    return errors


UNKNOWN_LABEL_HINT = "not in this treebank's labels: a curator adds it on the treebank's Settings page"
"""How to get an unknown label accepted (the same words in ``static/js/tree-model.js``)."""


def unknown_label(label: str, word: int) -> str:
    """The refusal of a label outside the treebank's inventory, saying how to add it."""
    return f"unknown label {label!r} on word {word} ({UNKNOWN_LABEL_HINT})"


def non_projective(heads: Sequence[int]) -> list[int]:
    """Words whose arc crosses another arc (ROOT arcs included), 1-based."""
    arcs = [(min(w, h), max(w, h), w) for w, h in enumerate(heads, start=1) if h is not None]
    crossing: set[int] = set()
    for lo, hi, word in arcs:
        for lo2, hi2, word2 in arcs:
            if lo < lo2 < hi < hi2:
                crossing.update((word, word2))
    return sorted(crossing)


def differing_words(
    first: tuple[Sequence[Any], Sequence[Any]], second: tuple[Sequence[Any], Sequence[Any]]
) -> list[int]:
    """1-based words whose head or label differ between two ``(heads, deprels)`` trees."""
    return [
        word for word, (h1, l1, h2, l2) in enumerate(zip(*first, *second, strict=True), start=1)
        if h1 != h2 or l1 != l2
    ]
