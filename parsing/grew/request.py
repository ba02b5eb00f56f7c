"""What a parsed Grew request is: items of clauses over named nodes (see :mod:`parsing.grew`).

A request is a list of :class:`Item` s: ``pattern`` items (their clauses together must match),
``with`` items (the match must extend to them) and ``without`` items (it must not). Each item is a
list of clauses: :class:`NodeClause`, :class:`EdgeClause`, :class:`OrderClause`,
:class:`FeatureConstraint`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

ANY_NODE = "*"
"""The anonymous end of an edge clause (``* -[root]-> N``): any word, or ROOT, never bound."""


@dataclass(frozen=True)
class Value:
    """One value a feature or label may take: a literal, or a regular expression (``re"..."``)
    that must match the whole value."""

    text: str
    regex: re.Pattern[str] | None = None

    def matches(self, value: str) -> bool:
        """True if ``value`` is this literal or matches this regular expression whole."""
        if self.regex is None:
            return value == self.text
        return self.regex.fullmatch(value) is not None


@dataclass(frozen=True)
class FeatureTest:
    """One test on a node's feature ``name``.

    ``op``: ``"="`` (defined, one of ``values``), ``"<>"`` (defined, none of ``values``),
    ``"present"`` (defined), ``"absent"`` (not defined).
    """

    name: str
    op: Literal["=", "<>", "present", "absent"]
    values: tuple[Value, ...] = ()

    def accepts(self, features: dict[str, str]) -> bool:
        """True if the node with ``features`` passes this test."""
        value = features.get(self.name)
        if self.op == "absent":
            return value is None
        if value is None:
            return False
        if self.op == "present":
            return True
        hit = any(v.matches(value) for v in self.values)
        return hit if self.op == "=" else not hit

    @property
    def literals(self) -> tuple[str, ...] | None:
        """The literal values an ``=`` test accepts, or None when it is not such a test (an index
        can answer it)."""
        if self.op != "=" or any(v.regex is not None for v in self.values):
            return None
        return tuple(v.text for v in self.values)


@dataclass(frozen=True)
class NodeClause:
    """``N [tests] | [tests]``: the node passes every test of at least one alternative."""

    node: str
    alternatives: tuple[tuple[FeatureTest, ...], ...]

    def accepts(self, features: dict[str, str]) -> bool:
        """True if ``features`` pass one alternative whole."""
        return any(all(test.accepts(features) for test in tests) for tests in self.alternatives)


@dataclass(frozen=True)
class LabelTest:
    """The label part of an edge clause.

    ``values`` empty and ``parts`` empty: any label (``N -> M``). Otherwise the label must be one
    of ``values`` (none of them when ``negated``: ``-[^punct]->``), or pass every test of
    ``parts`` on its pieces ``1`` (before the first ``:``) and ``2`` (after it):
    ``-[1=nsubj]->`` matches ``nsubj`` and ``nsubj:pass``; ``-[nsubj]->`` only ``nsubj``.
    """

    values: tuple[Value, ...] = ()
    negated: bool = False
    parts: tuple[FeatureTest, ...] = ()

    def accepts(self, label: str) -> bool:
        """True if an edge labelled ``label`` passes."""
        if self.parts:
            main, colon, sub = label.partition(":")
            pieces = {"1": main, **({"2": sub} if colon else {})}
            return all(test.accepts(pieces) for test in self.parts)
        if not self.values:
            return True
        hit = any(value.matches(label) for value in self.values)
        return hit != self.negated

    @property
    def literals(self) -> tuple[str, ...] | None:
        """The exact labels accepted, or None when the test is not a plain list of literals."""
        if self.negated or self.parts or not self.values or any(v.regex for v in self.values):
            return None
        return tuple(v.text for v in self.values)


@dataclass(frozen=True)
class EdgeClause:
    """``[name:] source -[label]-> target``; either end may be :data:`ANY_NODE`."""

    source: str
    target: str
    label: LabelTest
    name: str | None = None


@dataclass(frozen=True)
class OrderClause:
    """``before < after`` (immediately: ``after == before + 1``) or ``before << after``."""

    before: str
    after: str
    immediate: bool


@dataclass(frozen=True)
class FeatureRef:
    """``N.feature`` on the left or right of a :class:`FeatureConstraint`."""

    node: str
    feature: str


@dataclass(frozen=True)
class FeatureConstraint:
    """``N.f = M.g``, ``N.f <> M.g``, ``N.f = value`` or ``N.f <> value``; both sides defined."""

    left: FeatureRef
    equal: bool
    right: FeatureRef | Value


Clause = NodeClause | EdgeClause | OrderClause | FeatureConstraint


@dataclass(frozen=True)
class Item:
    """One ``pattern``, ``with`` or ``without`` block."""

    kind: Literal["pattern", "with", "without"]
    clauses: tuple[Clause, ...]
    line: int = 1

    def nodes(self) -> list[str]:
        """Node names the clauses mention, in first-mention order (without :data:`ANY_NODE`)."""
        names: dict[str, None] = {}
        for clause in self.clauses:
            for name in clause_nodes(clause):
                names.setdefault(name, None)
        return list(names)


def clause_nodes(clause: Clause) -> tuple[str, ...]:
    """The node names ``clause`` refers to (:data:`ANY_NODE` left out)."""
    if isinstance(clause, NodeClause):
        names: tuple[str, ...] = (clause.node,)
    elif isinstance(clause, EdgeClause):
        names = (clause.source, clause.target)
    elif isinstance(clause, OrderClause):
        names = (clause.before, clause.after)
    else:
        right = (clause.right.node,) if isinstance(clause.right, FeatureRef) else ()
        names = (clause.left.node, *right)
    return tuple(name for name in names if name != ANY_NODE)


@dataclass(frozen=True)
class Request:
    """A whole request: ``pattern`` items (their union of clauses), then filters."""

    items: tuple[Item, ...]
    text: str = field(default="", compare=False)

    @property
    def positive(self) -> tuple[Clause, ...]:
        """Every clause of every ``pattern`` item."""
        return tuple(c for item in self.items if item.kind == "pattern" for c in item.clauses)

    @property
    def filters(self) -> tuple[Item, ...]:
        """The ``with`` and ``without`` items, in order."""
        return tuple(item for item in self.items if item.kind != "pattern")

    def nodes(self) -> list[str]:
        """The pattern's node names, in first-mention order: the keys of every match."""
        return Item("pattern", self.positive).nodes()

    def edge_names(self) -> dict[str, EdgeClause]:
        """Named edges of the ``pattern`` items (``e: N -> M``), by name."""
        return {c.name: c for c in self.positive if isinstance(c, EdgeClause) and c.name}
