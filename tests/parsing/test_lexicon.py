"""The lexicon of variation (issue #32): entries whose FEATS or DEPREL vary, counted directly
over the CoNLL-U rows of a real UD file, and each variant's Grew pattern finding exactly its words."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from parsing.conllu_io import DEPREL, FEATS, FORM, ID, LEMMA, UPOS, read_conllu, to_sentence
from parsing.grew import Corpus, Graph, Matcher, graph_of
from parsing.grew.rules import parse_rule, rewrite
from parsing.lexicon import Entry, feats_of, lexicon, sort_entries, variant_pattern, variant_rule


def _graph(words: list[tuple[str, str, str, str, int, str]]) -> Graph:
    """(form, lemma, upos, feats, head, deprel) per word."""
    features: list[dict[str, str]] = [{}]
    for form, lemma, upos, feats, _, _ in words:
        node = {"form": form, "lemma": lemma, "upos": upos, "xpos": "_"}
        node.update(pair.split("=", 1) for pair in feats.split("|") if "=" in pair)
        features.append(node)
    return Graph(features, [-1, *(w[4] for w in words)], ["", *(w[5] for w in words)])


SMALL = [
    _graph([("I", "I", "PRON", "Case=Nom", 2, "nsubj"), ("saw", "see", "VERB", "_", 0, "root"),
            ("her", "she", "PRON", "Case=Acc", 2, "obj")]),
    _graph([("her", "she", "PRON", "Case=Acc", 2, "obj"), ("saw", "see", "VERB", "_", 0, "root"),
            ("I", "I", "PRON", "Case=Nom", 2, "nsubj")]),
    _graph([("her", "she", "PRON", "_", 2, "nsubj"), ("saw", "see", "VERB", "Tense=Past", 0, "root"),
            ("I", "I", "PRON", "Case=Nom", 2, "obj")]),
]


def test_entries_list_each_variant_with_counts_and_places() -> None:
    entries = {entry.form: entry for entry in lexicon(SMALL, compare="feats")}
    assert set(entries) == {"her", "saw"}  # "I" is always Case=Nom
    her = entries["her"]
    assert [(v.feats, v.deprel, v.count, v.where) for v in her.variants] == [
        ("Case=Acc", "", 2, ((0, 3), (1, 1))), ("_", "", 1, ((2, 1),))]
    assert her.total == 3 and her.minority_share == pytest.approx(1 / 3)
    by_deprel = {entry.form: entry for entry in lexicon(SMALL, compare="deprel")}
    assert set(by_deprel) == {"her", "I"}
    assert [(v.deprel, v.count) for v in by_deprel["I"].variants] == [("nsubj", 2), ("obj", 1)]
    both = {entry.form: entry for entry in lexicon(SMALL, compare="both")}
    assert [(v.feats, v.deprel) for v in both["her"].variants] == [("Case=Acc", "obj"), ("_", "nsubj")]


def test_orders_and_errors() -> None:
    rare = Entry("a", "a", "X", ())
    entries = lexicon(SMALL * 3 + [SMALL[0]], compare="deprel")
    shares = [entry.minority_share for entry in entries]
    assert shares == sorted(shares)
    totals = [e.total for e in sort_entries(entries, "frequent")]
    assert totals == sorted(totals, reverse=True)
    assert [e.form for e in sort_entries(entries, "form")] == ["her", "I"]
    with pytest.raises(ValueError, match="sort must be one of"):
        sort_entries([rare], "size")
    with pytest.raises(ValueError, match="compare must be one of"):
        lexicon(SMALL, compare="upos")  # type: ignore[arg-type]


def test_a_variant_pattern_quotes_values_and_excludes_the_other_variants_features() -> None:
    graphs = [_graph([('"a\\b', "x", "NOUN", "Case=Acc", 0, "root")]),
              _graph([('"a\\b', "x", "NOUN", "_", 0, "root")]),
              _graph([('"a\\b', "x", "NOUN", "_", 0, "root")])]
    entry = lexicon(graphs)[0]
    patterns = [variant_pattern(entry, v) for v in entry.variants]
    assert patterns == ['pattern { N [form="\\"a\\\\b", lemma="x", upos="NOUN", !Case] }',
                        'pattern { N [form="\\"a\\\\b", lemma="x", upos="NOUN", Case="Acc"] }']
    corpus = Corpus(graphs)
    assert [len(Matcher(p).run(corpus)) for p in patterns] == [2, 1]
    assert feats_of({"form": "x", "Number": "Sing", "Case": "Nom"}) == "Case=Nom|Number=Sing"


@pytest.fixture(scope="module")
def afrikaans(ud_root: Path) -> Path:
    path = ud_root / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def _direct(path: Path, column: int) -> dict[tuple[str, str, str], Counter[str]]:
    """Per (form, lemma, upos), the count of each value of ``column``, straight from the rows."""
    found: dict[tuple[str, str, str], Counter[str]] = {}
    for raw in read_conllu(path):
        for row in raw.rows:
            if row[ID].isdigit():
                found.setdefault((row[FORM], row[LEMMA], row[UPOS]), Counter())[row[column]] += 1
    return {key: counts for key, counts in found.items() if len(counts) > 1}


@pytest.mark.parametrize(("compare", "column"), [("feats", FEATS), ("deprel", DEPREL)])
def test_real_file_entries_equal_a_direct_count_and_patterns_find_each_variant(
        afrikaans: Path, compare: str, column: int) -> None:
    graphs = [graph_of(to_sentence(raw)) for raw in read_conllu(afrikaans)]
    entries = lexicon(graphs, compare=compare)  # type: ignore[arg-type]
    expected = _direct(afrikaans, column)
    assert len(entries) == len(expected) > 10
    for entry in entries:
        value = (lambda v: v.feats) if compare == "feats" else (lambda v: v.deprel)
        counts = expected[(entry.form, entry.lemma, entry.upos)]
        assert {value(v): v.count for v in entry.variants} == dict(counts)
    corpus = Corpus(graphs)
    for entry in entries[:60]:
        for variant in entry.variants:
            hits = Matcher(variant_pattern(entry, variant)).run(corpus)
            assert sorted((hit.sentence, hit.nodes["N"]) for hit in hits) == list(variant.where)


@pytest.mark.parametrize("compare", ["feats", "deprel", "both"])
def test_a_variant_rule_turns_the_minority_variant_into_the_majority(compare: str) -> None:
    graphs = SMALL * 2
    entry = next(e for e in lexicon(graphs, compare=compare) if e.form == "her")  # type: ignore[arg-type]
    minority, majority = entry.variants[-1], entry.variants[0]
    text = variant_rule(entry, minority, majority)
    assert text is not None
    rule = parse_rule(text)
    changed = rewrite(rule, Corpus(graphs))
    assert sorted(change.sentence for change in changed if change.changed) == [i for i, _ in minority.where]
    fixed = [change.tree.graph() for change in changed]
    after = lexicon([g for i, g in enumerate(graphs) if i not in {c.sentence for c in changed}] + fixed,
                    compare=compare)  # type: ignore[arg-type]
    assert all(e.form != "her" for e in after)


def test_no_rule_where_a_fix_needs_a_new_head() -> None:
    graphs = [_graph([("go", "go", "VERB", "_", 0, "root")]), _graph([("go", "go", "VERB", "_", 0, "root")]),
              _graph([("x", "x", "X", "_", 0, "root"), ("go", "go", "VERB", "_", 1, "xcomp")])]
    entry = lexicon(graphs, compare="deprel")[0]
    assert variant_rule(entry, entry.variants[1], entry.variants[0]) is None
