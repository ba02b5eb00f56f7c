"""Find every match of a request in a corpus: node name → word id, distinct nodes on distinct
words (injective, as in Grew).

How it stays fast: the corpus index narrows the sentences to those holding a literal value a
pattern node or edge asks for (``upos=NOUN``, ``-[obl]->``); in a sentence, each node's candidate
words come from the index or one pass over the words; nodes are then bound one at a time, a node
joined by an edge to a bound one taking only that one's children (or head), and every clause is
checked as soon as its nodes are bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from parsing.grew.graphs import DEPREL, Corpus, Graph
from parsing.grew.request import (
    ANY_NODE,
    Clause,
    EdgeClause,
    FeatureConstraint,
    FeatureRef,
    Item,
    NodeClause,
    OrderClause,
    Request,
    clause_nodes,
)
from parsing.grew.syntax import parse_request

Binding = dict[str, int]
"""Node name → word id (1-based)."""


@dataclass(frozen=True)
class Match:
    """One match: the graph's index in the corpus, its ``sent_id`` and the bound words."""

    sentence: int
    sent_id: str | None
    nodes: Binding


def holds(clause: Clause, graph: Graph, binding: Binding) -> bool:
    """True if ``clause`` holds in ``graph`` with its nodes bound by ``binding``."""
    if isinstance(clause, NodeClause):
        return clause.accepts(graph.features[binding[clause.node]])
    if isinstance(clause, EdgeClause):
        return _edge_holds(clause, graph, binding)
    if isinstance(clause, OrderClause):
        before, after = binding[clause.before], binding[clause.after]
        return after == before + 1 if clause.immediate else before < after
    return _constraint_holds(clause, graph, binding)


def _edge_holds(edge: EdgeClause, graph: Graph, binding: Binding) -> bool:
    if edge.target == ANY_NODE:
        return any(edge.label.accepts(graph.deprels[child]) for child in graph.children[binding[edge.source]])
    target = binding[edge.target]
    head = graph.heads[target]
    if head < 0 or not edge.label.accepts(graph.deprels[target]):
        return False
    return edge.source == ANY_NODE or head == binding[edge.source]


def _constraint_holds(clause: FeatureConstraint, graph: Graph, binding: Binding) -> bool:
    left = graph.features[binding[clause.left.node]].get(clause.left.feature)
    if left is None:
        return False
    if isinstance(clause.right, FeatureRef):
        right = graph.features[binding[clause.right.node]].get(clause.right.feature)
        if right is None:
            return False
        return (left == right) == clause.equal
    return clause.right.matches(left) == clause.equal


class _Plan:
    """How to extend a binding of ``bound`` nodes with the other nodes of ``clauses``."""

    def __init__(self, clauses: Sequence[Clause], bound: Sequence[str]) -> None:
        self.clauses = tuple(clauses)
        self.new = [name for name in Item("pattern", self.clauses).nodes() if name not in bound]
        new = set(self.new)
        self.unary = {name: [c for c in self.clauses if set(clause_nodes(c)) == {name}] for name in self.new}
        self.tests = {name: [_word_test(c, name) for c in clauses] for name, clauses in self.unary.items()}
        self.indexed = {name: next((i for i in map(_indexed, clauses) if i is not None), None)
                        for name, clauses in self.unary.items()}
        self.checks = [c for c in self.clauses if not set(clause_nodes(c)) & new]
        self.joins = [c for c in self.clauses if len(set(clause_nodes(c))) > 1 and set(clause_nodes(c)) & new]
        self.join_nodes = [(c, frozenset(clause_nodes(c))) for c in self.joins]

    def candidates(self, corpus: Corpus, index: int, name: str) -> list[int]:
        """Words of graph ``index`` passing every clause on ``name`` alone."""
        graph = corpus.graphs[index]
        words: list[int] | None = None
        indexed = self.indexed[name]
        if indexed is not None:
            words = corpus.words_with(indexed[0], indexed[1], index)
        pool = range(1, len(graph.heads)) if words is None else words
        tests = self.tests[name]
        return [w for w in pool if all(test(graph, w) for test in tests)]

    def extend(self, corpus: Corpus, index: int, binding: Binding) -> Iterator[Binding]:
        """Every extension of ``binding`` to the new nodes, injective over all bound words."""
        graph = corpus.graphs[index]
        if not all(holds(c, graph, binding) for c in self.checks):
            return
        pools = {name: self.candidates(corpus, index, name) for name in self.new}
        if any(not pool for pool in pools.values()):
            return
        order = self._order(pools, set(binding))
        yield from self._bind(graph, order, 0, dict(binding), pools)

    def _order(self, pools: dict[str, list[int]], bound: set[str]) -> list[tuple[str, list[Clause]]]:
        """Nodes in binding order (joined to a bound node first, else fewest candidates), each
        with the join clauses to check once it is bound."""
        order: list[tuple[str, list[Clause]]] = []
        remaining = set(self.new)
        known = set(bound)
        while remaining:
            linked = [n for n in remaining
                      if any(n in nodes and nodes & known for _, nodes in self.join_nodes)]
            name = min(linked or remaining, key=lambda n: (len(pools[n]), self.new.index(n)))
            known.add(name)
            remaining.discard(name)
            ready = [c for c, nodes in self.join_nodes if name in nodes and nodes <= known]
            order.append((name, ready))
        return order

    def _bind(self, graph: Graph, order: list[tuple[str, list[Clause]]], step: int, binding: Binding,
              pools: dict[str, list[int]]) -> Iterator[Binding]:
        if step == len(order):
            yield dict(binding)
            return
        name, ready = order[step]
        used = set(binding.values())
        for word in _reachable(graph, name, ready, binding, pools[name]):
            if word in used:
                continue
            binding[name] = word
            if all(holds(c, graph, binding) for c in ready):
                yield from self._bind(graph, order, step + 1, binding, pools)
            del binding[name]


def _word_test(clause: Clause, name: str) -> Callable[[Graph, int], bool]:
    """``clause`` (on node ``name`` alone) as a test of one word: no binding dict per word."""
    if isinstance(clause, NodeClause):
        return lambda graph, word: clause.accepts(graph.features[word])
    if isinstance(clause, EdgeClause) and clause.source == ANY_NODE:
        label = clause.label
        return lambda graph, word: graph.heads[word] >= 0 and label.accepts(graph.deprels[word])
    return lambda graph, word: holds(clause, graph, {name: word})


def _reachable(graph: Graph, name: str, ready: list[Clause], binding: Binding, pool: list[int]) -> list[int]:
    """The candidates for ``name`` an edge or ``<`` clause to a bound node allows (else ``pool``)."""
    for clause in ready:
        if isinstance(clause, EdgeClause) and clause.target == name and clause.source in binding:
            allowed = set(graph.children[binding[clause.source]])
            return [w for w in pool if w in allowed]
        if isinstance(clause, EdgeClause) and clause.source == name and clause.target in binding:
            head = graph.heads[binding[clause.target]]
            return [head] if head > 0 and head in pool else []
        if isinstance(clause, OrderClause) and clause.immediate and clause.before in binding:
            after = binding[clause.before] + 1
            return [after] if after in pool else []
    return pool


def _indexed(clause: Clause) -> tuple[str, tuple[str, ...]] | None:
    """(index key, literal values) a one-node clause requires, when the index can answer it."""
    if isinstance(clause, NodeClause) and len(clause.alternatives) == 1:
        for test in clause.alternatives[0]:
            if test.literals is not None:
                return test.name, test.literals
    if isinstance(clause, EdgeClause) and clause.source == ANY_NODE and clause.label.literals:
        return DEPREL, clause.label.literals
    return None


class Matcher:
    """A compiled request, ready to run over corpora.

    Examples:
        >>> from parsing.types import Sentence
        >>> from parsing.grew.graphs import graph_of
        >>> s = Sentence.from_words(["She", "runs"], upos=["PRON", "VERB"], heads=[2, 0],
        ...                         deprels=["nsubj", "root"])
        >>> [m.nodes for m in Matcher("pattern { V [upos=VERB]; V -[nsubj]-> S }").run(Corpus([graph_of(s)]))]
        [{'V': 2, 'S': 1}]
    """

    def __init__(self, request: Request | str) -> None:
        self.request = parse_request(request) if isinstance(request, str) else request
        positive = self.request.positive
        self.nodes = self.request.nodes()
        self._plan = _Plan(positive + _edge_targets(positive), ())
        self._filters = [(item.kind, _Plan(item.clauses, self.nodes)) for item in self.request.filters]

    def sentences(self, corpus: Corpus) -> list[int]:
        """The graphs the index cannot rule out, in corpus order."""
        keep: set[int] | None = None
        for clause in self._plan.clauses:
            indexed = _indexed(clause)
            if indexed is not None:
                found = corpus.sentences_with(*indexed)
                keep = found if keep is None else keep & found
        return list(range(len(corpus))) if keep is None else sorted(keep)

    def matches_in(self, corpus: Corpus, index: int, deadline: float | None = None) -> Iterator[Binding]:
        """Every match in graph ``index``; :class:`SearchTooLong` past ``deadline`` (``time.monotonic()``)."""
        return self._timed(corpus, index, deadline, None)

    def holds_at(self, corpus: Corpus, index: int, binding: Binding) -> bool:
        """True if ``binding`` (every pattern node bound) is a match in graph ``index``."""
        graph = corpus.graphs[index]
        if not all(holds(clause, graph, binding) for clause in self.request.positive):
            return False
        return all(self._passes(kind, plan, corpus, index, binding) for kind, plan in self._filters)

    @staticmethod
    def _passes(kind: str, plan: _Plan, corpus: Corpus, index: int, binding: Binding) -> bool:
        extended = next(plan.extend(corpus, index, binding), None) is not None
        return extended if kind == "with" else not extended

    def run(self, corpus: Corpus, *, limit: int | None = None, seconds: float | None = None) -> list[Match]:
        """Every match in the corpus, by graph then in search order; at most ``limit`` of them.

        :raise SearchTooLong: still searching after ``seconds`` (checked at every candidate
            binding, so one huge sentence cannot hold it either).
        """
        deadline = None if seconds is None else time.monotonic() + seconds
        found: list[Match] = []
        for index in self.sentences(corpus):
            sent_id = corpus.graphs[index].sent_id
            for binding in self._timed(corpus, index, deadline, seconds):
                found.append(Match(index, sent_id, binding))
                if limit is not None and len(found) >= limit:
                    return found
        return found

    def _timed(self, corpus: Corpus, index: int, deadline: float | None,
               seconds: float | None) -> Iterator[Binding]:
        for binding in self._plan.extend(corpus, index, {}):
            if deadline is not None and time.monotonic() > deadline:
                took = f"more than {seconds:g} s" if seconds is not None else "too long"
                raise SearchTooLong(f"the search took {took}: make the pattern more specific "
                                    "(node features, edge labels)")
            if all(self._passes(kind, plan, corpus, index, binding) for kind, plan in self._filters):
                yield {name: binding[name] for name in self.nodes}


class SearchTooLong(ValueError):
    """A search stopped at its time limit."""


def _edge_targets(clauses: Sequence[Clause]) -> tuple[Clause, ...]:
    """For each edge ``N -[L]-> M`` with literal labels, the one-node clause ``* -[L]-> M``: it
    lets the index pick M's candidates (the edge itself is still checked)."""
    extra: list[Clause] = []
    for clause in clauses:
        if isinstance(clause, EdgeClause) and clause.source != ANY_NODE and clause.target != ANY_NODE \
                and clause.label.literals:
            extra.append(EdgeClause(ANY_NODE, clause.target, clause.label))
    return tuple(extra)


def search(request: Request | str, graphs: Sequence[Graph] | Corpus) -> list[Match]:
    """Every match of ``request`` in ``graphs`` (see :class:`Matcher`)."""
    corpus = graphs if isinstance(graphs, Corpus) else Corpus(graphs)
    return Matcher(request).run(corpus)
