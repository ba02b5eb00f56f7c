"""Tests of k-best reranking with data-defined features (parsing.rerank): the features against
finite differences of the network, the reranker's contract (it only picks listed trees, it
can stay at the 1-best), saving and loading, adaptation word slots, and bad input."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.features import UNKNOWN
from parsing.neural import NeuralTransitionParser, network
from parsing.rerank import (
    Candidates,
    Reranker,
    adapt,
    adaptation_words,
    beam_candidates,
    labelled_accuracy,
    perceptron,
    rederived_candidates,
)
from parsing.rerank import features as ft
from parsing.rerank.candidates import oracle_derivation
from parsing.rerank.extract import dimension, iter_features, word_positions
from parsing.rerank.replay import replay
from parsing.types import Sentence
from tests.parsing.conftest import UD_ROOT

TELUGU = UD_ROOT / "UD_Telugu-MTG"
K = 6


@pytest.fixture(scope="module")
def data() -> tuple[list[Sentence], list[Sentence]]:
    """The first 360 training sentences and the first 60 dev sentences of UD_Telugu-MTG."""
    train, dev = TELUGU / "te_mtg-ud-train.conllu", TELUGU / "te_mtg-ud-dev.conllu"
    if not (train.is_file() and dev.is_file()):
        pytest.skip(f"UD_Telugu-MTG not found under {UD_ROOT} (../shared/ud beside the repo)")
    return load_sentences(train)[:360], load_sentences(dev)[:60]


@pytest.fixture(scope="module")
def parser(data: tuple[list[Sentence], list[Sentence]]) -> NeuralTransitionParser:
    """A small network trained for a few epochs on 300 sentences."""
    train = data[0]
    return NeuralTransitionParser(max_epochs=3, hidden=24, beam_size=4, random_state=1).fit(train[:300])


@pytest.fixture(scope="module")
def lists(parser: NeuralTransitionParser, data: tuple[list[Sentence], list[Sentence]]) -> list[Candidates]:
    return beam_candidates(parser, data[1], K)


def _float64(parser: NeuralTransitionParser) -> NeuralTransitionParser:
    """A copy of ``parser`` computing in float64 (for finite differences)."""
    twin = copy.deepcopy(parser)
    twin.params_ = {name: value.astype(np.float64) for name, value in parser.params_.items()}
    return twin


def _log_probs(parser: NeuralTransitionParser, sentence: Sentence, listed: Candidates) -> np.ndarray:
    """``log P`` of each derivation of the list (one derivation per tree in these tests)."""
    steps = replay(parser, [sentence], [[d for ds in listed.derivations for d in ds]])[0]
    return np.array([s.log_prob for s in steps])


def _sentence_with_two_trees(lists: list[Candidates], sentences: list[Sentence]) -> int:
    return next(i for i, listed in enumerate(lists) if len(listed) >= 3 and len(sentences[i]) > 3
                and all(len(ds) == 1 for ds in listed.derivations))


def test_replay_gives_the_beam_scores(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...]
) -> None:
    dev = data[1]
    listed = parser.kbest_derivations(dev, K)
    flat = [[actions for _, _, _, paths in trees for actions, _ in paths] for trees in listed]
    replayed = replay(parser, dev, flat)
    for trees, steps in zip(listed, replayed, strict=True):
        beam = [log_prob for _, _, _, paths in trees for _, log_prob in paths]
        np.testing.assert_allclose([s.log_prob for s in steps], beam, atol=1e-4)


def test_kbest_derivations_list_the_same_trees_as_predict_kbest(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...]
) -> None:
    dev = data[1][:20]
    pairs = zip(parser.kbest_derivations(dev, K), parser.predict_kbest(dev, K), strict=True)
    for with_paths, parses in pairs:
        assert [h.tolist() for h, _, _, _ in with_paths] == [p.heads.tolist() for p in parses]
        assert [d for _, d, _, _ in with_paths] == [p.deprels for p in parses]


def _derivative(parser: NeuralTransitionParser, row: int, column: int, value: Callable[[], float],
                step: float = 1e-6) -> float:
    """Central difference of ``value()`` in one output-layer weight: ``W2[row, column]``, or
    ``b2[column]`` when ``row`` is the hidden width (the bias row of the feature blocks)."""
    hidden = parser.params_["W2"].shape[0]
    name, index = ("b2", (column,)) if row == hidden else ("W2", (row, column))
    values = parser.params_[name]
    saved = values[index]
    values[index] = saved + step
    up = value()
    values[index] = saved - step
    down = value()
    values[index] = saved
    return (up - down) / (2 * step)


def test_fisher_block_matches_finite_differences_of_log_p(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    twin = _float64(parser)
    i = _sentence_with_two_trees(lists, data[1])
    sentence, listed = data[1][i], lists[i]
    steps = replay(twin, [sentence], [listed.derivations[1]])[0][0]
    block = ft.fisher_block(steps)  # (H+1, A): rows of W2, then b2
    hidden = twin.params_["W2"].shape[0]
    used = np.unique(steps.actions)
    checked = [(0, int(used[0])), (3, int(used[-1])), (hidden - 1, 0), (hidden, int(used[-1])), (hidden, 1)]
    def log_p() -> float:
        return float(replay(twin, [sentence], [listed.derivations[1]])[0][0].log_prob)

    for row, column in checked:
        assert block[row, column] == pytest.approx(_derivative(twin, row, column, log_p), abs=1e-6)


def test_top_derivative_matches_finite_differences_of_v(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    twin = _float64(parser)
    i = _sentence_with_two_trees(lists, data[1])
    sentence, listed = data[1][i], lists[i]
    features = next(iter_features(twin, [sentence], [listed], "top"))
    hidden, n_actions = twin.params_["W2"].shape

    def v(y: int) -> float:
        log_p = _log_probs(twin, sentence, listed)
        return float(np.logaddexp.reduce(np.delete(log_p, y)) - log_p[y])

    for y in (0, 1):
        assert features[y, 0] == pytest.approx(v(y), abs=1e-9)
        for row, column in ((0, 0), (2, 1), (hidden, 0)):
            numeric = _derivative(twin, row, column, functools.partial(v, y))
            assert features[y, 1 + row * n_actions + column] == pytest.approx(numeric, abs=1e-6)


def test_efficient_top_is_a_bag_of_decisions_and_hidden_states(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    steps = replay(parser, [data[1][0]], [lists[0].derivations[0]])[0][0]
    bag = ft.bag_block(steps)
    assert set(np.flatnonzero(np.abs(bag).sum(axis=0))) <= set(steps.actions.tolist())
    np.testing.assert_allclose(bag[-1], np.bincount(steps.actions, minlength=bag.shape[1]))
    np.testing.assert_allclose(
        bag - ft.fisher_block(steps), ft.with_bias(steps.hidden).T @ np.exp(steps.log_probs), atol=1e-9
    )
    sparse = Reranker("top_eff", epochs=1).fit(parser, data[1], lists)
    assert sparse.n_train_ > 0


def test_word_slots_are_the_gradient_of_a_copied_unknown_embedding(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    twin = _float64(parser)
    dev = data[1]
    i, word = next((i, form.lower()) for i, s in enumerate(dev) for form in s.forms[1:]
                   if twin.words_.ids([form.lower()])[0] == UNKNOWN and len(lists[i]) > 1)
    sentence, derivation = dev[i], lists[i].derivations[0]
    steps = replay(twin, [sentence], [derivation])[0][0]
    embed = twin.params_["word"].shape[1]
    slot_weights = twin.params_["W1"][: network.F_TOKENS * embed].reshape(network.F_TOKENS, embed, -1)
    block = ft.word_block(steps, word_positions(twin, sentence, [word]), slot_weights, twin.params_["W2"], 1)
    # Re-parameterise: the word gets its own row, a copy of the unknown word's.
    twin.words_ = twin.words_.extended([word])
    twin.params_["word"] = np.vstack([twin.params_["word"], twin.params_["word"][UNKNOWN]])
    row = len(twin.params_["word"]) - 1
    assert replay(twin, [sentence], [derivation])[0][0].log_prob == pytest.approx(steps.log_prob, abs=1e-10)
    step = 1e-6
    for column in range(0, embed, max(1, embed // 5)):
        saved = twin.params_["word"][row, column]
        twin.params_["word"][row, column] = saved + step
        up = replay(twin, [sentence], [derivation])[0][0].log_prob
        twin.params_["word"][row, column] = saved - step
        down = replay(twin, [sentence], [derivation])[0][0].log_prob
        twin.params_["word"][row, column] = saved
        assert block[0, column] == pytest.approx((up - down) / (2 * step), abs=1e-6)


@pytest.mark.parametrize("kind", ["fisher", "top", "top_eff"])
def test_reranker_returns_listed_trees_and_can_stay_at_the_one_best(
    kind: str, parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates],
    tmp_path: Path,
) -> None:
    dev = data[1]
    reranker = Reranker(kind, rate=1.0, epochs=2).fit(parser, dev[:40], lists[:40])
    chosen = reranker.rerank(parser, dev[40:], lists[40:])
    for tree, listed in zip(chosen, lists[40:], strict=True):
        assert any(tree[0] is heads and tree[1] is deprels for heads, deprels in listed.trees)
    # Only the first component: +1 on log P (Fisher) or -1 on v (TOP) gives the model's 1-best.
    stay = copy.copy(reranker)
    stay.weights_ = perceptron.initial_weights(dimension(parser), reranker.sign)
    assert stay.choose(parser, dev, lists) == [0] * len(dev)
    # A file round trip makes the same choices.
    path = tmp_path / f"{kind}.npz"
    reranker.save(path)
    loaded = Reranker.load(path)
    assert loaded.choose(parser, dev, lists) == reranker.choose(parser, dev, lists)
    np.testing.assert_array_equal(loaded.weights_, reranker.weights_)
    with np.load(path, allow_pickle=False) as stored:
        assert "header" in stored


def test_features_beyond_the_memory_budget_are_recomputed(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    dev = data[1]
    cached = Reranker("fisher", epochs=1).fit(parser, dev[:30], lists[:30])
    lazy = Reranker("fisher", epochs=1, max_cache_bytes=0).fit(parser, dev[:30], lists[:30])
    np.testing.assert_allclose(lazy.weights_, cached.weights_, rtol=1e-4, atol=1e-5)


def test_perceptron_update_is_loss_scaled() -> None:
    features = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    gains = np.array([0.5, 0.75])
    weights = np.array([0.0, 1.0, 0.0])
    assert perceptron.update(weights, features, gains, rate=2.0) == 1
    np.testing.assert_allclose(weights, [0.0, 1.0 - 0.5, 0.5])  # 0.25 * 2 * (phi* - phi)
    assert perceptron.update(weights, features, gains, rate=2.0) == 0  # now y* wins


def test_rederived_trees_replay_under_the_parser(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    dev = data[1][:20]
    gold = rederived_candidates(parser, [[(s.heads, s.deprels)] for s in dev])
    assert sum(listed is not None for listed in gold) >= 15
    own = rederived_candidates(parser, [listed.trees for listed in lists[:20]])
    for listed, mine in zip(lists[:20], own, strict=True):
        assert mine is not None and len(mine) == len(listed)
    matrices = list(iter_features(parser, dev, [listed for listed in own if listed is not None], "fisher"))
    assert all(np.isfinite(m).all() for m in matrices)
    assert oracle_derivation(parser, dev[0].heads, ["no-such-label"] * len(dev[0].heads)) is None


def test_adaptation_adds_word_slots(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    reviewed = data[0][300:] + data[1][:40]  # sentences the parser was not trained on
    words = adaptation_words(parser, reviewed)
    assert words and all(parser.words_.ids([w])[0] == UNKNOWN for w in words)
    counts = [sum(form.lower() == word for s in reviewed for form in s.forms[1:]) for word in words]
    assert min(counts) >= 2 and counts == sorted(counts, reverse=True)
    reranker = adapt(parser, reviewed, kind="top", k=K, epochs=1)
    assert reranker.words == words
    assert len(reranker.weights_) == dimension(parser, len(words))
    assert len(reranker.choose(parser, data[1][40:], lists[40:])) == 20
    plain = adapt(parser, reviewed, kind="top", k=K, epochs=1, word_slots=False)
    assert plain.words == []


def test_bad_input_raises_clear_errors(
    parser: NeuralTransitionParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    with pytest.raises(ValueError, match="at least one tree"):
        Candidates([], [])
    with pytest.raises(ValueError, match="k must be at least 1"):
        beam_candidates(parser, data[1][:2], 0)
    with pytest.raises(ValueError, match="unknown feature kind"):
        Reranker("svm")
    with pytest.raises(ValueError, match="candidate lists"):
        Reranker().fit(parser, data[1][:3], lists[:2])
    with pytest.raises(ValueError, match="not fitted"):
        Reranker().choose(parser, data[1][:2], lists[:2])
    single = [Candidates(listed.trees[:1], listed.derivations[:1]) for listed in lists[:3]]
    with pytest.raises(ValueError, match="two or more candidates"):
        Reranker().fit(parser, data[1][:3], single)
    assert labelled_accuracy(data[1][0], [(data[1][0].heads, data[1][0].deprels)]).tolist() == [1.0]
