"""Read Grew requests: ``pattern { ... } without { ... }`` text → :class:`~parsing.grew.request.Request`.

The grammar (Grew's, the subset UD annotators use; ``%`` starts a comment; ``;`` between clauses
may be left out)::

    request  := item+
    item     := ("pattern" | "with" | "without") "{" clause* "}"
    clause   := NAME fs ("|" fs)*                           node:   N [upos=NOUN, !Case]
              | [NAME ":"] end arrow end                    edge:   e: N -[nsubj|obj]-> M
              | NAME ("<" | "<<" | ">" | ">>") NAME         order:  N < M
              | NAME "." FEAT ("=" | "<>") (NAME "." FEAT | value)
    fs       := "[" [test ("," test)*] "]"
    test     := FEAT | "!" FEAT | FEAT ("=" | "<>" | "!=") value ("|" value)*
    arrow    := "->" | "-[" ["^"] label ("|" label)* "]->" | "-[" part ("," part)* "]->"
    part     := ("1" | "2") ("=" | "<>") value ("|" value)* | "!" ("1" | "2")
    end      := NAME | "*"
    value    := BARE | "..." | re"..."

A mistake raises :class:`GrewSyntaxError` naming the line, column and what was expected.
"""

from __future__ import annotations

import re
from typing import Literal

from parsing.grew.request import (
    ANY_NODE,
    Clause,
    EdgeClause,
    FeatureConstraint,
    FeatureRef,
    FeatureTest,
    Item,
    LabelTest,
    NodeClause,
    OrderClause,
    Request,
    Value,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FEATURE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[A-Za-z0-9_]+\])?")
_BARE = re.compile(r"[\w.:'@#$&+\-/]+")
_LABEL = re.compile(r"[\w.:@\-]+")
_SPACE = re.compile(r"(?:\s+|%[^\n]*)+")
_ORDERS = ("<<", ">>", "<", ">")
_KEYWORDS = ("pattern", "without", "with")


class GrewSyntaxError(ValueError):
    """A malformed request: ``line`` and ``column`` (1-based) and what was expected there."""

    def __init__(self, text: str, offset: int, expected: str) -> None:
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.expected = expected
        found = _found(text, offset)
        super().__init__(f"line {self.line}, column {self.column}: expected {expected}, found {found}")


def _found(text: str, offset: int) -> str:
    if offset >= len(text):
        return "the end of the request"
    word = re.match(r"\S+", text[offset:])
    return repr(word.group()[:20]) if word else repr(text[offset])


def parse_request(text: str) -> Request:
    """Parse a whole request.

    Examples:
        >>> r = parse_request('pattern { N [upos=NOUN]; H -[obl]-> N } without { N -[case]-> C }')
        >>> [item.kind for item in r.items], r.nodes()
        (['pattern', 'without'], ['N', 'H'])
    """
    return _Reader(text).request()


class _Reader:
    """A cursor over the request text; each method reads one construct or raises."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    # -- lexical helpers ---------------------------------------------------------------
    def skip(self) -> None:
        space = _SPACE.match(self.text, self.at)
        if space:
            self.at = space.end()

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.at)

    def take(self, literal: str) -> bool:
        if self.peek(literal):
            self.at += len(literal)
            return True
        return False

    def expect(self, literal: str, expected: str | None = None) -> None:
        if not self.take(literal):
            raise self.error(expected or repr(literal))

    def error(self, expected: str) -> GrewSyntaxError:
        self.skip()
        return GrewSyntaxError(self.text, self.at, expected)

    def word(self, pattern: re.Pattern[str], expected: str) -> str:
        self.skip()
        found = pattern.match(self.text, self.at)
        if not found:
            raise self.error(expected)
        self.at = found.end()
        return found.group()

    # -- request and items --------------------------------------------------------------
    def request(self) -> Request:
        items: list[Item] = []
        self.skip()
        while self.at < len(self.text):
            items.append(self.item())
            self.skip()
        if not any(item.kind == "pattern" for item in items):
            raise GrewSyntaxError(self.text, self.at, "a 'pattern { ... }' item")
        return Request(tuple(items), text=self.text)

    def item(self) -> Item:
        self.skip()
        line = self.text.count("\n", 0, self.at) + 1
        keyword = self.word(_NAME, "'pattern', 'with' or 'without'") if self.peek_name() else ""
        if keyword not in _KEYWORDS:
            self.at -= len(keyword)
            raise self.error("'pattern', 'with' or 'without'")
        self.expect("{", f"'{{' after '{keyword}'")
        clauses: list[Clause] = []
        while not self.take("}"):
            if self.at >= len(self.text):
                raise self.error("a clause or '}'")
            clauses.append(self.clause())
            self.take(";")
        kind: Literal["pattern", "with", "without"] = keyword  # type: ignore[assignment]
        return Item(kind, tuple(clauses), line)

    def peek_name(self) -> bool:
        self.skip()
        return _NAME.match(self.text, self.at) is not None

    # -- clauses -------------------------------------------------------------------------
    def clause(self) -> Clause:
        if self.take(ANY_NODE):
            return self.edge(ANY_NODE, None)
        first = self.word(_NAME, "a node name, '*' or '}'")
        if self.peek("["):
            return self.node(first)
        if self.peek("-"):
            return self.edge(first, None)
        if self.take("."):
            return self.constraint(first)
        for order in _ORDERS:
            if self.peek(order) and not self.peek("<>"):
                self.at += len(order)
                return self.order(first, order)
        if self.take(":"):
            source = ANY_NODE if self.take(ANY_NODE) else self.word(_NAME, "the edge's source node")
            return self.edge(source, first)
        raise self.error("'[', '->', '-[', '<', '<<', '.', or ':' after a node name")

    def node(self, name: str) -> NodeClause:
        alternatives = [self.feature_structure()]
        while self.take("|"):
            alternatives.append(self.feature_structure())
        return NodeClause(name, tuple(alternatives))

    def feature_structure(self) -> tuple[FeatureTest, ...]:
        self.expect("[")
        tests: list[FeatureTest] = []
        if self.take("]"):
            return ()
        tests.append(self.feature_test())
        while self.take(","):
            tests.append(self.feature_test())
        self.expect("]", "',' or ']' after a feature test")
        return tuple(tests)

    def feature_test(self) -> FeatureTest:
        if self.take("!"):
            return FeatureTest(self.word(_FEATURE, "a feature name after '!'"), "absent")
        name = self.word(_FEATURE, "a feature name or '!'")
        if self.take("="):
            if self.take("*"):
                return FeatureTest(name, "present")
            return FeatureTest(name, "=", self.values())
        if self.take("<>") or self.take("!="):
            return FeatureTest(name, "<>", self.values())
        return FeatureTest(name, "present")

    def values(self) -> tuple[Value, ...]:
        values = [self.value(_BARE)]
        while self.take("|"):
            values.append(self.value(_BARE))
        return tuple(values)

    def value(self, bare: re.Pattern[str]) -> Value:
        self.skip()
        start = self.at
        if self.text.startswith('re"', self.at):
            self.at += 2
            source = self.quoted()
            try:
                return Value(source, re.compile(source))
            except re.error as problem:
                raise GrewSyntaxError(self.text, start, f"a valid regular expression ({problem})") from None
        if self.peek('"'):
            return Value(self.quoted())
        return Value(self.word(bare, "a value, a quoted \"value\" or re\"regex\""))

    def quoted(self) -> str:
        start = self.at
        self.at += 1
        chunks: list[str] = []
        while self.at < len(self.text) and self.text[self.at] != '"':
            if self.text[self.at] == "\\" and self.at + 1 < len(self.text):
                nxt = self.text[self.at + 1]
                chunks.append(nxt if nxt in '"\\' else "\\" + nxt)
                self.at += 2
                continue
            chunks.append(self.text[self.at])
            self.at += 1
        if self.at >= len(self.text):
            raise GrewSyntaxError(self.text, start, "a closing '\"' for this string")
        self.at += 1
        return "".join(chunks)

    def edge(self, source: str, name: str | None) -> EdgeClause:
        if self.take("->"):
            label = LabelTest()
        elif self.take("-["):
            label = self.label()
            self.expect("]->", "'|', ',' or ']->' to close the edge label")
        else:
            raise self.error("'->' or '-[' (an edge)")
        self.skip()
        if source == ANY_NODE and self.peek(ANY_NODE):
            raise self.error("a named node at one end of the edge")
        target = ANY_NODE if self.take(ANY_NODE) else self.word(_NAME, "the edge's target node or '*'")
        return EdgeClause(source, target, label, name)

    def label(self) -> LabelTest:
        self.skip()
        if re.match(r"!?[12]\s*(=|<>|!=|\]|,)", self.text[self.at:]):
            parts = [self.label_part()]
            while self.take(","):
                parts.append(self.label_part())
            return LabelTest(parts=tuple(parts))
        negated = self.take("^")
        values = [self.value(_LABEL)]
        while self.take("|"):
            values.append(self.value(_LABEL))
        return LabelTest(tuple(values), negated)

    def label_part(self) -> FeatureTest:
        if self.take("!"):
            return FeatureTest(self.word(re.compile("[12]"), "'1' or '2' (a label part)"), "absent")
        part = self.word(re.compile("[12]"), "'1' or '2' (a label part)")
        if self.take("="):
            if self.take("*"):
                return FeatureTest(part, "present")
            return FeatureTest(part, "=", self.label_values())
        if self.take("<>") or self.take("!="):
            return FeatureTest(part, "<>", self.label_values())
        raise self.error("'=' or '<>' after a label part")

    def label_values(self) -> tuple[Value, ...]:
        values = [self.value(_LABEL)]
        while self.take("|"):
            values.append(self.value(_LABEL))
        return tuple(values)

    def order(self, first: str, order: str) -> OrderClause:
        second = self.word(_NAME, f"a node name after '{order}'")
        if order.startswith(">"):
            first, second = second, first
        return OrderClause(first, second, immediate=len(order) == 1)

    def constraint(self, node: str) -> FeatureConstraint:
        left = FeatureRef(node, self.word(_FEATURE, f"a feature name after '{node}.'"))
        if self.take("="):
            equal = True
        elif self.take("<>") or self.take("!="):
            equal = False
        else:
            raise self.error("'=' or '<>' in a feature constraint")
        self.skip()
        reference = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.(" + _FEATURE.pattern + ")")
        found = reference.match(self.text, self.at)
        if found:
            self.at = found.end()
            return FeatureConstraint(left, equal, FeatureRef(found.group(1), found.group(2)))
        return FeatureConstraint(left, equal, self.value(_BARE))
