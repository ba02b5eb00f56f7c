"""Tests of the graph-based parsers (graph1, graph2) and their feature templates.

Trained on the first 300 sentences of UD_Tamil-TTB train and scored on its dev set; the
trivial baselines (attach every word to its neighbour, most frequent label) are computed here.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from parsing.base import BaseParser
from parsing.conllu_io import load_sentences
from parsing.decoders.first_order import is_projective, is_tree
from parsing.decoders.second_order import score_second_order
from parsing.graph.first_order import FirstOrderParser
from parsing.graph.second_order import SecondOrderParser, candidate_siblings, previous_siblings
from parsing.graph.templates import (
    ARC_TEMPLATES,
    TokenEncoder,
    arc_features,
    n_arc_features,
    n_sibling_features,
    null_index,
    sibling_features,
    single_arc_features,
)
from parsing.scorer.metrics import evaluate
from parsing.types import NO_HEAD, Parse, Sentence

TREEBANK = "UD_Tamil-TTB"
N_BITS = 18
VARIANTS = {  # trained once each; the decoding variants reuse those weights
    "graph1": ("graph1", {}),
    "graph1-projective": ("graph1", {"projective": True}),
    "graph2": ("graph2", {}),
    "graph2-non-projective": ("graph2", {"non_projective": True}),
}


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / TREEBANK
    if not folder.is_dir():
        pytest.skip(f"{TREEBANK} not found under {ud_root}")
    train = load_sentences(next(folder.glob("*-ud-train.conllu")))[:300]
    dev = load_sentences(next(folder.glob("*-ud-dev.conllu")))
    return train, dev


@pytest.fixture(scope="module")
def fitted(data: tuple[list[Sentence], list[Sentence]]) -> dict[str, BaseParser]:
    train, dev = data
    trained: dict[str, BaseParser] = {
        "graph1": FirstOrderParser(max_iter=3, n_bits=N_BITS, learner="perceptron").fit(train, dev),
        "graph2": SecondOrderParser(max_iter=3, n_bits=N_BITS).fit(train, dev),
    }
    return {name: copy.copy(trained[base]).set_params(**params) for name, (base, params) in VARIANTS.items()}


def _baseline(gold: list[Sentence], train: list[Sentence]) -> tuple[float, float]:
    """Best of "attach to the previous word" / "to the next word" (the first or last word
    to ROOT), with the most frequent training label: its UAS and LAS."""
    label = Counter(r for s in train for r in s.deprels[1:]).most_common(1)[0][0]
    best = (0.0, 0.0)
    for step in (-1, 1):
        parses = []
        for s in gold:
            n = len(s)
            heads = np.arange(n + 1) + step
            heads[0] = NO_HEAD
            heads[n if step == 1 else 1] = 0
            parses.append(Parse(heads=heads, deprels=["", *[label] * n]))
        scores = evaluate(gold, parses)
        best = max(best, (scores.uas.f1, scores.las.f1))
    return best


@pytest.mark.parametrize("name", ["graph1", "graph2"])
def test_parser_learns_well_above_a_trivial_baseline(
    name: str, fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = data
    baseline_uas, baseline_las = _baseline(dev, train)
    scores = evaluate(dev, fitted[name].predict(dev))
    assert scores.uas.f1 > baseline_uas + 0.2
    assert scores.las.f1 > baseline_las + 0.3


def test_second_order_beats_first_order_on_projective_decoding(
    fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    _, dev = data
    first = evaluate(dev, fitted["graph1-projective"].predict(dev)).uas.f1
    second = evaluate(dev, fitted["graph2"].predict(dev)).uas.f1
    assert second > first - 0.02  # siblings help or, on 300 sentences, at least do not hurt much


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_outputs_are_single_rooted_trees_with_confidences(
    name: str, fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    dev = data[1][:40]
    for sentence, parse in zip(dev, fitted[name].predict(dev), strict=True):
        assert parse.heads.shape == (len(sentence) + 1,) and parse.heads[0] == -1
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads == 0) == 1
        if name in ("graph1-projective", "graph2"):
            assert is_projective(parse.heads)
        assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
        assert np.all((parse.arc_scores[1:] > 0) & (parse.arc_scores[1:] <= 1))
        assert len(parse.deprels) == len(sentence) + 1 and parse.deprels[0] == ""
        assert all(parse.deprels[1:])


@pytest.mark.parametrize("name", ["graph1", "graph2"])
def test_save_load_gives_identical_output(
    name: str, fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]], tmp_path: Path
) -> None:
    dev = data[1][:40]
    parser = fitted[name]
    parser.save(tmp_path / "model.bin")
    loaded = type(parser).load(tmp_path / "model.bin")
    for before, after in zip(parser.predict(dev), loaded.predict(dev), strict=True):
        assert before.heads.tolist() == after.heads.tolist()
        assert before.deprels == after.deprels
        assert np.array_equal(before.arc_scores, after.arc_scores, equal_nan=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [FirstOrderParser, SecondOrderParser])
def test_seeded_training_is_deterministic_and_leaves_the_input_alone(
    cls: type[FirstOrderParser] | type[SecondOrderParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = data
    train, dev = train[:60], dev[:20]
    snapshot = copy.deepcopy((train, dev))
    first = cls(max_iter=2, n_bits=16, random_state=7).fit(train, dev)
    second = cls(max_iter=2, n_bits=16, random_state=7).fit(train, dev)
    assert np.array_equal(first.weights_, second.weights_)
    first.predict(dev)
    for original, kept in zip([*train, *dev], [*snapshot[0], *snapshot[1]], strict=True):
        assert original.forms == kept.forms and original.deprels == kept.deprels
        assert original.upos == kept.upos and np.array_equal(original.heads, kept.heads)


def test_predict_ignores_heads_and_works_without_them(
    fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    _, dev = data
    blank = [copy.deepcopy(s) for s in dev[:20]]
    for s in blank:
        s.heads[1:] = NO_HEAD
        s.deprels[1:] = ["_"] * len(s)
    parser = fitted["graph2"]
    for with_tree, without in zip(parser.predict(dev[:20]), parser.predict(blank), strict=True):
        assert with_tree.heads.tolist() == without.heads.tolist()
        assert with_tree.deprels == without.deprels


def test_score_arcs_is_the_learned_arc_matrix(
    fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    _, dev = data
    parser = fitted["graph1"]
    assert isinstance(parser, FirstOrderParser)
    sentence = dev[0]
    scores = parser.score_arcs(sentence)
    n = len(sentence)
    assert scores.shape == (n + 1, n + 1)
    assert np.all(np.isneginf(scores[0])) and np.all(np.isneginf(np.diag(scores)))
    assert np.all(np.isfinite(scores[1:][~np.eye(n + 1, dtype=bool)[1:]]))


def test_arc_features_vectorised_equal_one_arc_at_a_time(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, dev = data
    encoder = TokenEncoder.build(train)
    rng = np.random.default_rng(0)
    for sentence in dev[:3]:
        tokens = encoder.encode(sentence)
        features = arc_features(tokens, n_bits=N_BITS)
        n = len(sentence)
        assert features.shape == (n + 1, n + 1, n_arc_features(tokens))
        assert features.min() >= 0 and features.max() <= null_index(N_BITS)
        arcs = [(0, 0), (1, 0), (n, 0), (1, n), (n, 1)] + [tuple(a) for a in rng.integers(0, n + 1, (15, 2))]
        for dep, head in arcs:
            expected = single_arc_features(tokens, dep, head, n_bits=N_BITS)
            assert features[dep, head].tolist() == expected.tolist()


def test_in_between_features_are_off_for_adjacent_words(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, _ = data
    encoder = TokenEncoder.build(train)
    tokens = encoder.encode(train[0])
    features = arc_features(tokens, n_bits=N_BITS)
    null = null_index(N_BITS)
    assert np.count_nonzero(features[2, 1] == null) == n_arc_features(tokens) - 2 * len(ARC_TEMPLATES)
    assert np.count_nonzero(features[len(train[0]), 0] == null) < np.count_nonzero(features[2, 1] == null)


def test_sibling_features_vectorised_equal_one_part_at_a_time(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, _ = data
    tokens = TokenEncoder.build(train).encode(train[1])
    size = tokens.shape[1]
    allowed = ~np.eye(size, dtype=bool)
    allowed[0] = False
    head, sibling, child = candidate_siblings(allowed)
    together = sibling_features(tokens, head, sibling, child, n_bits=N_BITS)
    assert together.shape == (len(head), n_sibling_features())
    for t in range(0, len(head), 7):
        alone = sibling_features(tokens, head[t : t + 1], sibling[t : t + 1], child[t : t + 1], n_bits=N_BITS)
        assert alone[0].tolist() == together[t].tolist()


def test_candidate_siblings_cover_every_tree_part(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, _ = data
    for sentence in train[:30]:
        size = len(sentence) + 1
        allowed = np.zeros((size, size), dtype=bool)
        allowed[np.arange(1, size), sentence.heads[1:]] = True
        parts = set(zip(*(p.tolist() for p in candidate_siblings(allowed)), strict=True))
        previous = previous_siblings(sentence.heads)
        for word in range(1, size):
            assert (int(sentence.heads[word]), int(previous[word]), word) in parts


def test_second_order_tables_score_trees_like_their_features(
    fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    _, dev = data
    parser = fitted["graph2"]
    assert isinstance(parser, SecondOrderParser)
    for sentence in dev[:10]:
        arcs, siblings = parser.score_parts(sentence)
        predicted = parser.predict([sentence])[0].heads
        for heads in (predicted, sentence.heads):
            from_features = parser.tree_score(sentence, heads)
            if np.isfinite(arcs[np.arange(1, len(heads)), heads[1:]]).all():
                assert score_second_order(arcs, siblings, heads) == pytest.approx(from_features, rel=1e-4)


def test_fit_rejects_bad_input() -> None:
    tree = Sentence.from_words(["a"], upos=["X"], heads=[0], deprels=["root"])
    with pytest.raises(ValueError, match="learner"):
        FirstOrderParser(learner="svm").fit([tree])
    with pytest.raises(ValueError, match="gold tree"):
        FirstOrderParser().fit([Sentence.from_words(["a"])])


@pytest.mark.parametrize("name", ["graph1", "graph2-non-projective"])
def test_one_word_sentences_and_empty_input(name: str, fitted: dict[str, BaseParser]) -> None:
    parser = fitted[name]
    assert parser.predict([]) == []
    (parse,) = parser.predict([Sentence.from_words(["hello"], upos=["INTJ"])])
    assert parse.heads.tolist() == [-1, 0]


def test_second_order_falls_back_to_first_order_beyond_max_length(
    fitted: dict[str, BaseParser], data: tuple[list[Sentence], list[Sentence]]
) -> None:
    short = copy.copy(fitted["graph2"]).set_params(max_length=5)
    long_sentences = [s for s in data[1] if len(s) > 5][:10]
    for parse in short.predict(long_sentences):
        assert is_tree(parse.heads) and is_projective(parse.heads)
    assert isinstance(short, SecondOrderParser)
    with pytest.raises(ValueError, match="max_length"):
        short.score_parts(long_sentences[0])
