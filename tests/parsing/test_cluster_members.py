"""Members with word-cluster features: they train, fire their cluster features, save their
lexicon with the model, and leave the default members unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.base import BaseParser
from parsing.clusters import UNKNOWN_WORD, ClusterLexicon, normalize_word
from parsing.clusters.brown import brown_clusters
from parsing.clusters.corpus import sentence_words
from parsing.conllu_io import load_sentences
from parsing.graph.cluster_templates import (
    CLUSTER_ARC_TEMPLATES,
    cluster_arc_features,
    n_cluster_arc_features,
)
from parsing.graph.first_order import FirstOrderParser
from parsing.graph.templates import null_index
from parsing.members import CLUSTER_MEMBERS, MEMBERS, build_member, member_names
from parsing.persist import load_model
from parsing.transition.parser import make_member
from parsing.transition.templates import BASE, CLUSTER_TEMPLATES, TEMPLATES, config_atoms, hash_atoms
from parsing.types import Parse, Sentence


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / "UD_Telugu-MTG"
    return (load_sentences(folder / "te_mtg-ud-train.conllu")[:300],
            load_sentences(folder / "te_mtg-ud-test.conllu")[:60])


@pytest.fixture(scope="module")
def lexicon(data: tuple[list[Sentence], list[Sentence]]) -> ClusterLexicon:
    return brown_clusters(sentence_words(data[0]), n_clusters=16, min_count=1)


def same_output(first: list[Parse], second: list[Parse]) -> bool:
    pairs = zip(first, second, strict=True)
    return all(np.array_equal(a.heads, b.heads) and a.deprels == b.deprels for a, b in pairs)


def test_cluster_members_are_named_but_not_default() -> None:
    assert set(member_names()) == set(MEMBERS)
    assert not set(CLUSTER_MEMBERS) & set(MEMBERS)
    assert member_names("graph1-brown,eager-context2") == ["graph1-brown", "eager-context2"]
    parser = build_member("eager-context1")
    assert parser.get_params()["clusters"] == "context:seed=1"
    assert parser.get_params()["system"] == "arc-eager"
    assert build_member("graph1").get_params()["clusters"] is None


def test_graph_member_with_clusters_trains_fires_and_round_trips(
    data: tuple[list[Sentence], list[Sentence]], lexicon: ClusterLexicon, tmp_path: Path,
) -> None:
    train, test = data
    plain = FirstOrderParser(max_iter=2, n_bits=18).fit(train)
    clustered = FirstOrderParser(max_iter=2, n_bits=18, clusters=lexicon).fit(train)
    assert plain.lexicon_ is None and clustered.lexicon_ is lexicon
    sentence = test[0]
    plain_width = plain._arc_features(plain._tokens(sentence)).shape[-1]
    clustered_width = clustered._arc_features(clustered._tokens(sentence)).shape[-1]
    assert clustered_width - plain_width == n_cluster_arc_features() == 2 * len(CLUSTER_ARC_TEMPLATES)
    fired = cluster_arc_features(clustered._tokens(sentence), n_bits=18)
    assert np.count_nonzero(clustered.weights_[fired]) > 0
    trained = [np.count_nonzero(p.weights_[: null_index(18)]) for p in (plain, clustered)]
    assert trained[1] > trained[0]
    clustered.save(tmp_path / "graph1.model")
    loaded = load_model(tmp_path / "graph1.model", BaseParser)
    assert loaded.lexicon_.paths == lexicon.paths
    assert same_output(clustered.predict(test), loaded.predict(test))


def test_cluster_prefixes_change_the_cluster_features_only(
    data: tuple[list[Sentence], list[Sentence]], lexicon: ClusterLexicon,
) -> None:
    train, test = data
    parser = FirstOrderParser(max_iter=1, n_bits=18, clusters=lexicon).fit(train[:50])
    tokens = parser._tokens(test[1])
    other = tokens.copy()
    other[-3:, 1:] += 1000  # every word in another cluster
    before, after = parser._arc_features(tokens), parser._arc_features(other)
    width = before.shape[-1] - n_cluster_arc_features()
    assert np.array_equal(before[..., :width], after[..., :width])
    assert not np.array_equal(before[..., width:], after[..., width:])


def test_transition_member_with_clusters_trains_fires_and_round_trips(
    data: tuple[list[Sentence], list[Sentence]], lexicon: ClusterLexicon, tmp_path: Path,
) -> None:
    train, test = data
    plain = make_member("eager", epochs=2, n_bits=18).fit(train)
    clustered = make_member("eager", epochs=2, n_bits=18, clusters=lexicon).fit(train)
    assert plain.templates() is BASE
    assert len(clustered.templates().ids) == len(TEMPLATES) + len(CLUSTER_TEMPLATES)
    assert clustered.weights_.dense().shape[0] > plain.weights_.dense().shape[0]
    atoms = clustered._encode(train[0], gold=False).atoms
    assert atoms.shape[0] == 7 and np.all(atoms[4:, 1 : len(train[0]) + 1] >= 1)
    state = clustered._system().initial(len(train[0]))
    buckets = hash_atoms(config_atoms(state, atoms), 18, clustered.templates())[len(TEMPLATES):]
    assert np.count_nonzero(clustered.rows_.dense()[buckets]) >= len(CLUSTER_TEMPLATES) // 2
    batch = clustered.predict(test)
    assert same_output(batch, [clustered._parse(s) for s in test])
    clustered.save(tmp_path / "eager.model")
    loaded = load_model(tmp_path / "eager.model", BaseParser)
    assert loaded.lexicon_.paths == lexicon.paths
    assert same_output(batch, loaded.predict(test))


def test_a_spec_is_learned_from_the_training_words_and_kept_by_a_warm_fit(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, _ = data
    spec = "brown:clusters=8:min_count=1"
    parser = make_member("eager", epochs=1, n_bits=16, clusters=spec).fit(train[:100])
    assert parser.lexicon_ is not None and len(set(parser.lexicon_.paths.values())) == 8
    words = {normalize_word(w) for s in train[:100] for w in s.forms[1:]}
    assert set(parser.lexicon_.paths) <= words | {UNKNOWN_WORD}
    learned = parser.lexicon_
    parser.set_params(warm_start=True).fit(train[100:150])
    assert parser.lexicon_ is learned
