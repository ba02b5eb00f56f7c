"""Grew rewriting rules: a request, then ``commands { ... }`` applied to every match.

    rule { pattern { H -[obl]-> N; N -[case]-> C; C [lemma="by"] } commands { del_edge e; ... } }

The ``rule { }`` wrapper is optional. Commands (Grew's syntax, the subset that keeps a tree)::

    del_edge e;                  del_edge N -[obl]-> M;     (the edge must exist)
    add_edge N -[obj]-> M;       (M must be without a head by then: a word has one head)
    e.label = obl:agent;         (change a named edge's label)
    N.Case = Acc;  N.lemma = "be";  N.upos = M.upos;        (set a feature or a column)
    del_feat N.Case;             (delete a feature; columns lemma/upos/xpos become "_")

Each sentence's matches are found on its tree as it was, then applied one after another; a match
that no longer holds once earlier ones changed the tree is skipped, and a match whose commands
would leave a word without a head, with two, or in a cycle is refused: the result is always a
tree (:class:`SentenceRewrite` lists both). ``form`` cannot be changed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from parsing.grew.graphs import Corpus, Graph
from parsing.grew.matcher import Binding, Matcher
from parsing.grew.request import ANY_NODE, EdgeClause, FeatureRef, LabelTest, Request, Value
from parsing.grew.syntax import _FEATURE, _LABEL, _NAME, GrewSyntaxError, _Reader

COLUMNS = ("form", "lemma", "upos", "xpos")
"""Node features that are CoNLL-U columns; the other features are FEATS."""


@dataclass(frozen=True)
class DelEdge:
    """Remove the edge named ``edge`` or the edge ``source -[label]-> target``."""

    edge: str | None = None
    source: str = ""
    target: str = ""
    label: LabelTest = field(default_factory=LabelTest)


@dataclass(frozen=True)
class AddEdge:
    """Add ``source -[label]-> target``."""

    source: str
    target: str
    label: str


@dataclass(frozen=True)
class SetLabel:
    """``e.label = value``."""

    edge: str
    label: str


@dataclass(frozen=True)
class SetFeature:
    """``N.feature = value`` or ``N.feature = M.other``."""

    node: str
    feature: str
    value: Value | FeatureRef


@dataclass(frozen=True)
class DelFeature:
    """``del_feat N.feature``."""

    node: str
    feature: str


Command = DelEdge | AddEdge | SetLabel | SetFeature | DelFeature


@dataclass(frozen=True)
class Rule:
    """A request and the commands applied to each match."""

    request: Request
    commands: tuple[Command, ...]
    text: str = ""


def parse_rule(text: str) -> Rule:
    """Parse ``[rule [NAME] {] pattern {...} ... commands {...} [}]``.

    Examples:
        >>> rule = parse_rule("pattern { e: H -[obl]-> N } commands { e.label = obj }")
        >>> rule.commands
        (SetLabel(edge='e', label='obj'),)
    """
    return _RuleReader(text).rule()


class _RuleReader(_Reader):
    def rule(self) -> Rule:
        wrapped = self._opening()
        items, commands = [], None
        while not (self.peek("}") if wrapped else self._at_end()):
            if self._at_end():
                raise self.error("'}' to close the rule")
            if self.peek("commands"):
                if commands is not None:
                    raise self.error("one 'commands { ... }' block")
                self.at += len("commands")
                commands = self.commands()
            else:
                items.append(self.item())
        if wrapped:
            self.expect("}")
            if not self._at_end():
                raise self.error("the end of the rule")
        if commands is None:
            raise self.error("a 'commands { ... }' block")
        if not any(item.kind == "pattern" for item in items):
            raise GrewSyntaxError(self.text, 0, "a 'pattern { ... }' item")
        rule = Rule(Request(tuple(items), self.text), tuple(commands), self.text)
        _check_names(rule, self.text, self.offsets)
        return rule

    def _opening(self) -> bool:
        self.skip()
        if not self.text.startswith("rule", self.at):
            return False
        self.at += len("rule")
        if self.peek_name():
            self.word(_NAME, "a rule name")
        self.expect("{", "'{' after 'rule'")
        return True

    def _at_end(self) -> bool:
        self.skip()
        return self.at >= len(self.text)

    def commands(self) -> list[Command]:
        self.expect("{", "'{' after 'commands'")
        found: list[Command] = []
        self.offsets: list[int] = []
        while not self.take("}"):
            if self._at_end():
                raise self.error("a command or '}'")
            self.offsets.append(self.at)
            found.append(self.command())
            self.take(";")
        return found

    def command(self) -> Command:
        if self.take("del_edge"):
            return self._del_edge()
        if self.take("add_edge"):
            source = self.word(_NAME, "the new edge's source node")
            self.expect("-[", "'-[' (add_edge needs a label)")
            label = self.word(_LABEL, "the new edge's label")
            self.expect("]->", "']->'")
            return AddEdge(source, self.word(_NAME, "the new edge's target node"), label)
        if self.take("del_feat"):
            node = self.word(_NAME, "a node name after 'del_feat'")
            self.expect(".", "'.' after the node name")
            return DelFeature(node, self.word(_FEATURE, "a feature name"))
        node = self.word(_NAME, _COMMANDS)
        self.expect(".", "'.' after the node or edge name")
        feature = self.word(_FEATURE, "a feature name or 'label'")
        self.expect("=", "'=' (a command sets a value)")
        if feature == "label":
            return SetLabel(node, self.value(_LABEL).text)
        self.skip()
        reference = _FEATURE_REF.match(self.text, self.at)
        if reference:
            self.at = reference.end()
            return SetFeature(node, feature, FeatureRef(reference.group(1), reference.group(2)))
        return SetFeature(node, feature, self.value(_VALUE))

    def _del_edge(self) -> DelEdge:
        first = self.word(_NAME, "an edge name or its source node")
        if not self.peek("-"):
            return DelEdge(edge=first)
        edge = self.edge(first, None)
        return DelEdge(source=edge.source, target=edge.target, label=edge.label)


_FEATURE_REF = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.(" + _FEATURE.pattern + r")(?![\w\[])")
_COMMANDS = "a command (del_edge, add_edge, del_feat, N.feature = value, e.label = value)"
_VALUE = re.compile(r"[\w.:'@#$&+\-/]+")


def _check_names(rule: Rule, text: str, offsets: list[int]) -> None:
    """Commands may name only pattern nodes and named edges; ``form`` stays. An error points at
    the command (``offsets``: where each starts)."""
    nodes, edges = set(rule.request.nodes()), set(rule.request.edge_names())
    for command, at in zip(rule.commands, offsets, strict=True):
        named_edge = command.edge if isinstance(command, (DelEdge, SetLabel)) else None
        if named_edge is not None and named_edge not in edges:
            raise GrewSyntaxError(text, at, f"an edge named in the pattern, not {named_edge!r}")
        if named_edge is not None and rule.request.edge_names()[named_edge].target == ANY_NODE:
            raise GrewSyntaxError(text, at, f"an edge whose dependent is a node, not * (edge {named_edge!r})")
        for node in _command_nodes(command):
            if node not in nodes:
                raise GrewSyntaxError(text, at, f"a node of the pattern, not {node!r}")
        if isinstance(command, (SetFeature, DelFeature)) and command.feature == "form":
            raise GrewSyntaxError(text, at, "a feature other than form (words stay as written)")


def _command_nodes(command: Command) -> tuple[str, ...]:
    if isinstance(command, (AddEdge,)) or (isinstance(command, DelEdge) and command.edge is None):
        return (command.source, command.target)
    if isinstance(command, SetFeature):
        extra = (command.value.node,) if isinstance(command.value, FeatureRef) else ()
        return (command.node, *extra)
    if isinstance(command, DelFeature):
        return (command.node,)
    return ()


@dataclass
class Tree:
    """A mutable copy of a graph's tree and node features."""

    heads: list[int]
    deprels: list[str]
    features: list[dict[str, str]]

    @classmethod
    def of(cls, graph: Graph) -> Tree:
        return cls(list(graph.heads), list(graph.deprels), [dict(f) for f in graph.features])

    def graph(self, sent_id: str | None = None) -> Graph:
        return Graph(self.features, self.heads, self.deprels, sent_id)

    def is_tree(self) -> bool:
        """Every word has one head and following heads from any word reaches ROOT."""
        n = len(self.heads) - 1
        if any(head < 0 or head > n for head in self.heads[1:]):
            return False
        for start in range(1, n + 1):
            seen, word = set(), start
            while word != 0:
                if word in seen:
                    return False
                seen.add(word)
                word = self.heads[word]
        return True

    def feats(self, word: int) -> str:
        """The FEATS string of ``word`` (names sorted case-insensitively, as UD writes them)."""
        pairs = sorted(((k, v) for k, v in self.features[word].items() if k not in COLUMNS),
                       key=lambda kv: kv[0].lower())
        return "|".join(f"{k}={v}" for k, v in pairs) or "_"


class RuleError(ValueError):
    """A command that cannot run on this match (its edge is missing, a head would be doubled)."""


def _edge_of(rule: Rule, name: str, binding: Binding, tree: Tree) -> tuple[int, int]:
    """(head, dependent) of a named edge; an anonymous head (``*``) is the dependent's head."""
    clause: EdgeClause = rule.request.edge_names()[name]
    target = binding[clause.target]
    if clause.source != ANY_NODE:
        return binding[clause.source], target
    if tree.heads[target] < 0:
        raise RuleError(f"edge {name} is no longer there")
    return tree.heads[target], target


def run_command(rule: Rule, command: Command, tree: Tree, binding: Binding) -> None:
    """Apply one command to ``tree`` in place; :class:`RuleError` when it cannot."""
    if isinstance(command, DelEdge):
        source, target = (_edge_of(rule, command.edge, binding, tree) if command.edge
                          else (binding[command.source], binding[command.target]))
        wrong_label = command.edge is None and not command.label.accepts(tree.deprels[target])
        if tree.heads[target] != source or wrong_label:
            raise RuleError("the edge to delete is not there")
        tree.heads[target], tree.deprels[target] = -1, "_"
    elif isinstance(command, AddEdge):
        source, target = binding[command.source], binding[command.target]
        if tree.heads[target] == source and tree.deprels[target] == command.label:
            return
        if tree.heads[target] >= 0:
            raise RuleError(f"word {target} already has a head")
        tree.heads[target], tree.deprels[target] = source, command.label
    elif isinstance(command, SetLabel):
        source, target = _edge_of(rule, command.edge, binding, tree)
        if tree.heads[target] != source:
            raise RuleError("the edge to relabel is not there")
        tree.deprels[target] = command.label
    elif isinstance(command, SetFeature):
        value = command.value
        if isinstance(value, FeatureRef):
            copied = tree.features[binding[value.node]].get(value.feature)
            if copied is None:
                raise RuleError(f"{value.node}.{value.feature} is not defined")
            text = copied
        else:
            text = value.text
        tree.features[binding[command.node]][command.feature] = text
    else:
        node = tree.features[binding[command.node]]
        if command.feature in COLUMNS:
            node[command.feature] = "_"
        else:
            node.pop(command.feature, None)


@dataclass
class SentenceRewrite:
    """What a rule did to one sentence: the new tree, the matches applied and those refused."""

    sentence: int
    sent_id: str | None
    tree: Tree
    applied: list[Binding] = field(default_factory=list)
    refused: list[tuple[Binding, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def rewrite(rule: Rule, corpus: Corpus, *, seconds: float | None = None) -> list[SentenceRewrite]:
    """Apply ``rule`` to every graph of ``corpus`` with a match (the corpus is not changed).

    :raise SearchTooLong: finding the matches took more than ``seconds``.
    """
    matcher = Matcher(rule.request)
    deadline = None if seconds is None else time.monotonic() + seconds
    results: list[SentenceRewrite] = []
    for index in matcher.sentences(corpus):
        graph = corpus.graphs[index]
        bindings = list(matcher.matches_in(corpus, index, deadline))
        if not bindings:
            continue
        result = SentenceRewrite(index, graph.sent_id, Tree.of(graph))
        for binding in bindings:
            _apply_match(rule, matcher, result, binding)
        results.append(result)
    return results


def _apply_match(rule: Rule, matcher: Matcher, result: SentenceRewrite, binding: Binding) -> None:
    current = Corpus([result.tree.graph()])
    if not matcher.holds_at(current, 0, binding):
        return
    trial = Tree(list(result.tree.heads), list(result.tree.deprels), [dict(f) for f in result.tree.features])
    try:
        for command in rule.commands:
            run_command(rule, command, trial, binding)
    except RuleError as problem:
        result.refused.append((binding, str(problem)))
        return
    if not trial.is_tree():
        result.refused.append((binding, "the result would not be a tree"))
        return
    if trial != result.tree:
        result.tree = trial
        result.applied.append(binding)
