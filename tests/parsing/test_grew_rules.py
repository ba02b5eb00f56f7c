"""Grew rewriting rules (:mod:`parsing.grew.rules`): each command, refusals that keep trees, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsing.conllu_io import DEPREL, HEAD, LEMMA, read_conllu, to_sentence
from parsing.grew import Corpus, GrewSyntaxError, graph_of
from parsing.grew.rules import SentenceRewrite, SetLabel, parse_rule, rewrite
from tests.parsing.test_grew_search import corpus  # noqa: F401  (the hand-made tree fixture)


def one(corpus: Corpus, text: str) -> SentenceRewrite:  # noqa: F811
    [result] = rewrite(parse_rule(text), corpus)
    return result


def test_relabel_a_named_edge(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, "rule { pattern { e: H -[nmod]-> D } commands { e.label = obl } }")
    assert result.tree.deprels[6] == "obl" and result.tree.heads[6] == 3
    assert corpus.graphs[0].deprels[6] == "nmod"  # the corpus is left alone
    assert result.applied == [{"H": 3, "D": 6}] and result.refused == []


def test_a_named_edge_from_any_head_is_the_dependents_edge(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, "rule { pattern { e: * -[nmod]-> D } commands { e.label = obl } }")
    assert (result.tree.heads[6], result.tree.deprels[6]) == (3, "obl") and result.applied == [{"D": 6}]
    moved = one(corpus, "pattern { e: * -[nmod]-> D; * -[root]-> V } "
                        "commands { del_edge e; add_edge V -[obl]-> D }")
    assert (moved.tree.heads[6], moved.tree.deprels[6]) == (7, "obl")
    with pytest.raises(GrewSyntaxError, match="dependent is a node"):
        parse_rule("pattern { e: H -[nmod]-> * } commands { e.label = obl }")


def test_delete_and_add_an_edge_moves_a_word(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, "pattern { e: H -[amod]-> A; V -[nsubj]-> H } "
                         "commands { del_edge e; add_edge V -[advmod]-> A }")
    assert (result.tree.heads[2], result.tree.deprels[2]) == (7, "advmod")
    assert result.tree.is_tree()
    unnamed = one(corpus, "pattern { H -[amod]-> A; V -[nsubj]-> H } "
                          "commands { del_edge H -[amod]-> A; add_edge V -[amod]-> A }")
    assert unnamed.tree.heads[2] == 7


def test_features_and_columns_set_copied_and_deleted(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, 'pattern { N [upos=NOUN, Number=Plur]; V [upos=VERB] } '
                         'commands { N.Case = Nom; N.lemma = "hound"; V.Person = 3; N.Person = V.Person; '
                         'del_feat N.Number; V.upos = AUX; del_feat V.xpos }')
    node, verb = result.tree.features[3], result.tree.features[7]
    assert (node["Case"], node["lemma"], node["Person"], "Number" in node) == ("Nom", "hound", "3", False)
    assert result.tree.feats(3) == "Case=Nom|Person=3"
    assert (verb["upos"], verb["xpos"]) == ("AUX", "_")
    assert result.tree.feats(7) == "Number=Plur|Person=3|Tense=Pres"


def test_every_match_of_a_sentence_is_applied(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, "pattern { N [upos=NOUN] } commands { N.Checked = Yes }")
    assert [b["N"] for b in result.applied] == [3, 6]
    assert all(result.tree.features[w]["Checked"] == "Yes" for w in (3, 6))


def test_a_match_undone_by_an_earlier_one_is_skipped(corpus: Corpus) -> None:  # noqa: F811
    result = one(corpus, "pattern { e: H -[amod|det]-> A } without { H -[case]-> X } "
                         "commands { e.label = case }")
    assert result.applied == [{"H": 3, "A": 1}]  # once dogs has a case child, A=2 no longer matches
    assert result.tree.deprels[1:3] == ["case", "amod"]


def test_rules_never_leave_a_non_tree(corpus: Corpus) -> None:  # noqa: F811
    headless = one(corpus, "pattern { e: V -[nsubj]-> S } commands { del_edge e }")
    assert headless.applied == [] and headless.refused[0][1] == "the result would not be a tree"
    assert headless.tree.heads == corpus.graphs[0].heads
    doubled = one(corpus, "pattern { V -[nsubj]-> S; V -[advmod]-> A } commands { add_edge S -[dep]-> A }")
    assert doubled.refused[0][1] == "word 8 already has a head"
    cycle = one(corpus, "pattern { e: N -[nmod]-> M; f: V -[nsubj]-> N } "
                        "commands { del_edge e; del_edge f; add_edge M -[nmod]-> N; "
                        "add_edge N -[nsubj]-> M }")
    assert cycle.applied == [] and cycle.refused[0][1] == "the result would not be a tree"
    missing = one(corpus, "pattern { H -[nmod]-> D } commands { del_edge H -[obj]-> D }")
    assert missing.refused[0][1] == "the edge to delete is not there"


@pytest.mark.parametrize(("text", "expected"), [
    ("pattern { N [] } commands { add_edge N -> M }", "'-[' (add_edge needs a label)"),
    ("pattern { N [] } commands { N.upos NOUN }", "'=' (a command sets a value)"),
    ("pattern { N [] } commands { M.upos = NOUN }", "a node of the pattern, not 'M'"),
    ("pattern { N [] } commands { e.label = obj }", "an edge named in the pattern, not 'e'"),
    ("pattern { N [] } commands { N.form = x }", "a feature other than form"),
    ("pattern { N [] }", "a 'commands { ... }' block"),
    ("rule { pattern { N [] } commands { N.x = y } ", "'}'"),
    ("pattern { N [] } commands { frobnicate N }", "'.' after the node or edge name"),
])
def test_malformed_rules_name_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(GrewSyntaxError) as caught:
        parse_rule(text)
    assert expected in caught.value.expected
    assert str(caught.value).startswith("line 1, column ")


def test_a_command_naming_an_unknown_node_is_pointed_at() -> None:
    with pytest.raises(GrewSyntaxError) as caught:
        parse_rule("pattern { N [] }\ncommands {\n  N.a = b;\n  M.upos = NOUN\n}")
    assert (caught.value.line, caught.value.column) == (4, 3)


def test_parsed_commands() -> None:
    rule = parse_rule("rule fix { pattern { e: H -[obl]-> N } commands { e.label = obl:agent } }")
    assert rule.commands == (SetLabel("e", "obl:agent"),)


def test_a_rule_on_real_trees_changes_exactly_the_matches(ud_root: Path) -> None:
    path = ud_root / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    raws = read_conllu(path)
    ewt = Corpus([graph_of(to_sentence(raw)) for raw in raws])
    rule = parse_rule('pattern { e: H -[obl]-> N; N -[case]-> C; C [lemma="by"] } '
                      'commands { e.label = "obl:agent" }')
    results = rewrite(rule, ewt)
    expected = 0
    for raw in raws:
        words = raw.words
        for i, w in enumerate(words, start=1):
            expected += w[DEPREL] == "obl" and any(
                x[LEMMA] == "by" and x[DEPREL] == "case" and int(x[HEAD]) == i for x in words)
    assert sum(len(r.applied) for r in results) == expected > 0
    for result in results:
        assert result.tree.is_tree()
        before = ewt.graphs[result.sentence]
        changed = [w for w in range(1, len(before.heads)) if before.deprels[w] != result.tree.deprels[w]]
        assert sorted(changed) == sorted(b["N"] for b in result.applied)
        assert all(result.tree.deprels[w] == "obl:agent" for w in changed)
        assert result.tree.heads == before.heads
