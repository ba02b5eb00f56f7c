"""The lexicon of a treebank's variation (issue #32; Arborator-Grew's lexicon view): every
form/lemma/UPOS entry whose other columns (FEATS, DEPREL or both) vary across the trees, with
each variant's count and where it occurs.

An entry whose one variant is rare beside a frequent other is a likely inconsistency (the
variation-n-gram idea of Boyd, Dickinson & Meurers 2008, at the word level): :func:`sort_entries`
with ``"rare"`` puts those first. :func:`variant_pattern` writes the Grew pattern that finds
one variant's words, for the search page and for a rule that fixes them. On a treebank's
sentences (``graph_of`` from :mod:`parsing.grew`)::

    entries = lexicon([graph_of(sentence) for sentence in sentences], compare="feats")
    entries[0].form, [(v.feats, v.count) for v in entries[0].variants]
    # ('sy', [('Case=Nom|Number=Sing', 40), ('Case=Acc|Number=Sing', 1)])
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from parsing.grew.graphs import Graph

Compare = Literal["feats", "deprel", "both"]
COMPARED: tuple[Compare, ...] = ("feats", "deprel", "both")
"""Which columns an entry's variants differ in."""
SORTS = ("rare", "ambiguous", "frequent", "form")
"""Orders of :func:`sort_entries`."""
WORD_COLUMNS = frozenset(("form", "lemma", "upos", "xpos"))
"""The node features of a :class:`~parsing.grew.Graph` that are not FEATS (build the graphs
without MISC)."""


@dataclass(frozen=True)
class Variant:
    """One way an entry is annotated: its FEATS (``"_"``: none) and DEPREL (``""`` when
    not compared), how often, and where: ``(graph index, word id)`` in document order."""

    feats: str
    deprel: str
    count: int
    where: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Entry:
    """A form/lemma/UPOS with two or more variants, the most frequent first."""

    form: str
    lemma: str
    upos: str
    variants: tuple[Variant, ...]

    @property
    def total(self) -> int:
        return sum(variant.count for variant in self.variants)

    @property
    def minority_share(self) -> float:
        """The rarest variant's share of the entry's words (low: a likely inconsistency)."""
        return self.variants[-1].count / self.total

    @property
    def entropy(self) -> float:
        """Bits of uncertainty about the variant (high: a truly ambiguous entry)."""
        return -sum(v.count / self.total * math.log2(v.count / self.total) for v in self.variants)


def feats_of(node: dict[str, str]) -> str:
    """A graph node's FEATS as CoNLL-U writes them (``Name=Value|...``, names sorted
    case-insensitively as UD sorts them; ``"_"`` for none)."""
    pairs = sorted(((name, value) for name, value in node.items() if name not in WORD_COLUMNS),
                   key=lambda pair: (pair[0].lower(), pair[0]))
    return "|".join(f"{name}={value}" for name, value in pairs) or "_"


def lexicon(graphs: Iterable[Graph], *, compare: Compare = "feats", min_count: int = 1) -> list[Entry]:
    """The entries of ``graphs`` (built without MISC) whose ``compare`` columns vary, with at
    least ``min_count`` words; in :func:`sort_entries` ``"rare"`` order.

    :raise ValueError: an unknown ``compare``.
    """
    if compare not in COMPARED:
        raise ValueError(f"compare must be one of {', '.join(COMPARED)}, not {compare!r}")
    found: dict[tuple[str, str, str], dict[tuple[str, str], list[tuple[int, int]]]] = {}
    for index, graph in enumerate(graphs):
        for word in range(1, len(graph.heads)):
            node = graph.features[word]
            key = (node.get("form", "_"), node.get("lemma", "_"), node.get("upos", "_"))
            value = (feats_of(node) if compare != "deprel" else "",
                     graph.deprels[word] if compare != "feats" else "")
            found.setdefault(key, {}).setdefault(value, []).append((index, word))
    entries = []
    for (form, lemma, upos), variants in found.items():
        if len(variants) < 2 or sum(len(where) for where in variants.values()) < min_count:
            continue
        ordered = sorted(variants.items(), key=lambda item: (-len(item[1]), item[0]))
        entries.append(Entry(form, lemma, upos, tuple(Variant(feats, deprel, len(where), tuple(where))
                                                      for (feats, deprel), where in ordered)))
    return sort_entries(entries, "rare")


def sort_entries(entries: Sequence[Entry], by: str) -> list[Entry]:
    """``entries`` in the order ``by`` (one of :data:`SORTS`): ``rare`` (smallest minority share
    first, then most words), ``ambiguous`` (highest entropy first), ``frequent`` (most words
    first) or ``form``. :raise ValueError: another order."""
    keys = {
        "rare": lambda e: (e.minority_share, -e.total, e.form, e.lemma, e.upos),
        "ambiguous": lambda e: (-e.entropy, -e.total, e.form, e.lemma, e.upos),
        "frequent": lambda e: (-e.total, e.form, e.lemma, e.upos),
        "form": lambda e: (e.form.casefold(), e.form, e.lemma, e.upos),
    }
    if by not in keys:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {by!r}")
    return sorted(entries, key=keys[by])


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _pairs(feats: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in feats.split("|") if "=" in pair)


def variant_pattern(entry: Entry, variant: Variant, *, edge: bool = False) -> str:
    """A Grew pattern matching exactly the words of ``variant``: the entry's form, lemma and
    UPOS, the variant's features (and the absence of those only other variants have) when
    FEATS are compared, and its incoming relation when DEPREL is (with ``edge``: from a word
    ``H``, the edge named ``e``, for a rule to relabel it; never for ``root``)."""
    tests = [f"form={_quoted(entry.form)}", f"lemma={_quoted(entry.lemma)}", f"upos={_quoted(entry.upos)}"]
    clauses = []
    if any(v.feats for v in entry.variants):  # FEATS compared
        own = _pairs(variant.feats)
        others = {name for v in entry.variants for name in _pairs(v.feats)}
        tests += [f"{name}={_quoted(value)}" for name, value in own.items()]
        tests += [f"!{name}" for name in sorted(others - set(own))]
    if variant.deprel:
        clauses.append(f"e: H -[{variant.deprel}]-> N" if edge else f"* -[{variant.deprel}]-> N")
    body = "; ".join([f"N [{', '.join(tests)}]", *clauses])
    return f"pattern {{ {body} }}"


def variant_rule(entry: Entry, variant: Variant, target: Variant) -> str | None:
    """A Grew rule that annotates the words of ``variant`` as ``target`` (another variant of the
    entry, usually the most frequent): set and delete features, relabel the incoming edge.
    None when that takes a new head (one of the two relations is ``root``) or changes nothing."""
    if "root" in (variant.deprel, target.deprel) and variant.deprel != target.deprel:
        return None
    relabel = variant.deprel != target.deprel
    pattern = variant_pattern(entry, variant, edge=relabel)
    own, wanted = _pairs(variant.feats), _pairs(target.feats)
    commands = [f"N.{name} = {_quoted(value)}" for name, value in wanted.items() if own.get(name) != value]
    commands += [f"del_feat N.{name}" for name in own if name not in wanted]
    if relabel:
        commands.append(f"e.label = {target.deprel}")
    if not commands:
        return None
    return f"rule {{\n  {pattern}\n  commands {{ {'; '.join(commands)} }}\n}}"
