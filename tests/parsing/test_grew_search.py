"""The Grew request parser and matcher (:mod:`parsing.grew`), on hand-made and on real trees.

Counts on UD English-EWT dev are checked against a direct count over the CoNLL-U rows computed
here, independently of the library's graphs and index.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from parsing.cli import main
from parsing.conllu_io import DEPREL, FEATS, FORM, HEAD, LEMMA, MISC, UPOS, read_conllu, to_sentence
from parsing.grew import (
    Corpus,
    Graph,
    GrewSyntaxError,
    Matcher,
    SearchTooLong,
    graph_of,
    parse_request,
    search,
)
from parsing.grew.graphs import DEPREL as DEPREL_KEY
from parsing.grew.request import EdgeClause, NodeClause, OrderClause
from parsing.types import Sentence

# "The old dogs of my neighbour bark loudly ." — heads and labels as UD would give them.
WORDS = ["The", "old", "dogs", "of", "my", "neighbour", "bark", "loudly", "."]
UPOS_TAGS = ["DET", "ADJ", "NOUN", "ADP", "PRON", "NOUN", "VERB", "ADV", "PUNCT"]
HEADS = [3, 3, 7, 6, 6, 3, 0, 7, 7]
LABELS = ["det", "amod", "nsubj", "case", "nmod:poss", "nmod", "root", "advmod", "punct"]
FEATURES = ["Definite=Def", "Degree=Pos", "Number=Plur", "_", "Case=Gen|Person=1", "Number=Sing",
            "Number=Plur|Tense=Pres", "_", "_"]


@pytest.fixture
def corpus() -> Corpus:
    sentence = Sentence.from_words(WORDS, upos=UPOS_TAGS, heads=HEADS, deprels=LABELS, sent_id="s1")
    sentence.feats[1:] = FEATURES
    sentence.lemmas[1:] = [w.lower() for w in WORDS[:2]] + ["dog", "of", "my", "neighbour", "bark",
                                                          "loudly", "."]
    misc = ["_"] * 8 + ["SpaceAfter=No"]
    return Corpus([graph_of(sentence, misc)])


def found(corpus: Corpus, request: str) -> list[dict[str, int]]:
    return sorted((m.nodes for m in search(request, corpus)), key=lambda b: list(b.values()))


# -- clause kinds, on one hand-made tree -----------------------------------------------------
def test_node_clause_with_values_alternatives_presence_and_absence(corpus: Corpus) -> None:
    assert found(corpus, "pattern { N [upos=NOUN] }") == [{"N": 3}, {"N": 6}]
    assert found(corpus, "pattern { N [upos=NOUN|VERB, Number=Plur] }") == [{"N": 3}, {"N": 7}]
    assert found(corpus, 'pattern { N [lemma="dog"|"bark"] }') == [{"N": 3}, {"N": 7}]
    assert found(corpus, "pattern { N [Number<>Plur] }") == [{"N": 6}]  # <> needs the feature defined
    assert found(corpus, "pattern { N [upos=NOUN, !Number] }") == []
    assert found(corpus, "pattern { N [Case] }") == [{"N": 5}]
    assert found(corpus, "pattern { N [upos=ADJ]|[upos=ADV] }") == [{"N": 2}, {"N": 8}]
    assert found(corpus, "pattern { N [SpaceAfter=No] }") == [{"N": 9}]  # MISC is searchable


def test_regular_expressions_match_the_whole_value(corpus: Corpus) -> None:
    assert found(corpus, 'pattern { N [form=re"[a-z]+ly"] }') == [{"N": 8}]
    assert found(corpus, 'pattern { N [form=re"ly"] }') == []
    assert found(corpus, 'pattern { H -[re"nmod.*"]-> D }') == [{"H": 3, "D": 6}, {"H": 6, "D": 5}]


def test_edges_labels_alternatives_negation_subtypes(corpus: Corpus) -> None:
    assert found(corpus, "pattern { H -[nsubj]-> D }") == [{"H": 7, "D": 3}]
    assert found(corpus, "pattern { H -[advmod|punct]-> D }") == [{"H": 7, "D": 8}, {"H": 7, "D": 9}]
    assert found(corpus, "pattern { H [upos=VERB]; H -[^punct|nsubj]-> D }") == [{"H": 7, "D": 8}]
    assert found(corpus, "pattern { H -[nmod]-> D }") == [{"H": 3, "D": 6}]  # exact label only
    assert found(corpus, "pattern { H -[1=nmod]-> D }") == [{"H": 3, "D": 6}, {"H": 6, "D": 5}]
    assert found(corpus, "pattern { H -[1=nmod, 2=poss]-> D }") == [{"H": 6, "D": 5}]
    assert len(found(corpus, "pattern { H -> D }")) == 8
    assert found(corpus, "pattern { * -[root]-> R }") == [{"R": 7}]
    assert found(corpus, "pattern { N [upos=NOUN]; N -[case]-> * }") == [{"N": 6}]
    request = parse_request("pattern { e: H -[obj|iobj]-> D }")
    assert request.edge_names() == {"e": EdgeClause("H", "D", request.edge_names()["e"].label, "e")}


def test_order_clauses(corpus: Corpus) -> None:
    assert found(corpus, "pattern { A [upos=ADJ]; N [upos=NOUN]; A < N }") == [{"A": 2, "N": 3}]
    assert found(corpus, "pattern { A [upos=DET]; N [upos=NOUN]; A << N }") == [{"A": 1, "N": 3},
                                                                                {"A": 1, "N": 6}]
    assert found(corpus, "pattern { A [upos=ADJ]; N [upos=NOUN]; N > A }") == [{"A": 2, "N": 3}]
    assert found(corpus, "pattern { A [upos=DET]; N [upos=NOUN]; A < N }") == []
    assert found(corpus, "pattern { A [upos=DET]; N [upos=NOUN]; N >> A }") == found(
        corpus, "pattern { A [upos=DET]; N [upos=NOUN]; A << N }")


def test_without_blocks_are_each_checked_on_their_own(corpus: Corpus) -> None:
    assert found(corpus, "pattern { N [upos=NOUN] } without { N -[case]-> C }") == [{"N": 3}]
    # Two withouts reject separately: dogs has det, neighbour has case.
    assert found(corpus, "pattern { N [upos=NOUN] } without { N -[det]-> D } without { N -[case]-> C }") == []
    # One without with both clauses rejects only a noun with both.
    assert len(found(corpus, "pattern { N [upos=NOUN] } without { N -[det]-> D; N -[case]-> C }")) == 2
    # A without may add a constraint on a pattern node alone.
    assert found(corpus, "pattern { N [upos=NOUN] } without { N [Number=Plur] }") == [{"N": 6}]
    assert found(corpus, "pattern { N [upos=NOUN] } with { N -[det]-> D }") == [{"N": 3}]


def test_matches_are_injective_also_in_without(corpus: Corpus) -> None:
    assert found(corpus, "pattern { H -[amod|det]-> A; H -[amod|det]-> B }") == [
        {"H": 3, "A": 1, "B": 2}, {"H": 3, "A": 2, "B": 1}]
    # The without's B must differ from A: "dogs" has two such children, so it is rejected.
    assert found(corpus, "pattern { H -[amod|det]-> A } without { H -[amod|det]-> B }") == []
    assert found(corpus, "pattern { H -[nsubj]-> A } without { H -[nsubj]-> B }") == [{"H": 7, "A": 3}]


def test_several_pattern_items_are_joined_and_feature_constraints(corpus: Corpus) -> None:
    assert found(corpus, "pattern { N [upos=NOUN] } pattern { N -[nmod]-> M }") == [{"N": 3, "M": 6}]
    assert found(corpus, "pattern { H -> D; H.Number = D.Number }") == [{"H": 7, "D": 3}]
    assert found(corpus, "pattern { H -> D; D.Number <> H.Number }") == [{"H": 3, "D": 6}]
    assert found(corpus, 'pattern { N [upos=NOUN]; N.lemma = re"d.*" }') == [{"N": 3}]


def test_the_parsed_request_has_the_clauses_written() -> None:
    request = parse_request("""
        % a comment
        pattern {
          N [upos=NOUN, Case<>Nom];
          H -[nsubj|obj]-> N
          N << H;
        }""")
    clauses = request.positive
    assert isinstance(clauses[0], NodeClause) and clauses[0].alternatives[0][1].op == "<>"
    assert isinstance(clauses[1], EdgeClause)
    assert [v.text for v in clauses[1].label.values] == ["nsubj", "obj"]
    assert clauses[2] == OrderClause("N", "H", immediate=False)
    assert request.nodes() == ["N", "H"]


# -- errors name the position -----------------------------------------------------------------
@pytest.mark.parametrize(("text", "line", "column", "expected"), [
    ("pattern { N [upos=NOUN", 1, 23, "',' or ']'"),
    ("pattern {\n  N [upos=NOUN];\n  H -[nsubj> N\n}", 3, 12, "']->'"),
    ("patern { N [] }", 1, 1, "'pattern', 'with' or 'without'"),
    ("pattern { N [form=\"abc] }", 1, 19, "closing '\"'"),
    ("pattern { N [form=re\"(ab\"] }", 1, 19, "valid regular expression"),
    ("pattern { N [upos=] }", 1, 19, "a value"),
    ("pattern { N ~ M }", 1, 13, "after a node name"),
    ("without { N [] }", 1, 17, "'pattern { ... }'"),
    ("pattern { * -> * }", 1, 16, "named node"),
    ("pattern { N [] } garbage", 1, 18, "'pattern', 'with' or 'without'"),
])
def test_malformed_requests_name_line_column_and_what_was_expected(text: str, line: int, column: int,
                                                                    expected: str) -> None:
    with pytest.raises(GrewSyntaxError) as caught:
        parse_request(text)
    assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
    assert expected in caught.value.expected
    assert str(caught.value).startswith(f"line {line}, column {column}: expected")


# -- real trees: the search answers equal a direct count -----------------------------------------
@pytest.fixture(scope="module")
def ewt(ud_root: Path) -> Path:
    path = ud_root / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def _rows(path: Path) -> list[tuple[str | None, list[list[str]]]]:
    """(sent_id, word rows) straight from the file, with no library code but the reader."""
    return [(raw.sent_id, raw.words) for raw in read_conllu(path)]


def _feats(row: list[str]) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in row[FEATS].split("|")) if row[FEATS] != "_" else {}


def _direct_counts(path: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for _, words in _rows(path):
        heads = [int(w[HEAD]) for w in words]
        kids: dict[int, list[int]] = {}
        for i, h in enumerate(heads, start=1):
            kids.setdefault(h, []).append(i)
        for i, w in enumerate(words, start=1):
            feats, head = _feats(w), heads[i - 1]
            counts["plural nouns"] += w[UPOS] == "NOUN" and feats.get("Number") == "Plur"
            counts["pronouns not nominative"] += w[UPOS] == "PRON" and feats.get("Case", "Nom") != "Nom"
            counts["pronouns without case"] += w[UPOS] == "PRON" and "Case" not in feats
            counts["obl without case"] += w[DEPREL] == "obl" and not any(
                words[k - 1][DEPREL] == "case" for k in kids.get(i, []))
            counts["be/have with non-punct dependents"] += w[LEMMA] in ("be", "have") and sum(
                words[k - 1][DEPREL] != "punct" for k in kids.get(i, []))
            counts["capitalised word before a noun"] += bool(re.fullmatch("[A-Z].*", w[FORM])) and i < len(
                words) and words[i][UPOS] == "NOUN"
            counts["any nsubj before its head"] += w[DEPREL].split(":")[0] == "nsubj" and i < head
            counts["verb roots"] += head == 0 and w[UPOS] == "VERB"
            objs = sum(words[k - 1][DEPREL] == "obl" for k in kids.get(i, []))
            counts["pairs of obliques"] += objs * (objs - 1)
            counts["heads with one oblique"] += objs == 1
            counts["no space after"] += "SpaceAfter=No" in w[MISC].split("|")
            counts["any edge, dependent first"] += 0 < head and i < head
            counts["pronoun subjects of verbs"] += (w[UPOS] == "PRON" and w[DEPREL] == "nsubj" and head > 0
                                                    and words[head - 1][UPOS] == "VERB")
            counts["adjacent det and noun"] += w[UPOS] == "DET" and i < len(words) and head == i + 1 and \
                words[i][UPOS] == "NOUN" and w[DEPREL] == "det"
    return counts


PATTERNS = {
    "plural nouns": "pattern { N [upos=NOUN, Number=Plur] }",
    "pronouns not nominative": "pattern { N [upos=PRON, Case<>Nom] }",
    "pronouns without case": "pattern { N [upos=PRON, !Case] }",
    "obl without case": "pattern { H -[obl]-> N } without { N -[case]-> C }",
    "be/have with non-punct dependents": 'pattern { V [lemma="be"|"have"]; V -[^punct]-> D }',
    "capitalised word before a noun": 'pattern { N [form=re"[A-Z].*"]; M [upos=NOUN]; N < M }',
    "any nsubj before its head": "pattern { H -[1=nsubj]-> S; S << H }",
    "verb roots": "pattern { * -[root]-> R; R [upos=VERB] }",
    "pairs of obliques": "pattern { H -[obl]-> A; H -[obl]-> B }",
    "heads with one oblique": "pattern { H -[obl]-> A } without { H -[obl]-> B }",
    "no space after": "pattern { N [SpaceAfter=No] }",
    # the matcher's other ways to a node (issue #32 speed-up): every word, then its children; a
    # head reached from its bound dependent; the next word of a bound one, with its edge's label
    "any edge, dependent first": "pattern { H -> D; D << H }",
    "pronoun subjects of verbs": "pattern { D [upos=PRON]; H -[nsubj]-> D; H [upos=VERB] }",
    "adjacent det and noun": "pattern { D [upos=DET]; N [upos=NOUN]; D < N; N -[det]-> D }",
}


def test_search_counts_equal_a_direct_count_over_the_conllu(ewt: Path) -> None:
    expected = _direct_counts(ewt)
    raws = read_conllu(ewt)
    corpus = Corpus([graph_of(to_sentence(raw), [w[MISC] for w in raw.words]) for raw in raws])
    for name, pattern in PATTERNS.items():
        assert len(Matcher(pattern).run(corpus)) == expected[name], name
        assert expected[name] > 0, name  # each pattern is exercised on something


def test_every_hit_names_real_words_of_its_sentence(ewt: Path) -> None:
    raws = read_conllu(ewt)
    corpus = Corpus([graph_of(to_sentence(raw)) for raw in raws])
    request = 'pattern { H -[obl]-> N; N [upos=NOUN]; N -[case]-> C; C [lemma="in"] }'
    for match in Matcher(request).run(corpus):
        words = raws[match.sentence].words
        assert raws[match.sentence].sent_id == match.sent_id
        n, h, c = (words[match.nodes[x] - 1] for x in "NHC")
        assert (n[DEPREL], n[UPOS], int(n[HEAD]), c[LEMMA], int(c[HEAD])) == (
            "obl", "NOUN", match.nodes["H"], "in", match.nodes["N"])


# -- the command line -----------------------------------------------------------------------------
def test_cli_prints_the_json_contract(ewt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["search", "--input", str(ewt), "--pattern", "pattern { * -[root]-> R; R [upos=VERB] }",
                   "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 0
    assert set(result) == {"matches", "sentences", "hits"}
    assert result["matches"] == _direct_counts(ewt)["verb roots"] == len(result["hits"])
    assert result["sentences"] == len({hit["sent_id"] for hit in result["hits"]})
    first = result["hits"][0]
    assert set(first) == {"sent_id", "nodes"} and isinstance(first["nodes"]["R"], int)
    words = {raw.sent_id: raw.words for raw in read_conllu(ewt)}[first["sent_id"]]
    assert words[first["nodes"]["R"] - 1][HEAD] == "0"


def test_cli_reports_a_bad_pattern_with_its_position(ewt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--input", str(ewt), "--pattern", "pattern { N [upos=NOUN", "--json"]) == 2
    assert "line 1, column 23: expected" in capsys.readouterr().err


def test_a_search_stops_at_its_limit_or_its_time(ewt: Path) -> None:
    corpus = Corpus([graph_of(to_sentence(raw)) for raw in read_conllu(ewt)])
    matcher = Matcher("pattern { N [upos=NOUN] }")
    everything = matcher.run(corpus)
    assert matcher.run(corpus, limit=10) == everything[:10]
    with pytest.raises(SearchTooLong, match="took more than 0.05 s"):
        Matcher("pattern { A []; B []; C []; D [] }").run(corpus, seconds=0.05)


# -- graphs and index as search builds them ------------------------------------------------------
def test_children_and_the_index_of_lists_and_of_tuples_agree(corpus: Corpus) -> None:
    graph = corpus.graphs[0]
    assert graph.children == ((7,), (), (), (1, 2, 6), (), (), (4, 5), (3, 8, 9), (), ())
    assert all(graph.children[w] == () for w in (1, 2, 4, 5, 8, 9))  # leaves: the one empty tuple
    partial = Graph(list(graph.features), [-1, 3, 3, 7, 6, -1, 3, 0, 7, 7], list(graph.deprels))
    assert partial.children[6] == (4,) and 5 not in sum(partial.children, ())  # an unknown head: no parent
    frozen = Corpus([Graph(tuple(graph.features), tuple(graph.heads), tuple(graph.deprels), "s1")])
    for name in ("upos", "Number", "SpaceAfter", DEPREL_KEY):
        assert frozen.postings(name) == corpus.postings(name) != {}
    assert corpus.postings("upos")["NOUN"] == {0: (3, 6)}
    assert corpus.postings(DEPREL_KEY)["nsubj"] == {0: (3,)} and "" not in corpus.postings(DEPREL_KEY)
    assert corpus.words_with("upos", ["NOUN", "DET"], 0) == [1, 3, 6]
    for request in ("pattern { H -[amod|det]-> D }", "pattern { N [upos=NOUN, Number=Plur] }",
                    "pattern { H -> D; D << H } without { D -[punct]-> P }"):
        assert [m.nodes for m in search(request, frozen)] == [m.nodes for m in search(request, corpus)] != []
