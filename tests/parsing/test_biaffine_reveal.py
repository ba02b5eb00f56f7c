"""Tests of the biaffine member that reads the annotator's arcs (``reveal``, issue #33): off, it
trains exactly as before; on, a given arc is an input that changes the other words' arc scores,
forced arcs stay in every tree, the setting survives the model file, old files still load, and
a re-parse asks such a member again even where its free parse already held the human arcs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.batching import IGNORE, REVEAL_BUCKETS, build_vocabularies, encode, offset_bucket  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.network import crossings  # noqa: E402
from parsing.biaffine.training import reveal_arcs, top_down_prefix  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.constraints import Constraints  # noqa: E402
from parsing.ensemble.reparse import reparse_under_constraints  # noqa: E402
from parsing.ensemble.voting import ArcVoting  # noqa: E402
from parsing.trees import is_tree  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.conftest import UD_ROOT  # noqa: E402

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"
TINY = {"word_dim": 16, "char_dim": 8, "char_hidden": 8, "hidden": 32, "layers": 1, "arc_dim": 32,
        "label_dim": 16, "dropout": 0.1, "word_dropout": 0.1, "batch_size": 8, "learning_rate": 5e-3,
        "reveal_dim": 8}


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """Short UD_Afrikaans-AfriBooms training sentences (at most 9 words)."""
    if not AFRIKAANS.is_file():
        pytest.skip(f"{AFRIKAANS.parent.name} not found under {UD_ROOT} (../shared/ud beside the repo)")
    return [s for s in load_sentences(AFRIKAANS)[:1500] if len(s) <= 9 and len(s) >= 4][:50]


@pytest.fixture(scope="module")
def revealing(sentences: list[Sentence]) -> BiaffineParser:
    """A tiny network trained with up to 60% of the gold arcs revealed."""
    return BiaffineParser(**TINY, reveal=0.6, max_epochs=6, patience=6, random_state=2).fit(
        sentences[:40], sentences[40:])


def _log_probs(parser: BiaffineParser, sentence: Sentence, given: Constraints | None) -> np.ndarray:
    network, vocabularies = parser._network()
    with torch.inference_mode():
        batch = encode([sentence], vocabularies, given=[given] if given is not None else None)
        states, _ = network.encode(batch)
        return torch.log_softmax(network.arc_scores(states, batch.lengths), dim=-1)[0].numpy()


def test_offset_buckets_are_distinct_and_in_range() -> None:
    ids = [offset_bucket(d, h) for d in range(1, 30) for h in range(0, 30) if h != d]
    assert min(ids) == 1 and max(ids) == REVEAL_BUCKETS - 1
    assert offset_bucket(5, 4) != offset_bucket(5, 6) != offset_bucket(5, 0)
    assert offset_bucket(1, 40) == offset_bucket(1, 60)  # beyond the reach: one bucket


def test_off_the_network_has_no_reveal_inputs_and_trains_as_by_default(sentences: list[Sentence]) -> None:
    settings = {**TINY, "max_epochs": 1, "patience": 1}
    default = BiaffineParser(**settings, random_state=4).fit(sentences[:16], sentences[40:])
    off = BiaffineParser(**settings, reveal=0.0, random_state=4).fit(sentences[:16], sentences[40:])
    on = BiaffineParser(**settings, reveal=0.5, random_state=4).fit(sentences[:16], sentences[40:])
    assert default.weights_.keys() == off.weights_.keys()
    assert all(np.array_equal(default.weights_[k], off.weights_[k]) for k in default.weights_)
    assert not any(key.startswith("given_") for key in off.weights_) and not off.reads_constraints
    assert {"given_heads.weight", "given_labels.weight"} <= on.weights_.keys() and on.reads_constraints
    # without the reveal inputs, given arcs change nothing
    sentence = sentences[45]
    np.testing.assert_array_equal(_log_probs(off, sentence, None),
                                  _log_probs(off, sentence, Constraints({1: int(sentence.heads[1])})))


def test_revealed_arcs_are_drawn_per_sentence_and_left_out_of_the_loss(sentences: list[Sentence]) -> None:
    rng = np.random.default_rng(0)
    given = [arcs for _ in range(20) for arcs in reveal_arcs(sentences[:40], 0.5, rng)]
    rates = [len(arcs) / len(s) for arcs, s in zip(given, sentences[:40] * 20, strict=True)]
    assert 0.15 < float(np.mean(rates)) < 0.35 and max(rates) <= 1.0  # r ~ U(0, 0.5): a quarter on average
    assert any(len(arcs) == 0 for arcs in given)
    first = given[0]
    assert all(first.heads[d] == sentences[0].heads[d] and first.labels[d] == sentences[0].deprels[d]
               for d in first.heads)
    vocabularies = build_vocabularies(sentences)
    arcs = Constraints({1: int(sentences[0].heads[1])}, {1: sentences[0].deprels[1]})
    batch = encode(sentences[:1], vocabularies, given=[arcs], hide_given=True)
    assert batch.targets["heads"][0, 1] == IGNORE and batch.targets["deprels"][0, 1] == IGNORE
    assert batch.targets["heads"][0, 2] == int(sentences[0].heads[2])
    assert batch.given_heads is not None and batch.given_heads[0].tolist()[:3] == [
        0, offset_bucket(1, int(sentences[0].heads[1])), 0]
    kept = encode(sentences[:1], vocabularies, given=[arcs])
    assert kept.targets["heads"][0, 1] == int(sentences[0].heads[1])


def test_a_top_down_order_reveals_the_skeleton_first(sentences: list[Sentence]) -> None:
    """``reveal_order="top-down"``: the given arcs are the first words of the gold tree by depth,
    the arcs an annotator who reads it top down has confirmed or fixed; ``"mixed"`` gives both."""
    chosen = sentences[:40]
    rng = np.random.default_rng(4)
    given = [arcs for _ in range(5) for arcs in reveal_arcs(chosen, 0.8, rng, order="top-down")]
    assert any(arcs.heads for arcs in given)
    for arcs, sentence in zip(given, chosen * 5, strict=True):
        assert set(arcs.heads) == top_down_prefix(sentence.heads, len(arcs.heads))
        assert all(arcs.heads[d] == sentence.heads[d] and arcs.labels[d] == sentence.deprels[d]
                   for d in arcs.heads)
        if arcs.heads:  # the root word is read first
            assert sentence.heads.tolist().index(0) in arcs.heads
    mixed = [arcs for _ in range(5) for arcs in reveal_arcs(chosen, 0.8, rng, order="mixed")]
    prefixes = [set(arcs.heads) == top_down_prefix(s.heads, len(arcs.heads))
                for arcs, s in zip(mixed, chosen * 5, strict=True)]
    assert any(prefixes) and not all(prefixes)
    rng = np.random.default_rng(4)  # the default ("random") draws one stream as before the setting existed
    expected = []
    for sentence in chosen:
        rate, draws = rng.uniform(0.0, 0.8), rng.random(len(sentence))
        expected.append({d for d in range(1, len(sentence) + 1) if draws[d - 1] < rate})
    assert [set(a.heads) for a in reveal_arcs(chosen, 0.8, np.random.default_rng(4))] == expected
    with pytest.raises(ValueError, match="reveal_order is one of random, top-down, mixed"):
        BiaffineParser(**TINY, reveal=0.5, reveal_order="bottom-up").fit(sentences[:4])
    parser = BiaffineParser(**{**TINY, "max_epochs": 1}, reveal=0.5, reveal_order="top-down",
                            random_state=1).fit(sentences[:16], sentences[40:])
    assert parser.reads_constraints


def test_the_networks_own_errors_can_be_revealed(sentences: list[Sentence]) -> None:
    rng = np.random.default_rng(3)
    wrong = [[1, 2] if len(s) >= 2 else [] for s in sentences[:40]]
    given = reveal_arcs(sentences[:40], 0.0, rng, wrong=wrong, reveal_errors=1.0)
    assert all(set(arcs.heads) <= {1, 2} for arcs in given) and any(arcs.heads for arcs in given)
    parser = BiaffineParser(**{**TINY, "max_epochs": 1}, reveal_errors=0.8, random_state=1).fit(
        sentences[:16], sentences[40:])
    assert parser.reads_constraints and parser.config_["reveal_dim"] == 8


def test_crossings_count_the_given_arcs_an_arc_crosses() -> None:
    given = torch.tensor([[-1, -1, 5, -1, -1, -1, -1]])  # 2 -> 5
    count = crossings(given)[0]
    assert [int(count[d, h]) for d, h in ((3, 6), (6, 3), (1, 3), (4, 0))] == [1, 1, 1, 1]
    assert [int(count[d, h]) for d, h in ((3, 4), (1, 6), (1, 2), (2, 5), (5, 2))] == [0, 0, 0, 0, 0]
    two = torch.tensor([[-1, 3, -1, -1, -1, 7, -1, -1]])  # 1 -> 3 and 5 -> 7: 2 -> 6 crosses both
    assert int(crossings(two)[0, 2, 6]) == 2 and int(crossings(two)[0, 4, 6]) == 1


def test_with_reveal_cross_an_arc_across_a_given_one_is_scored_apart(sentences: list[Sentence]) -> None:
    parser = BiaffineParser(**{**TINY, "max_epochs": 3}, reveal=0.8, reveal_cross=True, random_state=1).fit(
        sentences[:40], sentences[40:])
    bias = parser.weights_["cross_bias"]
    assert bias.shape == (4,) and bias[1] < bias[0]  # gold arcs seldom cross given ones: learned
    sentence = next(s for s in sentences[40:] if len(s) >= 6)
    far = {d: h for d, h in enumerate(sentence.heads) if d > 0 and abs(int(h) - d) >= 2}
    if not far:
        pytest.skip("no long arc in the chosen sentence")
    d, h = next(iter(far.items()))
    free = _log_probs(parser, sentence, None)
    given = _log_probs(parser, sentence, Constraints({d: int(h)}))
    assert not np.allclose(free, given)


def test_a_revealed_arc_changes_the_other_words_scores(revealing: BiaffineParser,
                                                      sentences: list[Sentence]) -> None:
    moved = 0
    for sentence in sentences[40:]:
        free = _log_probs(revealing, sentence, None)
        given = _log_probs(revealing, sentence, Constraints({1: int(sentence.heads[1])},
                                                            {1: sentence.deprels[1]}))
        others = slice(2, len(sentence) + 1)
        finite = np.isfinite(free[others])
        moved += int(np.abs(free[others][finite] - given[others][finite]).max() > 1e-3)
    assert moved == len(sentences[40:])


def test_forced_arcs_are_inputs_and_always_kept(revealing: BiaffineParser, sentences: list[Sentence]) -> None:
    rng = np.random.default_rng(1)
    chosen = sentences[40:]
    constraints = []
    for sentence in chosen:  # arcs of a random tree over the same words
        order = rng.permutation(np.arange(1, len(sentence) + 1))
        heads = np.zeros(len(sentence) + 1, dtype=int)
        for i in range(1, len(order)):
            heads[order[i]] = order[rng.integers(0, i)]
        words = rng.choice(np.arange(1, len(sentence) + 1), size=3, replace=False)
        constraints.append(Constraints({int(w): int(heads[w]) for w in words}, {int(words[0]): "dep"}))
    parses = revealing.predict_constrained(chosen, constraints)
    for parse, forced in zip(parses, constraints, strict=True):
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads[1:] == 0) == 1
        assert forced.satisfied_by(parse.heads, parse.deprels)
    free = revealing.predict(chosen)  # the arc probabilities of free words are read under the arcs
    assert any(not np.allclose(p.arc_scores[1:], f.arc_scores[1:])
               for p, f in zip(parses, free, strict=True))


def test_the_setting_survives_the_model_file_and_old_files_load(revealing: BiaffineParser,
                                                                sentences: list[Sentence],
                                                                tmp_path: Path) -> None:
    path = tmp_path / "biaffine.model"
    revealing.save(path)
    loaded = BiaffineParser.load(path)
    assert loaded.reveal == 0.6 and loaded.reveal_dim == 8 and loaded.reads_constraints
    forced = [Constraints({1: int(s.heads[1])}, {1: s.deprels[1]}) for s in sentences[40:]]
    for first, second in zip(revealing.predict_constrained(sentences[40:], forced),
                             loaded.predict_constrained(sentences[40:], forced), strict=True):
        assert first.heads.tolist() == second.heads.tolist() and first.deprels == second.deprels
        np.testing.assert_array_equal(first.arc_scores, second.arc_scores)  # type: ignore[arg-type]
    old = tmp_path / "old.model"  # a file written before the setting existed: no reveal keys at all
    plain = BiaffineParser(**{**TINY, "max_epochs": 1}, random_state=1).fit(sentences[:16], sentences[40:])
    plain.save(old)
    with np.load(old, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    header = json.loads(bytes(arrays["header"]).decode("utf-8"))
    for key in ("reveal", "reveal_dim", "reveal_loss"):
        del header["state"][key]
    del header["state"]["config_"]["$dict"]["reveal_dim"]
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    with old.open("wb") as handle:
        np.savez_compressed(handle, **arrays)
    again = BiaffineParser.load(old)
    assert again.reveal == 0.0 and not again.reads_constraints
    assert [p.heads.tolist() for p in again.predict(sentences[40:])] == \
        [p.heads.tolist() for p in plain.predict(sentences[40:])]


def test_a_reparse_asks_a_reading_member_again_where_its_free_parse_held_the_arcs(
        revealing: BiaffineParser, sentences: list[Sentence]) -> None:
    chosen = sentences[40:]
    free = revealing.predict(chosen)
    ensemble = ArcVoting(["biaffine"], weights=[1.0])
    ensemble.weights_ = np.array([1.0])
    combined = [p for p in free]
    constraints = [Constraints({d: int(p.heads[d]) for d in (1, 2)}, {}) for p in free]  # its own arcs
    parses, trees = reparse_under_constraints({"biaffine": revealing}, ensemble, ["biaffine"], chosen,
                                              constraints, ({"biaffine": free}, combined))
    expected = revealing.predict_constrained(chosen, constraints)
    assert [p.heads.tolist() for p in parses["biaffine"]] == [p.heads.tolist() for p in expected]
    assert any(not np.allclose(p.arc_scores[1:], f.arc_scores[1:]) for p, f in zip(parses["biaffine"], free,
                                                                                   strict=True))
    assert all(c.satisfied_by(t.heads) for c, t in zip(constraints, trees, strict=True))


def test_a_bad_rate_is_refused(sentences: list[Sentence]) -> None:
    with pytest.raises(ValueError, match="reveal"):
        BiaffineParser(**TINY, reveal=1.5).fit(sentences[:4])
