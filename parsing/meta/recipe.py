"""The meta-feature recipe (Chen et al. 2013, §2.7 of the digest), and what a parser's ``meta``
setting means.

A parser's ``meta`` hyperparameter is a :class:`~parsing.meta.table.MetaTable`, the path of a
saved one (``.npz``), or a spec ``auto[:key=value]...`` (keys ``min_count``, ``top_words``,
``high``, ``middle``; e.g. ``"auto:min_count=1"``). With a spec, fitting the parser first
trains a *baseline*: the same parser without meta features, on the same labelled trees. The
baseline parses the unlabelled text (the training sentences with their trees hidden, plus the
sentences of an optional file), the base features on its predicted arcs are counted and ranked
(:func:`learn_table`), and the parser is then trained from scratch with base + meta features.

Jackknifed tables (``folds``, 5 by default; ``folds=0`` turns them off): the paper's raw text
did not hold its training sentences, but here it does, and the baseline parses them almost
perfectly (it was trained on them). A feature on a training sentence's gold arc is then never
Other, while most wrong candidate arcs' features are: during training, "not Other" all but
marks the gold arc, a signal test sentences do not have (on UD_Tamil-TTB with 400 trees, the
meta parser lost 6 UAS that way). So each training sentence is trained with a table counted
without its fold's parses (:class:`MetaTables`); the full table serves parsing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from sklearn.base import clone

from parsing.meta.table import MetaTable
from parsing.meta.templates import META_BASE_TEMPLATES, meta_rows, tree_keys, word_keys
from parsing.specs import parse_spec
from parsing.types import Parse, Sentence


class Baseline(Protocol):
    """What the recipe needs of a baseline parser."""

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Baseline: ...

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]: ...


@dataclass(frozen=True, slots=True)
class MetaSpec:
    """Settings of a meta table: pruning (``min_count``: the paper used 2 for English, 4 for
    Chinese), the head words of WithWORD (``top_words``: the paper's N = 1000) and the class
    cut positions in percent (``high``, ``middle``: 10 and 30).

    Examples:
        >>> MetaSpec.parse("auto:min_count=1:top_words=500")
        MetaSpec(min_count=1, top_words=500, high=10, middle=30, folds=5)
    """

    min_count: int = 2
    top_words: int = 1000
    high: int = 10
    middle: int = 30
    folds: int = 5

    @classmethod
    def parse(cls, spec: str) -> MetaSpec:
        """Read ``auto[:key=value]...``.

        Raises:
            ValueError: not ``auto``, an unknown key, or a value that is not an integer.
        """
        keys = ("min_count", "top_words", "high", "middle", "folds")
        _, values = parse_spec(spec, ["auto"], {key: key for key in keys}, "meta spec")
        if any(value < 0 for value in values.values()):
            raise ValueError(f"bad meta setting in {spec!r}: settings are not negative")
        return cls(**values)


def head_word_keys(labelled: Sequence[Sentence], top_words: int) -> np.ndarray:
    """Keys of the ``top_words`` most frequent lowercased words of the labelled sentences (ties
    in alphabetical order)."""
    counts = Counter(form.lower() for s in labelled for form in s.forms[1:])
    ranked = sorted(counts, key=lambda w: (-counts[w], w))[:top_words]
    return word_keys(ranked)


def parsed_keys(baseline: Baseline, unlabelled: Sequence[Sentence]) -> list[np.ndarray]:
    """Parse ``unlabelled`` with the fitted ``baseline`` (its ``predict`` ignores any trees) and
    return each sentence's base feature keys on the predicted arcs: ``(n, T)`` per sentence."""
    parses = baseline.predict(unlabelled)
    return [tree_keys(meta_rows(s), p.heads) for s, p in zip(unlabelled, parses, strict=True)]


def table_of_keys(keys: Sequence[np.ndarray], labelled: Sequence[Sentence], spec: MetaSpec) -> MetaTable:
    """Count every template's keys over the sentences' arcs and rank them into classes
    (:meth:`MetaTable.build`); the head words are ``labelled``'s most frequent."""
    width = len(META_BASE_TEMPLATES)
    stacked = np.concatenate([np.zeros((0, width), np.int64), *keys])
    counted = [np.unique(stacked[:, t], return_counts=True) for t in range(width)]
    return MetaTable.build(
        [(k.astype(np.int64), c.astype(np.int64)) for k, c in counted],
        head_words=head_word_keys(labelled, spec.top_words), min_count=spec.min_count,
        top_high=spec.high, top_middle=spec.middle, n_sentences=len(keys),
        n_words=sum(len(k) for k in keys))


def learn_table(baseline: Baseline, unlabelled: Sequence[Sentence], labelled: Sequence[Sentence],
                spec: MetaSpec = MetaSpec()) -> MetaTable:
    """Parse ``unlabelled`` with the fitted ``baseline``, count every base template's features
    over the predicted arcs, and rank them into classes (:meth:`MetaTable.build`).

    Args:
        baseline: a fitted parser (its ``predict`` ignores any trees of ``unlabelled``).
        unlabelled: sentences with words and tags.
        labelled: the labelled training sentences (their frequent words are the head words).
    """
    return table_of_keys(parsed_keys(baseline, unlabelled), labelled, spec)


@dataclass(frozen=True, slots=True)
class MetaTables:
    """The table a parser parses with, and the jackknifed ones it trains with (module
    docstring): training sentence ``i`` uses ``folds[i % len(folds)]`` (``full`` without folds)."""

    full: MetaTable
    folds: tuple[MetaTable, ...] = ()

    def for_training(self, index: int) -> MetaTable:
        """The table training sentence ``index`` is trained with."""
        return self.folds[index % len(self.folds)] if self.folds else self.full


def jackknifed_tables(keys: Sequence[np.ndarray], n_training: int, labelled: Sequence[Sentence],
                      spec: MetaSpec) -> MetaTables:
    """The full table of all sentences' keys, and one table per fold counted without the
    training sentences of that fold (the first ``n_training`` of ``keys``; sentence ``i`` is
    in fold ``i % spec.folds``)."""
    full = table_of_keys(keys, labelled, spec)
    if spec.folds < 2 or n_training < spec.folds:
        return MetaTables(full)
    folds = tuple(table_of_keys([k for i, k in enumerate(keys) if i >= n_training or i % spec.folds != f],
                                labelled, spec) for f in range(spec.folds))
    return MetaTables(full, folds)


def read_unlabelled(path: str | Path, labelled: Sequence[Sentence]) -> list[Sentence]:
    """Sentences of an unlabelled text file: CoNLL-U (``.conllu``; its tags are used, any trees
    ignored) or raw text, one sentence per line split on white space, tagged by a
    :class:`~parsing.tagger.model.Tagger` trained on ``labelled``."""
    from parsing.conllu_io import load_sentences
    from parsing.tagger.model import Tagger

    if str(path).endswith(".conllu"):
        return load_sentences(path)
    with Path(path).open(encoding="utf-8") as handle:
        raw = [Sentence.from_words(line.split()) for line in handle if line.strip()]
    return Tagger().fit(labelled).tag(raw) if raw else []


def resolve_tables(meta: MetaTable | str, parser: object, training: Sequence[Sentence],
                   dev: Sequence[Sentence] | None = None, text: str | None = None) -> MetaTables:
    """The tables a parser's ``meta`` setting names (module docstring).

    Args:
        meta: a table (used as it is), the path of a saved table, or a spec.
        parser: the parser being fitted; a spec's baseline is a clone of it without meta
            features (nor warm start).
        training: its labelled training sentences.
        dev: its dev sentences (the baseline picks its epoch on them, as the parser does).
        text: an unlabelled text file (:func:`read_unlabelled`) added to the training sentences.
    """
    if isinstance(meta, MetaTable):
        return MetaTables(meta)
    if meta.endswith(".npz") or Path(meta).is_file():
        return MetaTables(MetaTable.load(meta))
    spec = MetaSpec.parse(meta)
    baseline: Baseline = clone(parser).set_params(meta=None, meta_text=None, warm_start=False)
    baseline.fit(training, dev)
    unlabelled = list(training) + (read_unlabelled(text, training) if text else [])
    return jackknifed_tables(parsed_keys(baseline, unlabelled), len(training), training, spec)
