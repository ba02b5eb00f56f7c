"""Meta features (Chen et al. 2013): frequency classes by the 10%/30% split, Other for unseen
features, deterministic tables, and the ``graph1-meta`` member (trains, fires its meta features,
saves and loads) beside an unchanged default ``graph1``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.base import BaseParser
from parsing.conllu_io import format_conllu, load_sentences, read_conllu
from parsing.graph.first_order import FirstOrderParser
from parsing.graph.templates import arc_features, null_index
from parsing.members import MEMBERS, META_MEMBERS, build_member, member_names
from parsing.meta import HIGH, LOW, MIDDLE, OTHER, MetaTable, rank_classes
from parsing.meta.recipe import (
    MetaSpec,
    MetaTables,
    jackknifed_tables,
    learn_table,
    parsed_keys,
    read_unlabelled,
)
from parsing.meta.table import cut_positions
from parsing.meta.templates import (
    META_BASE_TEMPLATES,
    arc_keys,
    meta_arc_features,
    meta_rows,
    n_meta_arc_features,
    tree_keys,
)
from parsing.persist import load_model
from parsing.types import Parse, Sentence
from tests.parsing.fakes import RuleParser


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / "UD_Telugu-MTG"
    return (load_sentences(folder / "te_mtg-ud-train.conllu")[:300],
            load_sentences(folder / "te_mtg-ud-test.conllu")[:60])


def same_output(first: list[Parse], second: list[Parse]) -> bool:
    pairs = zip(first, second, strict=True)
    return all(np.array_equal(a.heads, b.heads) and a.deprels == b.deprels for a, b in pairs)


def test_classes_follow_the_ten_and_thirty_percent_split() -> None:
    rng = np.random.default_rng(0)
    keys = rng.permutation(np.arange(1000, 1200, dtype=np.int64))
    counts = 500 - (keys - 1000)  # key 1000 is the most frequent, 1199 the least
    ranked, classes = rank_classes(keys, counts)
    assert ranked.tolist() == list(range(1000, 1200))  # decreasing frequency
    assert np.count_nonzero(classes == HIGH) == 20 and np.count_nonzero(classes == MIDDLE) == 40
    assert np.count_nonzero(classes == LOW) == 140
    assert classes[:20].tolist() == [HIGH] * 20 and classes[20:60].tolist() == [MIDDLE] * 40
    # positions are ceilings of 10% and 30% of the distinct features, computed without floats
    assert cut_positions(10) == (1, 3) and cut_positions(7) == (1, 3) and cut_positions(21) == (3, 7)
    _, seven = rank_classes(np.arange(7, dtype=np.int64), np.arange(7, 0, -1, dtype=np.int64))
    assert seven.tolist() == [HIGH, MIDDLE, MIDDLE, LOW, LOW, LOW, LOW]


def test_pruned_and_unseen_features_are_other_and_ties_split_by_key() -> None:
    keys = np.array([40, 10, 30, 20, 50], dtype=np.int64)
    counts = np.array([2, 2, 2, 2, 1], dtype=np.int64)
    table = MetaTable.build([(keys, counts)], head_words=np.zeros(0, np.int64), min_count=2)
    assert len(table) == 4  # key 50 pruned
    # four tied features: TOP10 = 1, TOP30 = 2, ties in key order
    classes = table.classify(np.array([10, 20, 30, 40, 50, 99])).tolist()
    assert classes == [HIGH, MIDDLE, LOW, LOW, OTHER, OTHER]
    empty = MetaTable.build([], head_words=np.zeros(0, np.int64))
    assert empty.classify(np.array([[1]])).tolist() == [[OTHER]]


def test_templates_are_ranked_separately() -> None:
    common = (np.arange(10, dtype=np.int64), np.full(10, 5, dtype=np.int64))
    rare = (np.arange(100, 110, dtype=np.int64), np.ones(10, dtype=np.int64))
    table = MetaTable.build([common, rare], head_words=np.zeros(0, np.int64))
    assert table.class_counts() == {"H": 2, "M": 4, "L": 14}
    assert table.classify(np.array([0, 100])).tolist() == [HIGH, HIGH]


def test_table_saves_and_loads(tmp_path: Path) -> None:
    table = MetaTable.build([(np.array([3, 1, 2]), np.array([5, 9, 1]))], head_words=np.array([7, 4]),
                            min_count=1, n_sentences=3, n_words=12)
    table.save(tmp_path / "meta.npz")
    loaded = MetaTable.load(tmp_path / "meta.npz")
    assert np.array_equal(loaded.keys, table.keys) and np.array_equal(loaded.classes, table.classes)
    assert loaded.head_words.tolist() == [4, 7] and loaded.n_words == 12


def test_arc_keys_agree_with_tree_keys_and_tell_unseen_words_apart() -> None:
    s = Sentence.from_words(["Dogs", "bark", "loudly"], upos=["NOUN", "VERB", "ADV"], heads=[2, 0, 2])
    rows = meta_rows(s)
    arcs, tree = arc_keys(rows), tree_keys(rows, s.heads)
    assert arcs.shape == (4, 4, len(META_BASE_TEMPLATES))
    assert np.array_equal(tree, arcs[np.arange(1, 4), s.heads[1:]])
    other = meta_rows(Sentence.from_words(["Cats", "bark", "loudly"], upos=["NOUN", "VERB", "ADV"]))
    changed = arc_keys(other) != arcs
    assert changed[1, 2, META_BASE_TEMPLATES.index("dw")]
    assert not changed[1, 2, META_BASE_TEMPLATES.index("hw")]
    # direction is part of every key: the same words the other way round differ
    reversed_rows = meta_rows(Sentence.from_words(["loudly", "bark"], upos=["ADV", "VERB"]))
    assert arcs[3, 2, 0] != arc_keys(reversed_rows)[1, 2, 0]


def test_learned_table_counts_the_parsed_arcs_and_is_deterministic(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, _ = data
    baseline = RuleParser("gold").fit(train)
    first = learn_table(baseline, train, train, MetaSpec(min_count=1, top_words=50))
    again = learn_table(baseline, train, train, MetaSpec(min_count=1, top_words=50))
    assert np.array_equal(first.keys, again.keys) and np.array_equal(first.classes, again.classes)
    keys = np.concatenate([tree_keys(meta_rows(s), s.heads) for s in train])
    for t in range(len(META_BASE_TEMPLATES)):
        distinct, counts = np.unique(keys[:, t], return_counts=True)
        classes = first.classify(distinct)
        assert np.count_nonzero(classes == HIGH) == cut_positions(len(distinct))[0]
        assert first.classify(distinct[[np.argmax(counts)]]).tolist() == [HIGH]
    assert len(first.head_words) == 50 and first.n_sentences == len(train)
    pruned = learn_table(baseline, train, train, MetaSpec(min_count=2))
    assert 0 < len(pruned) < len(first)


def test_meta_features_fire_only_for_known_head_words(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, test = data
    table = learn_table(RuleParser("gold").fit(train), train, train, MetaSpec(min_count=1, top_words=20))
    rows = meta_rows(test[0])
    features = meta_arc_features(rows, table, n_bits=18)
    t = len(META_BASE_TEMPLATES)
    assert features.shape == (len(test[0]) + 1, len(test[0]) + 1, n_meta_arc_features())
    assert n_meta_arc_features() == 3 * t
    with_word = features[..., 2 * t :]
    known = table.is_head_word(rows[0])
    assert np.all(with_word[:, ~known] == null_index(18)) and np.all(features[..., : 2 * t] < null_index(18))
    assert np.all(with_word[:, known] < null_index(18))


def test_meta_member_is_named_but_not_default() -> None:
    assert set(member_names()) == set(MEMBERS) and "graph1-meta" not in MEMBERS
    assert member_names("graph1-meta") == ["graph1-meta"] and set(META_MEMBERS) == {"graph1-meta"}
    assert build_member("graph1-meta").get_params()["meta"] == "auto"
    assert build_member("graph1").get_params()["meta"] is None


def test_default_graph1_has_no_meta_features(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, test = data
    default = FirstOrderParser(max_iter=1, n_bits=16).fit(train[:60])
    explicit = FirstOrderParser(max_iter=1, n_bits=16, meta=None).fit(train[:60])
    assert default.meta_table_ is None
    tokens = default._tokens(test[0])
    assert np.array_equal(tokens, default.encoder_.encode(test[0]))
    assert np.array_equal(default._arc_features(tokens), arc_features(tokens, n_bits=16))
    assert np.array_equal(default.weights_, explicit.weights_)


def test_meta_member_trains_fires_and_round_trips(
    data: tuple[list[Sentence], list[Sentence]], tmp_path: Path,
) -> None:
    train, test = data
    plain = build_member("graph1", max_iter=2, n_bits=18).fit(train)
    meta = build_member("graph1-meta", max_iter=2, n_bits=18, meta="auto:min_count=1").fit(train)
    assert meta.meta_table_ is not None and len(meta.meta_table_) > 0
    assert meta.meta_table_.n_sentences == len(train)
    sentence = test[0]
    widths = [p._arc_features(p._tokens(sentence)).shape[-1] for p in (plain, meta)]
    assert widths[1] - widths[0] == n_meta_arc_features()
    fired = meta._arc_features(meta._tokens(sentence))[..., widths[0]:]
    assert np.count_nonzero(meta.weights_[fired]) > 0
    trained = [np.count_nonzero(p.weights_[: null_index(18)]) for p in (plain, meta)]
    assert trained[1] > trained[0]
    parses = meta.predict(test)
    assert same_output(parses, meta.predict(test))
    meta.save(tmp_path / "graph1-meta.model")
    loaded = load_model(tmp_path / "graph1-meta.model", BaseParser)
    assert np.array_equal(loaded.meta_table_.keys, meta.meta_table_.keys)
    assert same_output(parses, loaded.predict(test))


def test_a_fit_is_deterministic_and_reads_extra_unlabelled_text(
    data: tuple[list[Sentence], list[Sentence]], tmp_path: Path, ud_root: Path,
) -> None:
    train, test = data
    raw = read_conllu(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-train.conllu")[300:500]
    (tmp_path / "more.conllu").write_text(format_conllu(raw), encoding="utf-8")
    settings = {"max_iter": 1, "n_bits": 16, "meta": "auto:min_count=1"}
    first = FirstOrderParser(**settings).fit(train[:100])
    again = FirstOrderParser(**settings).fit(train[:100])
    assert np.array_equal(first.weights_, again.weights_)
    more = FirstOrderParser(**settings, meta_text=str(tmp_path / "more.conllu")).fit(train[:100])
    assert more.meta_table_ is not None and first.meta_table_ is not None
    assert more.meta_table_.n_sentences == 300 and len(more.meta_table_) > len(first.meta_table_)
    warm = more.set_params(warm_start=True).fit(train[100:120])
    assert warm.meta_table_ is more.meta_table_


def test_raw_text_is_tagged_and_bad_specs_are_refused(
    data: tuple[list[Sentence], list[Sentence]], tmp_path: Path,
) -> None:
    train, _ = data
    (tmp_path / "raw.txt").write_text(" ".join(train[0].forms[1:]) + "\n\n", encoding="utf-8")
    tagged = read_unlabelled(tmp_path / "raw.txt", train[:80])
    assert len(tagged) == 1 and tagged[0].forms == train[0].forms
    assert all(tag != "_" for tag in tagged[0].upos[1:])
    for spec in ("brown", "auto:bad=1", "auto:min_count=x", "auto:folds=-1"):
        with pytest.raises(ValueError):
            MetaSpec.parse(spec)


def test_jackknifed_tables_leave_each_training_sentence_out(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, _ = data
    keys = parsed_keys(RuleParser("gold").fit(train), train[:40])
    tables = jackknifed_tables(keys, 30, train[:30], MetaSpec(min_count=1, folds=3))
    assert len(tables.folds) == 3 and tables.for_training(4) is tables.folds[1]
    for index in range(30):
        own = tables.for_training(index).classify(keys[index])
        others = np.concatenate([k for i, k in enumerate(keys) if i % 3 != index % 3 or i >= 30])
        assert np.all((own != OTHER) == np.isin(keys[index], others))
    assert np.all(tables.full.classify(np.concatenate(keys)) != OTHER)
    assert MetaTables(tables.full).for_training(7) is tables.full
    assert not jackknifed_tables(keys, 30, train[:30], MetaSpec(min_count=1, folds=0)).folds
