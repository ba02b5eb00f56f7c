"""What the training trees say about an arc: configuration counts and variation n-grams.

Every arc ``d -> h`` (label ``u``, its universal part; direction ``dir``: ``L`` when the head
is left of the dependent, ``R`` right of it, ``0`` for ROOT) of a tree adds one to these
*events* (``|`` separates fields; forms and lemmas lowercased; ``hpos`` is ``ROOT`` for ROOT):

============  ==========================================  ====================================
kind          key                                         what it measures
============  ==========================================  ====================================
``C`` / ``CP``  ``hpos dpos u dir`` / ``hpos dpos dir``   the configuration's rarity
                                                          (Dickinson 2010's anomalous rules)
``DL`` / ``D``  ``dpos u`` / ``dpos``                     labels of a tag
``FL`` / ``F``  ``form u`` / ``form``                     labels of a word form
``FT`` / ``F``  ``form dpos`` / ``form``                  tags of a word form (a tag error
                                                          every member parsed with)
``LL`` / ``L``  ``lemma u`` / ``lemma``                   labels of a lemma (``_``: none)
``PL`` / ``P``  ``dform hform dir u`` / ``dform hform dir``  the same word pair with different
                                                          relations (Boyd et al. 2008)
``TL`` / ``T``  ``prev form next u dir`` / ``prev form next``  the same word with the same
                                                          neighbours, labelled differently
``K`` / ``S``   ``dform oform offset``                    the same two words at the same
                                                          distance, linked (``K``) or merely
                                                          seen together (``S``): Boyd et al.'s
                                                          NIL variation, window :data:`WINDOW`
============  ==========================================  ====================================

``S`` events are kept only for word pairs that some tree links (``K``), so the table stays
about the size of the treebank. Keys are stable 63-bit hashes
(:func:`parsing.meta.templates.string_key`) in one sorted array, so a table saves without
pickle (:mod:`parsing.persist`) and looks keys up with one ``searchsorted``.

A tree that is itself one of the counted trees (a gold tree of the training data scored for
its own inconsistencies) is looked up *leaving itself out*: :meth:`TreebankCounts.lookup` with
``own`` subtracts that tree's own events, so a word never vouches for itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.meta.templates import string_key
from parsing.scorer.metrics import universal
from parsing.types import Sentence

WINDOW = 4
"""Largest distance of two words counted as seen together (``S``/``K`` events)."""
START, END = "<s>", "</s>"
"""The neighbours of the first and last word."""
ROOT_TAG = "ROOT"
"""The head tag (and form) of an arc from ROOT."""

IntArray = NDArray[np.int64]


def direction(dep: int, head: int) -> str:
    """``"0"`` for ROOT, ``"L"`` when the head precedes the dependent, else ``"R"``.

    Examples:
        >>> direction(3, 0), direction(3, 1), direction(1, 3)
        ('0', 'L', 'R')
    """
    if head == 0:
        return "0"
    return "L" if head < dep else "R"


def _lower(words: Sequence[str]) -> list[str]:
    return [w.lower() for w in words]


def arc_events(sentence: Sentence, heads: ArrayLike, deprels: Sequence[str], dep: int) -> list[str]:
    """The events (keys, module docstring) of word ``dep``'s arc in the tree ``heads``/``deprels``,
    ``S`` events excluded (they do not depend on the tree)."""
    head = int(np.asarray(heads)[dep])
    forms, lemmas = _lower(sentence.forms), _lower(sentence.lemmas)
    label, way = universal(deprels[dep]), direction(dep, head)
    hpos = ROOT_TAG if head == 0 else sentence.upos[head]
    hform = ROOT_TAG if head == 0 else forms[head]
    dpos, form = sentence.upos[dep], forms[dep]
    prev = forms[dep - 1] if dep > 1 else START
    after = forms[dep + 1] if dep + 1 < len(forms) else END
    events = [f"C|{hpos}|{dpos}|{label}|{way}", f"CP|{hpos}|{dpos}|{way}", f"DL|{dpos}|{label}",
              f"D|{dpos}", f"FL|{form}|{label}", f"F|{form}", f"PL|{form}|{hform}|{way}|{label}",
              f"P|{form}|{hform}|{way}", f"TL|{prev}|{form}|{after}|{label}|{way}",
              f"T|{prev}|{form}|{after}"]
    if lemmas[dep] != "_":
        events += [f"LL|{lemmas[dep]}|{label}", f"L|{lemmas[dep]}"]
    if head != 0 and abs(head - dep) <= WINDOW:
        events.append(link_key(form, hform, head - dep))
    events.append(form_tag_key(form, dpos))
    return events


def form_tag_key(form: str, upos: str) -> str:
    """The ``FT`` event: ``form`` (lowercased) tagged ``upos``. It does not depend on the tree;
    every word adds one, the last of its :func:`arc_events`."""
    return f"FT|{form}|{upos}"


def link_key(form: str, other: str, offset: int) -> str:
    """The ``K`` event: ``form`` attached to ``other``, ``offset`` words away."""
    return f"K|{form}|{other}|{offset}"


def seen_key(form: str, other: str, offset: int) -> str:
    """The ``S`` event: ``form`` and ``other`` in one sentence, ``offset`` words apart."""
    return f"S|{form}|{other}|{offset}"


def seen_events(sentence: Sentence) -> list[str]:
    """Every ``S`` event of a sentence: each word with each other word at most :data:`WINDOW`
    away (both orders)."""
    forms = _lower(sentence.forms)
    n = len(sentence)
    return [seen_key(forms[d], forms[d + offset], offset)
            for d in range(1, n + 1) for offset in range(-WINDOW, WINDOW + 1)
            if offset != 0 and 1 <= d + offset <= n]


def tree_events(sentence: Sentence, heads: ArrayLike | None = None,
                deprels: Sequence[str] | None = None) -> Counter[str]:
    """All events of one tree (the sentence's own tree by default), ``S`` events included."""
    tree = sentence.heads if heads is None else np.asarray(heads)
    labels = sentence.deprels if deprels is None else deprels
    counter: Counter[str] = Counter(seen_events(sentence))
    for dep in range(1, len(sentence) + 1):
        counter.update(arc_events(sentence, tree, labels, dep))
    return counter


def keys_of(events: Iterable[str]) -> IntArray:
    """The 63-bit keys of ``events``, shape ``(len(events),)``."""
    return np.array([string_key(event) for event in events], dtype=np.int64)


@dataclass(slots=True)
class TreebankCounts:
    """Event counts over a set of trees (module docstring).

    Attributes:
        keys: event keys, sorted, shape ``(E,)``; counts: their counts, shape ``(E,)``.
        n_trees, n_words: how many trees and words were counted.
        n_labels: distinct universal labels seen (the smoothing's number of outcomes).
    """

    keys: IntArray
    counts: IntArray
    n_trees: int = 0
    n_words: int = 0
    n_labels: int = 1

    @classmethod
    def build(cls, trees: Sequence[Sentence]) -> TreebankCounts:
        """Count the events of ``trees`` (sentences with their trees filled in).

        Raises:
            ValueError: a sentence without a complete tree.

        Examples:
            >>> s = Sentence.from_words(["a", "dog"], upos=["DET", "NOUN"], heads=[2, 0],
            ...                         deprels=["det", "root"])
            >>> counts = TreebankCounts.build([s])
            >>> counts.lookup(["C|NOUN|DET|det|R", "C|NOUN|DET|det|L", "S|a|dog|1"]).tolist()  # head right
            [1, 0, 1]
        """
        counter: Counter[str] = Counter()
        labels: set[str] = set()
        for i, sentence in enumerate(trees):
            if not sentence.has_tree:
                raise ValueError(f"training tree {i + 1} ({sentence.sent_id or 'no sent_id'}) has words "
                                 "without a head: the detector counts complete trees only")
            counter.update(tree_events(sentence))
            labels.update(universal(label) for label in sentence.deprels[1:])
        linked = {key[2:] for key in counter if key.startswith("K|")}
        kept = {key: count for key, count in counter.items() if not key.startswith("S|") or key[2:] in linked}
        keys = keys_of(kept)
        values = np.fromiter(kept.values(), dtype=np.int64, count=len(kept))
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        unique, start = np.unique(keys, return_index=True)  # a hash collision merges two events
        merged = np.add.reduceat(values, start) if len(values) else values
        return cls(unique.astype(np.int64), merged.astype(np.int64), len(trees),
                   sum(len(s) for s in trees), max(len(labels), 1))

    def lookup(self, events: Sequence[str], own: Counter[str] | None = None) -> IntArray:
        """The count of each event, shape ``(len(events),)``; ``own``'s counts (a counted tree's
        own events, :func:`tree_events`) subtracted, never below 0."""
        keys = keys_of(events)
        found = np.zeros(len(events), dtype=np.int64)
        if len(self.keys) and len(events):
            at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
            hit = self.keys[at] == keys
            found[hit] = self.counts[at[hit]]
        if own:
            found -= np.array([own.get(event, 0) for event in events], dtype=np.int64)
        return np.maximum(found, 0)
