"""Treebank search (issue #32): the service over each source and split, and ``flask treebank search``.

Counts are checked against a direct count over the imported CoNLL-U rows, computed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Sentence, Treebank, User
from app.services.imports import import_conllu
from app.services.search import graphs_of, matching_conllu, search_sources, search_treebank
from app.services.sources import SourceError, load_trees, split_sentence_ids
from app.services.trees import add_version, latest_versions
from parsing.conllu_io import DEPREL, FORM, HEAD, MISC, UPOS, parse_conllu, to_sentence
from parsing.grew import GrewSyntaxError, graph_of
from tests.parsing.conftest import UD_ROOT

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-dev.conllu"

PATTERNS = {
    "pattern { * -[root]-> R; R [upos=VERB] }":
        lambda w, ws, kids: w[HEAD] == "0" and w[UPOS] == "VERB",
    "pattern { H -[obl]-> N } without { N -[case]-> C }":
        lambda w, ws, kids: w[DEPREL] == "obl" and all(ws[k][DEPREL] != "case" for k in kids),
    'pattern { A [upos=ADJ]; N [upos=NOUN]; N -[amod]-> A; A < N }':
        lambda w, ws, kids: w[DEPREL] == "amod" and w[UPOS] == "ADJ" and ws[int(w[HEAD]) - 1][UPOS] == "NOUN"
        and int(w[HEAD]) == int(w[0]) + 1,
    'pattern { N [form=re"[A-Z].*", upos<>PROPN] }':
        lambda w, ws, kids: w[FORM][:1].isupper() and w[FORM][:1].isascii() and w[UPOS] != "PROPN",
}


def direct_count(text: str, test: Callable[..., bool]) -> int:
    """Words of ``text`` passing ``test(word, words, children indexes)``: one match per word."""
    total = 0
    for raw in parse_conllu(text):
        words = raw.words
        for word in words:
            kids = [k for k, other in enumerate(words) if other[HEAD] == word[0]]
            total += bool(test(word, words, kids))
    return total


def import_afrikaans(session: Session, user: User) -> Treebank:
    """AfriBooms dev as treebank ``af`` (split dev), committed; skips the test without the file."""
    if not AFRIKAANS.exists():
        pytest.skip(f"{AFRIKAANS} not found (../shared/ud beside the repo, or ARCVOTE_UD_ROOT)")
    result = import_conllu(session, data=AFRIKAANS.read_bytes(), filename=AFRIKAANS.name, treebank_name="af",
                           split="dev", user=user)
    session.commit()
    return result.treebank


@pytest.fixture
def afrikaans(session: Session, user: User) -> Treebank:
    return import_afrikaans(session, user)


def test_gold_search_counts_equal_a_direct_count_over_the_file(session: Session, afrikaans: Treebank) -> None:
    text = AFRIKAANS.read_text(encoding="utf-8")
    for pattern, test in PATTERNS.items():
        expected = direct_count(text, test)
        result = search_treebank(session, afrikaans, pattern, source="gold")
        assert result.matches == expected > 0, pattern
        assert result.searched == len(parse_conllu(text))


def test_hits_name_the_sentence_and_its_words(session: Session, afrikaans: Treebank) -> None:
    result = search_treebank(session, afrikaans, "pattern { H -[nsubj]-> S; S << H }")
    raws = {raw.sent_id: raw for raw in parse_conllu(AFRIKAANS.read_text(encoding="utf-8"))}
    for hit in result.hits[:50]:
        sentence = session.get(Sentence, hit.sentence_id)
        assert sentence is not None and sentence.sent_id == hit.sent_id
        subject = raws[hit.sent_id].words[hit.nodes["S"] - 1]
        assert (subject[DEPREL], int(subject[HEAD])) == ("nsubj", hit.nodes["H"])
    assert result.as_json()["sentences"] == len({hit.sent_id for hit in result.hits})


def relabel_first_sentence(session: Session, user: User, *,
                           columns: Callable[[int], dict[str, Any]] | None = None) -> tuple[Sentence, int]:
    """An annotation of the first sentence: its gold tree with the first non-root word's label
    ``dislocated`` (and ``columns(n)`` set, when given); committed. Returns the sentence and the
    word's 0-based index."""
    first = session.scalars(select(Sentence).order_by(Sentence.id)).first()
    assert first is not None
    gold = latest_versions(session, [first.id], "gold")[first.id]
    labels = list(gold.deprels)
    word = next(i for i, head in enumerate(gold.heads) if head != 0)
    labels[word] = "dislocated"
    add_version(session, sentence_id=first.id, source="annotation", heads=list(gold.heads), deprels=labels,
                user=user, columns=columns(len(gold.heads)) if columns else None)
    session.commit()
    return first, word


def test_latest_sees_a_correction_that_gold_does_not(session: Session, afrikaans: Treebank,
                                                      user: User) -> None:
    pattern = "pattern { H -[dislocated]-> D }"
    assert search_treebank(session, afrikaans, pattern, source="latest").matches == 0
    first, word = relabel_first_sentence(session, user, columns=lambda n: {
        "upos": ["X"] * n, "xpos": None, "lemmas": ["zz"] * n, "feats": ["Typo=Yes"] * n})
    n = first.n_words
    latest = search_treebank(session, afrikaans, pattern, source="latest")
    assert [(hit.sentence_id, hit.nodes["D"]) for hit in latest.hits] == [(first.id, word + 1)]
    # the word columns the annotator set are searched too, in latest only
    edited = 'pattern { D [upos=X, lemma="zz", Typo=Yes] }'
    assert search_treebank(session, afrikaans, edited, source="latest").matches == n
    assert search_treebank(session, afrikaans, edited, source="gold").matches == 0
    assert search_treebank(session, afrikaans, pattern, source="gold").matches == 0
    assert search_treebank(session, afrikaans, pattern, source="ensemble").searched == 0


def test_split_sources_and_bad_patterns(session: Session, afrikaans: Treebank) -> None:
    assert search_treebank(session, afrikaans, "pattern { N [] }", split="train").searched == 0
    assert search_treebank(session, afrikaans, "pattern { N [] }", split="dev").matches > 0
    assert search_sources(session, afrikaans)[:4] == ["gold", "reviewed", "latest", "ensemble"]
    with pytest.raises(SourceError, match="unknown source 'nope'"):
        search_treebank(session, afrikaans, "pattern { N [] }", source="nope")
    with pytest.raises(SourceError, match="split must be one of"):
        search_treebank(session, afrikaans, "pattern { N [] }", split="everything")
    with pytest.raises(GrewSyntaxError, match="line 1, column 16"):
        search_treebank(session, afrikaans, "pattern { N [] ")


def test_matching_sentences_download_as_conllu(session: Session, afrikaans: Treebank) -> None:
    result = search_treebank(session, afrikaans, "pattern { * -[root]-> R; R [upos=NOUN] }")
    downloaded = parse_conllu(matching_conllu(session, afrikaans, result))
    assert [raw.sent_id for raw in downloaded] == [hit.sent_id for hit in result.hits]
    originals = {raw.sent_id: raw for raw in parse_conllu(AFRIKAANS.read_text(encoding="utf-8"))}
    for raw in downloaded:
        assert raw.words == originals[raw.sent_id].words


def test_flask_cli_prints_the_json_contract(runner: FlaskCliRunner, afrikaans: Treebank, app: Flask) -> None:
    pattern = "pattern { H -[obl]-> N } without { N -[case]-> C }"
    result = runner.invoke(args=["treebank", "search", "af", pattern, "--source", "gold", "--split", "dev",
                                 "--json", "--user", "ana"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert set(answer) == {"matches", "sentences", "hits"}
    assert answer["matches"] == direct_count(AFRIKAANS.read_text(encoding="utf-8"), PATTERNS[pattern])
    assert all(set(hit) == {"sent_id", "nodes"} and set(hit["nodes"]) == {"H", "N"} for hit in answer["hits"])
    assert answer["sentences"] == len({hit["sent_id"] for hit in answer["hits"]})


def test_flask_cli_errors(runner: FlaskCliRunner, afrikaans: Treebank, make_user: Callable[..., int]) -> None:
    bad = runner.invoke(args=["treebank", "search", "af", "pattern { N -[nsubj> M }", "--user", "ana"])
    assert bad.exit_code == 1 and "pattern: line 1, column 20: expected" in bad.output
    unknown = runner.invoke(args=["treebank", "search", "af", "pattern { N [] }", "--source", "x",
                                  "--user", "ana"])
    assert unknown.exit_code == 1 and "unknown source 'x'" in unknown.output
    make_user("stranger")
    hidden = runner.invoke(args=["treebank", "search", "af", "pattern { N [] }", "--user", "stranger"])
    assert hidden.exit_code == 1 and "no treebank called 'af'" in hidden.output


def test_text_output_lists_hits_then_a_summary(runner: FlaskCliRunner, afrikaans: Treebank) -> None:
    result = runner.invoke(args=["treebank", "search", "af", "pattern { * -[root]-> R; R [upos=NOUN] }",
                                 "--user", "ana"])
    lines = result.output.strip().split("\n")
    assert lines[-1].startswith(f"{len(lines) - 1} matches in ")
    assert all("\tR=" in line for line in lines[:-1])


def test_the_user_guide_mentions_the_command() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "user-guide.md").read_text(encoding="utf-8")
    assert "treebank search NAME 'pattern { ... }' [--source S] [--split S] [--json]" in guide


def test_a_second_search_reuses_the_trees_until_they_change(session: Session, afrikaans: Treebank, user: User,
                                                            builds: list[int]) -> None:
    first = search_treebank(session, afrikaans, "pattern { N [upos=NOUN] }", source="latest")
    second = search_treebank(session, afrikaans, "pattern { N [upos=VERB] }", source="latest")
    assert len(builds) == 1 and first.searched == second.searched
    sentence = session.scalars(select(Sentence).order_by(Sentence.id)).first()
    assert sentence is not None
    gold = latest_versions(session, [sentence.id], "gold")[sentence.id]
    add_version(session, sentence_id=sentence.id, source="annotation", heads=list(gold.heads),
                deprels=list(gold.deprels), user=user)
    session.commit()
    search_treebank(session, afrikaans, "pattern { N [upos=VERB] }", source="latest")
    assert len(builds) == 2
    search_treebank(session, afrikaans, "pattern { N [upos=VERB] }", source="reviewed")
    search_treebank(session, afrikaans, "pattern { N [upos=VERB] }", source="reviewed")
    assert len(builds) == 4  # reviewed depends on review marks: never kept


def test_the_searched_graphs_are_the_files_trees(session: Session, afrikaans: Treebank) -> None:
    """What the search reads from the database (plain rows, tuples) is what :func:`graph_of` makes
    of the file: the same features (MISC and FEATS pairs too), heads, labels, children."""
    ids = split_sentence_ids(session, afrikaans, None)
    graphs = graphs_of(session, ids, load_trees(session, afrikaans, ids, "gold").trees)
    raws = parse_conllu(AFRIKAANS.read_text(encoding="utf-8"))
    assert [graph.sent_id for _, graph in graphs] == [raw.sent_id for raw in raws]
    for (_, graph), raw in zip(graphs, raws, strict=True):
        want = graph_of(to_sentence(raw), [word[MISC] for word in raw.words])
        assert list(graph.features) == want.features and list(graph.heads) == want.heads
        assert list(graph.deprels) == want.deprels and graph.children == want.children
    assert any("SpaceAfter" in node for _, graph in graphs for node in graph.features)
    some = ids[:5]
    without_misc = graphs_of(session, some, load_trees(session, afrikaans, some, "gold").trees, misc=False)
    assert not any("SpaceAfter" in node for _, graph in without_misc for node in graph.features)


def test_a_partial_tree_and_an_annotation_with_some_columns(session: Session, afrikaans: Treebank) -> None:
    first = split_sentence_ids(session, afrikaans, None)[0]
    gold = load_trees(session, afrikaans, [first], "gold").trees[first]
    n = len(gold.heads)
    partial = replace(gold, kind="parser", heads=[None, *gold.heads[1:]],
                      deprels=["", None, *gold.deprels[2:]])
    (_, graph), = graphs_of(session, [first], {first: partial})
    assert graph.heads == (-1, -1, *gold.heads[1:]) and graph.deprels == ("", "_", "_", *gold.deprels[2:])
    (_, imported), = graphs_of(session, [first], {first: gold})
    edited = replace(gold, kind="annotation", upos=None, xpos_json=None, lemmas_json=json.dumps(["zz"] * n),
                     feats_json=json.dumps(["Typo=Yes"] * n))
    (_, graph), = graphs_of(session, [first], {first: edited})
    for node, before in zip(graph.features[1:], imported.features[1:], strict=True):
        assert node["lemma"] == "zz" and node["Typo"] == "Yes" and node["upos"] == before["upos"]
        assert node.get("SpaceAfter") == before.get("SpaceAfter") and node["form"] == before["form"]


def test_plain_rows_are_the_same_from_a_buffered_result(session: Session, afrikaans: Treebank) -> None:
    from app.models import Token
    from app.services.search import _plain_rows

    tokens = Token.__table__.c
    query = select(tokens.sentence_id, tokens.form, tokens.misc).order_by(tokens.id).limit(300)
    plain = _plain_rows(session, query)
    assert len(plain) == 300 and all(type(row) is tuple for row in plain)
    assert _plain_rows(session, query.execution_options(stream_results=True, max_row_buffer=50)) == plain
