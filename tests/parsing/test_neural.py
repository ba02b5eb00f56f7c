"""Tests of the neural transition parser (parsing.neural): network gradients, learning on a
real treebank slice, k-best distributions and arc posteriors, the estimator contract."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from parsing.conllu_io import load_sentences
from parsing.decoders.first_order import is_tree
from parsing.neural import NeuralTransitionParser, system
from parsing.neural import network as nw
from parsing.neural.batch import Configurations
from parsing.neural.features import children
from parsing.neural.search import ActionSpace, Hypothesis, Scorer, beam_search, step_inputs, top_k
from parsing.scorer.metrics import evaluate
from parsing.types import Parse, Sentence
from tests.parsing.conftest import UD_ROOT

TELUGU = UD_ROOT / "UD_Telugu-MTG"


@pytest.fixture(scope="module")
def telugu() -> tuple[list[Sentence], list[Sentence]]:
    """The first 300 training sentences and the dev set of UD_Telugu-MTG."""
    train, dev = TELUGU / "te_mtg-ud-train.conllu", TELUGU / "te_mtg-ud-dev.conllu"
    if not (train.is_file() and dev.is_file()):
        pytest.skip(f"UD_Telugu-MTG not found under {UD_ROOT} (../shared/ud beside the repo)")
    return load_sentences(train)[:360], load_sentences(dev)


@pytest.fixture(scope="module")
def parser(telugu: tuple[list[Sentence], list[Sentence]]) -> NeuralTransitionParser:
    """Trained on 300 sentences; the next 60 training sentences pick the epoch."""
    train = telugu[0]
    return NeuralTransitionParser(max_epochs=6, beam_size=4, random_state=3).fit(train[:300], train[300:])


def _tiny_network() -> tuple[nw.Params, tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(0)
    sizes = nw.Sizes(7, 6, 5, 4, 6, word_dim=3, suffix_dim=2, tag_dim=2, label_dim=2, hidden=5)
    params = nw.init_params(sizes, rng, np.float64)
    tokens = rng.integers(0, 5, (4, nw.F_TOKENS, 3))
    labels = rng.integers(0, 4, (4, nw.F_LABELS))
    valid = rng.random((4, 6)) > 0.3
    valid[:, 0] = True
    gold = np.array([np.flatnonzero(row)[-1] for row in valid])
    return params, (tokens, labels, valid, gold)


def test_gradients_match_finite_differences() -> None:
    params, batch = _tiny_network()
    _, grads = nw.loss_and_grads(params, *batch, l2=0.1)
    step = 1e-6
    for name, values in params.items():
        numeric = np.zeros_like(values)
        for index in np.ndindex(values.shape):
            saved = values[index]
            values[index] = saved + step
            up, _ = nw.loss_and_grads(params, *batch, l2=0.1)
            values[index] = saved - step
            down, _ = nw.loss_and_grads(params, *batch, l2=0.1)
            values[index] = saved
            numeric[index] = (up - down) / (2 * step)
        np.testing.assert_allclose(grads[name], numeric, atol=1e-7, err_msg=name)


def test_precomputed_tables_equal_the_direct_forward_pass() -> None:
    params, (tokens, labels, valid, _) = _tiny_network()
    table = nw.token_table(params, tokens.reshape(-1, 3))
    rows = np.arange(len(tokens) * nw.F_TOKENS).reshape(len(tokens), nw.F_TOKENS)
    fast = nw.log_probs_from_tables(params, table, nw.label_table(params), rows, labels, valid)
    direct = nw.log_probs(params, tokens, labels, valid)
    np.testing.assert_allclose(fast[valid], direct[valid])
    assert np.all(np.isneginf(fast[~valid]))


def test_children_of_a_partial_tree() -> None:
    heads = np.array([[-1, 3, 3, 0, 3, 3, -1], [-1, -1, -1, -1, -1, -1, -1]])
    leftmost = np.array([[-1, -1, -1, 1, -1, -1, -1], [-1] * 7])
    rightmost = np.array([[-1, -1, -1, 5, -1, -1, -1], [-1] * 7])
    lc1, lc2, rc1, rc2 = children(heads, leftmost, rightmost, np.array([3, 2]))
    assert (lc1.tolist(), lc2.tolist(), rc1.tolist(), rc2.tolist()) == ([1, -1], [2, -1], [5, -1], [4, -1])


def test_learns_well_above_a_trivial_baseline(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]]
) -> None:
    train, dev = telugu
    assert 1 <= parser.n_epochs_ <= 6 and len(parser.history_) >= parser.n_epochs_
    label = Counter(d for s in train[:300] for d in s.deprels[1:]).most_common(1)[0][0]
    chains = [
        Parse(np.array([-1, *range(2, len(s) + 1), 0]), ["", *[label] * (len(s) - 1), "root"]) for s in dev
    ]
    baseline = evaluate(dev, chains)
    scores = evaluate(dev, parser.predict(dev))
    assert scores.uas.f1 > baseline.uas.f1 + 0.3
    assert scores.las.f1 > baseline.las.f1 + 0.4 and scores.las.f1 > 0.55


def test_outputs_are_single_rooted_trees_with_kbest_distributions(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]]
) -> None:
    for parse in parser.predict(telugu[1][:40]):
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads == 0) == 1
        kbest = parse.extras["kbest"]
        assert isinstance(kbest, list) and 1 <= len(kbest) <= parser.beam_size
        probs = np.array([prob for _, _, prob in kbest])
        assert np.all(np.diff(probs) <= 0) and probs.sum() == pytest.approx(1.0)
        assert np.array_equal(kbest[0][0], parse.heads) and kbest[0][1] == parse.deprels
        assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
        posterior = parse.arc_scores[1:]
        assert np.all((posterior >= 0) & (posterior <= 1 + 1e-12))
        agree = np.all(np.stack([heads for heads, _, _ in kbest]) == parse.heads, axis=0)[1:]
        np.testing.assert_allclose(posterior[agree], 1.0)
        assert np.all(posterior[~agree] < 1)


def test_predict_kbest_ranks_distinct_trees(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]]
) -> None:
    lists = parser.predict_kbest(telugu[1][:20], 6)
    assert len(lists) == 20
    for parses in lists:
        assert 1 <= len(parses) <= 6
        trees = {(p.heads.tobytes(), tuple(p.deprels)) for p in parses}
        assert len(trees) == len(parses)
        assert [p.extras["rank"] for p in parses] == list(range(len(parses)))


def test_beam_one_equals_greedy(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]]
) -> None:
    dev = telugu[1]
    beam = copy.copy(parser).set_params(beam_size=1)
    for by_beam, by_greedy in zip(beam.predict(dev), parser.predict_greedy(dev), strict=True):
        assert np.array_equal(by_beam.heads, by_greedy.heads) and by_beam.deprels == by_greedy.deprels


def test_save_and_load_give_identical_output(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]], tmp_path: Path
) -> None:
    dev = telugu[1][:40]
    parser.save(tmp_path / "neural.model")
    loaded = NeuralTransitionParser.load(tmp_path / "neural.model")
    for a, b in zip(parser.predict(dev), loaded.predict(dev), strict=True):
        assert np.array_equal(a.heads, b.heads) and a.deprels == b.deprels
        np.testing.assert_array_equal(a.arc_scores, b.arc_scores)


def test_seeded_fit_is_deterministic_and_leaves_the_input_alone(
    telugu: tuple[list[Sentence], list[Sentence]],
) -> None:
    train = telugu[0][:80]
    snapshot = copy.deepcopy(train)
    first = NeuralTransitionParser(max_epochs=2, hidden=32, random_state=7).fit(train)
    second = NeuralTransitionParser(max_epochs=2, hidden=32, random_state=7).fit(train)
    for name, values in first.params_.items():
        np.testing.assert_array_equal(values, second.params_[name])
    first.predict(train)
    for before, after in zip(snapshot, train, strict=True):
        assert before.forms == after.forms and before.deprels == after.deprels
        assert np.array_equal(before.heads, after.heads)


def test_feats_are_an_extra_token_table(telugu: tuple[list[Sentence], list[Sentence]]) -> None:
    train, dev = telugu
    parser = NeuralTransitionParser(max_epochs=1, hidden=16, use_feats=True).fit(train[:50])
    assert "feats" in parser.params_ and parser.feats_ is not None
    assert all(is_tree(parse.heads) for parse in parser.predict(dev[:10]))


def test_parses_sentences_without_heads_and_unseen_words(parser: NeuralTransitionParser) -> None:
    sentences = [
        Sentence.from_words(["zzz", "qqq", "xxx"], upos=["NOUN", "UNSEEN", "VERB"]),
        Sentence.from_words(["one"]),
        Sentence.from_words([]),
    ]
    assert parser.predict([]) == [] and parser.predict_kbest([], 3) == []
    parses = parser.predict(sentences)
    assert [len(p) for p in parses] == [3, 1, 0]
    assert parses[1].heads.tolist() == [-1, 0]
    assert all(is_tree(p.heads) for p in parses[:2])
    assert set(parses[0].deprels[1:]) <= set(parser.labels_) | {d.split("↑")[0] for d in parser.labels_}


def test_hyperparameters_follow_the_estimator_contract() -> None:
    parser = NeuralTransitionParser(beam_size=3, hidden=17)
    assert clone(parser).get_params()["hidden"] == 17
    with pytest.raises(ValueError, match="single-rooted"):
        parser.fit([Sentence.from_words(["a"])])


def test_top_k_orders_as_a_stable_sort() -> None:
    """The beam's partition-based selection keeps exactly what a stable full sort keeps."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        rows, columns, k = (int(v) for v in (rng.integers(1, 6), rng.integers(1, 40), rng.integers(1, 8)))
        scores = rng.integers(-3, 3, size=(rows, columns)).astype(np.float64)  # many ties
        scores[rng.random(scores.shape) < 0.4] = -np.inf
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        kept = np.take_along_axis(scores, order, axis=1)
        expected = [
            [(int(c), float(v)) for c, v in zip(order[j], kept[j], strict=True) if np.isfinite(v)]
            for j in range(rows)
        ]
        assert top_k(scores, k) == expected


def _beam_search_by_state(
    scorer: Scorer, space: ActionSpace, lengths: list[int], offsets: np.ndarray, beam: int
) -> list[list[Hypothesis]]:
    """The reference: the same beam search, one :class:`State` per hypothesis."""
    beams = [[Hypothesis(system.start(n), 0.0)] for n in lengths]
    active = [i for i, hyps in enumerate(beams) if not system.is_final(hyps[0].state)]
    while active:
        hyps = [hyp for i in active for hyp in beams[i]]
        owners = [i for i in active for _ in beams[i]]
        totals = scorer(*step_inputs([h.state for h in hyps], space, offsets[owners]))
        totals = totals + np.array([h.log_prob for h in hyps])[:, None]
        first = 0
        for i in active:
            parents, first = hyps[first : first + len(beams[i])], first + len(beams[i])
            flat = np.full((beam, space.n_actions), -np.inf)
            flat[: len(parents)] = totals[first - len(parents) : first]
            beams[i] = []
            for c, score in top_k(flat.reshape(1, -1), beam)[0]:
                parent, action = divmod(c, space.n_actions)
                moved = system.advance(parents[parent].state, *space.decode(action))
                beams[i].append(Hypothesis(moved, score))
        active = [i for i in active if not system.is_final(beams[i][0].state)]
    return beams


@pytest.mark.parametrize("beam", [1, 4])
def test_beam_search_over_rows_equals_search_over_states(
    parser: NeuralTransitionParser, telugu: tuple[list[Sentence], list[Sentence]], beam: int
) -> None:
    """Array configurations give the very k-best lists (trees and log-probabilities)."""
    dev = telugu[1][:80]
    scorer, offsets = parser._scorer(dev)
    lengths = [len(s) for s in dev]
    by_rows = beam_search(scorer, parser.space_, lengths, offsets, beam=beam)
    by_states = _beam_search_by_state(scorer, parser.space_, lengths, offsets, beam)
    for rows, states in zip(by_rows, by_states, strict=True):
        assert [h.log_prob for h in rows] == [h.log_prob for h in states]
        for a, b in zip(rows, states, strict=True):
            assert np.array_equal(a.state.heads, b.state.heads)
            assert np.array_equal(a.state.labels, b.state.labels)


def test_configuration_rows_move_like_states() -> None:
    """Random valid walks: validity, stack, buffer and arcs agree with the State moves."""
    rng = np.random.default_rng(5)
    lengths = [1, 2, 5, 9, 14]
    rows = Configurations.start(lengths)
    states = [system.start(n) for n in lengths]
    while not rows.is_final().all():
        top = rows.stack_top()
        valid = rows.valid_moves(top)
        moves, labels = np.zeros(len(states), np.intp), rng.integers(1, 6, len(states))
        for i, state in enumerate(states):
            assert valid[i].tolist() == system.valid_moves(state)
            assert top[i].tolist() == system.stack_top(state)
            assert rows.state(i).stack == state.stack and rows.buffer[i] == state.buffer
            for name in ("heads", "labels", "leftmost", "rightmost"):
                assert getattr(rows, name)[i, : len(state.heads)].tolist() == getattr(state, name).tolist()
            if any(valid[i]):
                moves[i] = rng.choice(np.flatnonzero(valid[i]))
                states[i] = system.advance(state, int(moves[i]), int(labels[i]))
        stepping = np.flatnonzero(valid.any(axis=1))
        moved = rows.take(stepping)
        moved.apply(moves[stepping], labels[stepping])
        for name in ("buffer", "depth", "stack", "heads", "labels", "leftmost", "rightmost"):
            getattr(rows, name)[stepping] = getattr(moved, name)
    assert all(system.is_final(state) for state in states)


def test_a_root_label_also_used_below_the_root_stays_allowed_at_the_root(
    telugu: tuple[list[Sentence], list[Sentence]],
) -> None:
    # A partial tree filled in by the ensemble can attach a word to ROOT with a label the
    # sentence also uses lower down; the label must stay allowed on the root arc (a buffered
    # ``mask[ids] |= ...`` kept only the last occurrence, and training stopped with "an oracle
    # action is not valid" in a nine-member partial-annotation simulation on Tamil).
    train, _ = telugu
    sentence = next(s for s in train if len(s) >= 4 and any(
        s.deprels[d] == s.deprels[e] and s.heads[d] != 0 for d in range(1, len(s) + 1)
        for e in range(d + 1, len(s) + 1)))
    counts = Counter(sentence.deprels[1:])
    label = next(name for name, count in counts.items() if count > 1)
    root = int(np.flatnonzero(sentence.heads == 0)[0])
    deprels = list(sentence.deprels)
    deprels[root] = label
    relabelled = replace(sentence, deprels=deprels)
    model = NeuralTransitionParser(max_epochs=1, random_state=0).fit([relabelled, *train[:30]])
    assert model.space_.root_labels[model.labels_.index(label) + 1]
    assert is_tree(model.predict([relabelled])[0].heads)
