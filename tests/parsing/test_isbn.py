"""Tests of the ISBN member (parsing.isbn): gradients against finite differences, the oracle's
derivations, the relation pointers, valid trees from the beam, learning on a real treebank
slice, constraints, save/load and registration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints
from parsing.isbn import ISBNParser, network, system
from parsing.isbn.encoding import ISBNEncoder
from parsing.isbn.oracle import derive, feature_ids, replay
from parsing.isbn.structure import N_RELATIONS
from parsing.isbn.training import make_batch
from parsing.members import MEMBERS, build_member
from parsing.scorer.metrics import evaluate
from parsing.trees import is_tree
from parsing.types import Parse, Sentence
from tests.parsing.conftest import UD_ROOT

TELUGU = UD_ROOT / "UD_Telugu-MTG" / "te_mtg-ud-train.conllu"


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """The first 200 training sentences of UD_Telugu-MTG."""
    if not TELUGU.is_file():
        pytest.skip(f"UD_Telugu-MTG not found under {UD_ROOT} (../shared/ud beside the repo)")
    return load_sentences(TELUGU)[:200]


@pytest.fixture(scope="module")
def parser(sentences: list[Sentence]) -> ISBNParser:
    """Trained on 100 sentences; the next 40 pick the epoch."""
    return ISBNParser(hidden=48, beam_size=4, max_epochs=12, patience=3, min_count=1,
                      word_dropout=0.25).fit(sentences[:100], sentences[100:140])


def _labelled(sentence: Sentence) -> tuple[np.ndarray, list[int], list[str]]:
    heads, labels = system.projectivize(sentence.heads, sentence.deprels)
    names = sorted(set(labels[1:]))
    return heads, [0, *[names.index(x) for x in labels[1:]]], names


def test_oracle_derivation_replays_to_the_projectivised_gold_tree(sentences: list[Sentence]) -> None:
    for sentence in sentences:
        heads, label_ids, _ = _labelled(sentence)
        derivation = derive(heads, label_ids)
        got_heads, got_labels = replay(derivation.moves.tolist(), derivation.labels.tolist(), len(sentence))
        assert got_heads.tolist() == heads.tolist()
        assert got_labels[1:].tolist() == label_ids[1:]
        assert derivation.valid[np.arange(len(derivation)), derivation.moves].all()


def test_relations_point_to_earlier_steps_and_link_consecutive_steps(sentences: list[Sentence]) -> None:
    for sentence in sentences[:50]:
        heads, label_ids, _ = _labelled(sentence)
        pointers = derive(heads, label_ids).pointers
        steps = np.arange(len(pointers))[:, None]
        assert pointers.shape[1] == N_RELATIONS
        assert ((pointers < steps) & (pointers >= -1)).all()
        assert all((pointers[t] == t - 1).any() for t in range(1, len(pointers)))


def test_gradients_match_finite_differences(sentences: list[Sentence]) -> None:
    picked = sentences[:3]
    trees = [_labelled(s) for s in picked]
    names = sorted({name for _, _, ns in trees for name in ns})
    n_labels = len(names)
    encoder = ISBNEncoder.build(picked, n_labels, min_count=1, max_feats=2)
    table, offsets = encoder.tokens(picked)
    derivations, ids = [], []
    for sentence, offset in zip(picked, offsets.tolist(), strict=True):
        heads, labels = system.projectivize(sentence.heads, sentence.deprels)
        derivation = derive(heads, [0, *[names.index(x) for x in labels[1:]]])
        derivations.append(derivation)
        ids.append(feature_ids(encoder, table, offset, derivation))
    everything = np.ones(n_labels, dtype=bool)
    batch = make_batch(derivations, ids, encoder.zero_row(), everything, everything)
    rng = np.random.default_rng(0)
    params = network.init_params(encoder.n_rows(), 6, n_labels, rng, dtype=np.float64)
    for name in params:  # larger weights: a stronger test of the recurrent part
        params[name] = params[name] * 3.0
    params["E"][-1] = 0.0
    _, grads = network.loss_and_grads(params, batch, l2=1e-3)
    used = np.unique(batch.ids)
    for name, values in params.items():
        flat = values.reshape(-1)
        candidates = (used[:-1, None] * values.shape[1] + np.arange(values.shape[1])).reshape(-1) \
            if name == "E" else np.arange(flat.size)
        for index in rng.choice(candidates, size=min(6, len(candidates)), replace=False).tolist():
            saved = flat[index]
            flat[index] = saved + 1e-5
            up = network.loss_and_grads(params, batch, l2=1e-3)[0]
            flat[index] = saved - 1e-5
            down = network.loss_and_grads(params, batch, l2=1e-3)[0]
            flat[index] = saved
            numeric = (up - down) / 2e-5
            assert grads[name].reshape(-1)[index] == pytest.approx(numeric, rel=1e-4, abs=1e-7), name


def test_predict_returns_valid_trees_of_the_right_length(parser: ISBNParser,
                                                         sentences: list[Sentence]) -> None:
    odd = Sentence.from_words(["zzz", "qqq", "xxx"], upos=["NOUN", "VERB", "ADJ"])
    held_out = [*sentences[140:170], odd, Sentence.from_words(["a"], upos=["X"])]
    for beam in (1, 4):
        parser.set_params(beam_size=beam)
        for sentence, parse in zip(held_out, parser.predict(held_out), strict=True):
            assert len(parse.heads) == len(sentence) + 1
            assert is_tree(parse.heads)
            assert np.count_nonzero(parse.heads[1:] == 0) == 1
            assert len(parse.deprels) == len(parse.heads)
            assert parse.arc_scores is not None
            assert ((parse.arc_scores[1:] >= 0) & (parse.arc_scores[1:] <= 1.0 + 1e-9)).all()
            assert parse.extras["kbest"][0][0].tolist() == parse.heads.tolist()
    parser.set_params(beam_size=4)


def test_learning_beats_a_trivial_baseline(parser: ISBNParser, sentences: list[Sentence]) -> None:
    held_out = sentences[140:200]
    frequent = max(set(d for s in sentences[:100] for d in s.deprels[1:]),
                   key=lambda d: sum(s.deprels[1:].count(d) for s in sentences[:100]))
    baseline = []
    for sentence in held_out:  # Telugu is head-final: each word's head is the next word
        n = len(sentence)
        heads = np.array([-1, *range(2, n + 1), 0])
        baseline.append(Parse(heads, ["", *[frequent] * (n - 1), "root"]))
    ours = evaluate(held_out, parser.predict(held_out))
    trivial = evaluate(held_out, baseline)
    assert ours.las.f1 > trivial.las.f1 + 0.1
    assert ours.uas.f1 > trivial.uas.f1


def test_constraints_are_always_in_the_output(parser: ISBNParser, sentences: list[Sentence]) -> None:
    rng = np.random.default_rng(1)
    held_out = sentences[140:170]
    constraints = []
    for sentence in held_out:
        n = len(sentence)
        words = rng.choice(np.arange(1, n + 1), size=max(1, n // 3), replace=False).tolist()
        heads = {w: int(sentence.heads[w]) for w in words}
        labels = {w: sentence.deprels[w] for w in words[:1]}
        constraints.append(Constraints(heads, labels))
    for sentence, forced, parse in zip(held_out, constraints,
                                       parser.predict_constrained(held_out, constraints), strict=True):
        assert is_tree(parse.heads) and len(parse.heads) == len(sentence) + 1
        assert forced.satisfied_by(parse.heads)
        assert all(parse.deprels[d] == label for d, label in forced.labels.items())


def test_save_load_round_trip_gives_identical_parses(parser: ISBNParser, sentences: list[Sentence],
                                                     tmp_path: Path) -> None:
    parser.save(tmp_path / "isbn.model")
    loaded = ISBNParser.load(tmp_path / "isbn.model")
    held_out = sentences[170:200]
    for a, b in zip(parser.predict(held_out), loaded.predict(held_out), strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels
        assert np.allclose(a.arc_scores[1:], b.arc_scores[1:])


def test_estimator_contract_and_registration() -> None:
    parser = ISBNParser(hidden=16, beam_size=3)
    assert clone(parser).get_params() == parser.get_params()
    assert isinstance(build_member("isbn"), ISBNParser)
    assert "isbn" not in MEMBERS
    train = [Sentence.from_words(["a", "b"], upos=["X", "Y"], heads=[2, 0], deprels=["dep", "root"])] * 4
    fitted = ISBNParser(hidden=8, max_epochs=2, min_count=1, random_state=3).fit(train)
    again = ISBNParser(hidden=8, max_epochs=2, min_count=1, random_state=3).fit(train)
    assert all(np.array_equal(fitted.params_[k], again.params_[k]) for k in fitted.params_)


def test_doctests() -> None:
    import doctest

    from parsing.isbn import parser as module

    assert doctest.testmod(module).failed == 0


def test_weight_decay_shrinks_every_weight_matrix_and_leaves_the_zero_row_zero(
        sentences: list[Sentence]) -> None:
    """Decoupled weight decay pulls E, J and the output weights towards zero (same seed, same
    batches: only the decay differs), the absent-feature row stays exactly zero, and the
    annealed decay shrinks less than the constant one."""
    settings = {"hidden": 16, "beam_size": 1, "max_epochs": 3, "min_count": 1, "random_state": 0}
    plain = ISBNParser(**settings).fit(sentences[:40])
    decayed = ISBNParser(**settings, weight_decay=30.0).fit(sentences[:40])
    annealed = ISBNParser(**settings, weight_decay=30.0, anneal=0.1).fit(sentences[:40])
    for name in ("E", "J", "Wm", "Wl", "Wr"):
        norms = [float(np.linalg.norm(fitted.params_[name])) for fitted in (decayed, annealed, plain)]
        assert norms[0] < norms[1] < norms[2], (name, norms)
    assert not decayed.params_["E"][-1].any()
