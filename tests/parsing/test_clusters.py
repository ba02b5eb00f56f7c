"""Word clusterings: Brown (exact merges over a bounded active set) and context-vector clusters."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from parsing.clusters import UNKNOWN_WORD, ClusterLexicon, is_prefix_code, normalize_word
from parsing.clusters.brown import _ActiveSet, ami_terms, brown_clusters
from parsing.clusters.context import context_clusters
from parsing.clusters.corpus import Corpus, sentence_words
from parsing.clusters.recipes import ClusterSpec, resolve_lexicon
from parsing.conllu_io import load_sentences

DETERMINERS = ("the", "a", "an", "his", "my", "your")
VERBS = ("is", "was", "have", "be", "get", "know")
MODALS = ("can", "could", "will", "would", "should")


@pytest.fixture(scope="module")
def english(ud_root: Path) -> list[list[str]]:
    """The words of a shared UD file (English EWT dev, 25k words), trees unused."""
    return sentence_words(load_sentences(ud_root / "UD_English-EWT" / "en_ewt-ud-dev.conllu"))


@pytest.fixture(scope="module")
def brown(english: list[list[str]]) -> ClusterLexicon:
    return brown_clusters(english, n_clusters=50, seed=0)


def shared_bits(lexicon: ClusterLexicon, first: str, second: str) -> int:
    """Length of the common prefix of two words' paths."""
    a, b = lexicon.path(first), lexicon.path(second)
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def is_full_binary_tree(paths: list[str]) -> bool:
    """A prefix code whose leaves fill the tree: Kraft's sum is exactly 1."""
    return is_prefix_code(paths) and sum(Fraction(1, 2 ** len(p)) for p in set(paths)) == 1


def test_loss_table_is_the_exact_ami_loss_of_every_merge(english: list[list[str]]) -> None:
    corpus = Corpus.build(english[:400], min_count=2)
    state = _ActiveSet(corpus, 13)
    for word in range(120):
        state.add(word)
        if state.n_active > 12:
            state.merge(*state.best_pair())
    active = np.flatnonzero(state.active).tolist()
    before = ami_terms(state.p2, state.p1).sum()
    for i, j in combinations(active, 2):
        p2, p1 = state.p2.copy(), state.p1.copy()
        p2[i] += p2[j]
        p2[:, i] += p2[:, j]
        p2[j], p2[:, j], p1[i], p1[j] = 0, 0, p1[i] + p1[j], 1.0
        assert state.loss[i, j] == pytest.approx(before - ami_terms(p2, p1).sum(), abs=1e-12)
    i, j = state.best_pair()
    assert state.loss[i, j] == min(state.loss[a, b] for a, b in combinations(active, 2))


def test_brown_is_deterministic_for_a_seed(english: list[list[str]], brown: ClusterLexicon) -> None:
    assert brown_clusters(english, n_clusters=50, seed=0).paths == brown.paths


def test_brown_paths_are_the_leaves_of_a_binary_tree(brown: ClusterLexicon) -> None:
    paths = list(brown.paths.values())
    assert is_full_binary_tree(paths)
    assert len(set(paths)) == 50


def test_brown_puts_frequent_function_words_together(brown: ClusterLexicon) -> None:
    among_determiners = min(shared_bits(brown, a, b) for a, b in combinations(DETERMINERS, 2))
    determiner_verb = max(shared_bits(brown, d, v) for d in DETERMINERS for v in VERBS)
    assert among_determiners > determiner_verb
    assert len({brown.path(modal) for modal in MODALS}) == 1
    assert brown.path("in") == brown.path("on") != brown.path("the")


def test_rare_and_unseen_words_get_the_unknown_path(brown: ClusterLexicon) -> None:
    assert UNKNOWN_WORD in brown.paths
    assert brown.path("zzzz-never-seen") == brown.paths[UNKNOWN_WORD]
    assert brown.path("THE") == brown.path("the")
    assert normalize_word("Route66") == "route00"


def test_context_clusters_differ_across_seeds_but_agree_beyond_chance(english: list[list[str]]) -> None:
    first = context_clusters(english, n_clusters=40, seed=1)
    second = context_clusters(english, n_clusters=40, seed=2)
    assert context_clusters(english, n_clusters=40, seed=1).paths == first.paths
    for lexicon in (first, second):
        assert is_full_binary_tree(list(lexicon.paths.values()))
        assert len(set(lexicon.paths.values())) == 40
    words = sorted(first.paths)
    agreement = adjusted_rand_score([first.paths[w] for w in words], [second.paths[w] for w in words])
    assert first.paths != second.paths
    assert 0.2 < agreement < 0.95


def test_lexicon_prefixes_codes_and_file_round_trip(brown: ClusterLexicon, tmp_path: Path) -> None:
    word = "the"
    assert brown.prefix(word, 4) == brown.path(word)[:4]
    codes = brown.codes(["the", "a", "zzzz-never-seen"], 4)
    assert codes[0] >= 1 and codes[2] == brown.codes([UNKNOWN_WORD], 4)[0]
    assert (codes[0] == codes[1]) == (brown.prefix("the", 4) == brown.prefix("a", 4))
    brown.save(tmp_path / "brown.npz")
    loaded = ClusterLexicon.load(tmp_path / "brown.npz")
    assert loaded.paths == brown.paths and (loaded.method, loaded.seed) == ("brown", 0)
    assert np.array_equal(loaded.codes(["the", "is", "?"], None), brown.codes(["the", "is", "?"], None))


@pytest.mark.parametrize("learn", [brown_clusters, context_clusters])
@pytest.mark.parametrize("text", [[], [["a"]], [[], ["x", "y", "x"]], [["a", "b", "a", "c"]]])
def test_tiny_texts_give_a_prefix_code(learn: Callable[..., ClusterLexicon], text: list[list[str]]) -> None:
    lexicon = learn(text, n_clusters=5, min_count=1)
    assert set(lexicon.paths) == {w for s in text for w in s}
    paths = list(lexicon.paths.values())
    assert set(paths) <= {"0"} or is_full_binary_tree(paths)  # one cluster: the path "0"


def test_specs_are_parsed_and_resolved(tmp_path: Path) -> None:
    assert ClusterSpec.parse("brown:clusters=8:seed=3") == ClusterSpec("brown", 8, 2, 3)
    with pytest.raises(ValueError, match="unknown clustering"):
        ClusterSpec.parse("hmm")
    with pytest.raises(ValueError, match="bad clustering setting"):
        ClusterSpec.parse("brown:size=3")
    lexicon = ClusterLexicon({"a": "0", "b": "1"}, "brown")
    lexicon.save(tmp_path / "lexicon.npz")
    assert resolve_lexicon(str(tmp_path / "lexicon.npz"), []).paths == lexicon.paths
    assert resolve_lexicon(lexicon, []) is lexicon
