"""Grew-match requests over dependency trees: parse, search, count.

The subset of Grew's request language that UD annotators use (https://grew.fr/doc/request):
``pattern`` items with node clauses (``N [upos=NOUN, lemma="be"|"have", Case<>Nom, !Typo,
form=re".*ing"]``), edge clauses (``N -[nsubj|obj]-> M``, ``N -[^punct]-> M``, ``N -[1=nsubj]-> M``
for any subtype, ``N -> M``, named ``e: N -> M``, ``* -[root]-> N``), order (``N < M``
immediately before, ``N << M`` before) and feature constraints (``N.lemma = M.lemma``); then
``with`` and ``without`` items, each on its own. Matches are injective. Nodes bind to words only
(ids ``1..n``); ROOT is reached by ``* -[root]-> N``.

    >>> from parsing.grew import Matcher, Corpus, graph_of
"""

from parsing.grew.graphs import Corpus, Graph, graph_of, parse_pairs
from parsing.grew.matcher import Match, Matcher, SearchTooLong, search
from parsing.grew.request import Request
from parsing.grew.syntax import GrewSyntaxError, parse_request

__all__ = ["Corpus", "Graph", "GrewSyntaxError", "Match", "Matcher", "Request", "SearchTooLong", "graph_of",
           "parse_pairs", "parse_request", "search"]
