"""Tests of the joint neural tagger-parser member (parsing.biaffine) on short UD_Afrikaans sentences:
lemma scripts, tensor shapes, trees, forced arcs, joint tags, determinism, model files without
pickle, and that it learns (a tiny network overfits its training sentences)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.batching import IGNORE, build_vocabularies, encode  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.network import JointNetwork, NetworkConfig  # noqa: E402
from parsing.biaffine.vocab import Vocabulary, apply_script, lemma_script  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.trees import is_tree  # noqa: E402
from parsing.types import ROOT, Sentence  # noqa: E402
from tests.parsing.biaffine_data import (  # noqa: E402
    AFRIKAANS,
    TINY,
    assert_anneals,
    assert_keeps_forced_arcs,
    assert_seeded,
    saved_without_pickle,
)
from tests.parsing.conftest import UD_ROOT  # noqa: E402

TELUGU = UD_ROOT / "UD_Telugu-MTG" / "te_mtg-ud-train.conllu"


def _load(path: Path, count: int) -> list[Sentence]:
    if not path.is_file():
        pytest.skip(f"{path.parent.name} not found under {UD_ROOT} (../shared/ud beside the repo)")
    return load_sentences(path)[:count]


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """The first 60 training sentences of UD_Afrikaans-AfriBooms with at most 9 words (about 8 each)."""
    return [s for s in _load(AFRIKAANS, 1500) if len(s) <= 9][:60]


@pytest.fixture(scope="module")
def parser(sentences: list[Sentence]) -> BiaffineParser:
    """A tiny network trained to overfit 40 sentences (they are also its dev set)."""
    parser = BiaffineParser(**TINY, max_epochs=40, patience=40, random_state=3)
    return parser.fit(sentences[:40], sentences[:40])


def test_lemma_scripts_round_trip_on_training_words() -> None:
    words = [(f, lemma) for path, count in ((TELUGU, 2000), (AFRIKAANS, 300))
             for s in _load(path, count) for f, lemma in zip(s.forms[1:], s.lemmas[1:], strict=True)]
    assert len(words) > 10_000
    assert all(apply_script(form, lemma_script(form, lemma)) == lemma for form, lemma in words)
    rules = {lemma_script(f, lemma) for f, lemma in words}
    assert sum(not rule.startswith("=") for rule in rules) > len(rules) / 2  # mostly rules, not whole lemmas


def test_a_lemma_script_carries_over_to_unseen_words_with_case() -> None:
    assert apply_script("Talked", lemma_script("walked", "walk")) == "talk"
    assert apply_script("UNHAPPY", lemma_script("Unhappy", "Happy")) == "Happy"
    assert apply_script("went", lemma_script("went", "go")) == "go"
    assert apply_script("a", lemma_script("walked", "walk")) == "a"  # the rule cuts more than the word has
    assert apply_script("a", lemma_script("cd", "d")) == "a"  # it would leave nothing: never an empty lemma
    assert apply_script("ab", lemma_script("cd", "d")) == "b"


def test_vocabulary_order_and_unknowns() -> None:
    vocabulary = Vocabulary.build(["b", "a", "b", "c"], min_count=1)
    assert vocabulary.items == ["<pad>", "<unk>", "b", "a", "c"]
    assert vocabulary.ids(["c", "zzz"]) == [4, 1]
    with pytest.raises(ValueError, match="padding"):
        Vocabulary(["a"])


def test_batch_and_network_shapes(sentences: list[Sentence]) -> None:
    vocabularies = build_vocabularies(sentences)
    group = sentences[:5]
    batch = encode(group, vocabularies)
    width = max(len(s) for s in group) + 1
    assert batch.words.shape == (5, width)
    assert batch.lengths.tolist() == [len(s) + 1 for s in group]
    assert batch.form_ids.shape == (5, width) and batch.chars.shape[0] == batch.char_lengths.shape[0]
    assert (batch.targets["heads"][:, 0] == IGNORE).all()
    assert batch.mask.sum().item() == sum(len(s) for s in group)
    network = JointNetwork(NetworkConfig(**{k: len(v) for k, v in vocabularies.items()}, hidden=16, arc_dim=8,
                                         label_dim=8))
    network.eval()
    states, chars = network.encode(batch)
    assert states.shape == (5, width, 32) and chars.shape == (5, width, 100)
    arcs = network.arc_scores(states, batch.lengths)
    assert arcs.shape == (5, width, width)
    shortest = int(np.argmin([len(s) for s in group]))
    n = len(group[shortest])
    assert torch.isinf(arcs[shortest, :, n + 1:]).all() and torch.isinf(torch.diagonal(arcs[shortest])).all()
    labels = network.label_scores(states, batch.targets["heads"])
    assert labels.shape == (5, width, len(vocabularies["deprels"]))
    logits = network.tag_logits(states, chars)
    assert {name: tuple(x.shape) for name, x in logits.items()} == {
        name: (5, width, len(vocabularies[name])) for name in ("upos", "xpos", "feats", "lemmas")}


def test_it_learns_its_training_sentences(parser: BiaffineParser, sentences: list[Sentence]) -> None:
    train = sentences[:40]
    parses = parser.predict(train)
    scores = evaluate(train, parses)
    assert scores.las.f1 > 0.9
    words = [(p.upos[d], s.upos[d], p.extras["lemmas"][d], s.lemmas[d])  # type: ignore[index]
             for p, s in zip(parses, train, strict=True) for d in range(1, len(s) + 1)]
    assert np.mean([got == gold for got, gold, _, _ in words]) > 0.9
    assert np.mean([got == gold for _, _, got, gold in words if gold != "_"]) > 0.9
    assert parser.history_["best_epoch"] >= 1


def test_outputs_are_trees_with_joint_tags(parser: BiaffineParser, sentences: list[Sentence]) -> None:
    held_out = sentences[40:]
    parses = parser.predict(held_out)
    vocabularies = parser.vocabularies_
    for parse, sentence in zip(parses, held_out, strict=True):
        size = len(sentence) + 1
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads[1:] == 0) == 1
        assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
        assert ((parse.arc_scores[1:] > 0) & (parse.arc_scores[1:] <= 1)).all()
        assert parse.upos == parse.extras["upos"] and parse.extras["own_tags"] is True
        for column in ("upos", "xpos", "feats", "lemmas"):
            values = parse.extras[column]
            assert isinstance(values, list) and len(values) == size and values[0] == ROOT
        for column in ("upos", "xpos", "feats"):
            assert set(parse.extras[column][1:]) <= set(vocabularies[column][2:])  # type: ignore[index]
        assert set(parse.deprels[1:]) <= set(vocabularies["deprels"][2:])
        for column in ("upos_p", "label_p"):  # the probabilities of its UPOS and of its label at its head
            sure = np.asarray(parse.extras[column])
            assert sure.shape == (size,) and sure[0] == 1.0 and ((sure[1:] > 0) & (sure[1:] <= 1)).all()
        top = parse.extras["head_top"]  # each word's most probable heads before decoding, best first
        assert isinstance(top, list) and len(top) == size and top[0] == []
        for d in range(1, size):
            probabilities = [p for _, p in top[d]]
            assert len(top[d]) == min(3, size - 1) and probabilities == sorted(probabilities, reverse=True)
            assert d not in [h for h, _ in top[d]] or size == 2
            for h, p in top[d]:  # the same distribution as the tree's arc probabilities
                if h == parse.heads[d]:
                    assert p == pytest.approx(parse.arc_scores[d], abs=1e-5)
    labels = np.concatenate([np.asarray(p.extras["label_p"])[1:] for p in parses])
    right = np.concatenate([[a == b for a, b in zip(p.deprels[1:], s.deprels[1:], strict=True)]
                            for p, s in zip(parses, held_out, strict=True)])
    assert labels[right].mean() > labels[~right].mean()  # a probability, not a constant


def test_root_labels_only_the_word_attached_to_root(sentences: list[Sentence]) -> None:
    """UD's rule, kept even by a network trained for one epoch (it labels most words alike)."""
    raw = BiaffineParser(**TINY, max_epochs=1, random_state=0).fit(sentences[:40], sentences[:40])
    for parse in raw.predict(sentences[40:]):
        for word in range(1, len(parse.heads)):
            assert (parse.deprels[word] == "root") == (parse.heads[word] == 0), (word, parse.deprels)


def test_a_sentence_parses_the_same_alone_as_in_a_batch(parser: BiaffineParser,
                                                         sentences: list[Sentence]) -> None:
    together = parser.predict(sentences[40:])
    for sentence, parse in zip(sentences[40:], together, strict=True):
        alone = parser.predict([sentence])[0]
        assert alone.heads.tolist() == parse.heads.tolist() and alone.deprels == parse.deprels
        assert alone.extras["lemmas"] == parse.extras["lemmas"] and alone.upos == parse.upos
        np.testing.assert_allclose(alone.arc_scores, parse.arc_scores, rtol=1e-5)  # type: ignore[arg-type]


def test_forced_arcs_and_labels_are_always_kept(parser: BiaffineParser, sentences: list[Sentence]) -> None:
    assert_keeps_forced_arcs(parser, sentences[40:], "dep")


def test_model_file_is_npz_without_pickle_and_round_trips(parser: BiaffineParser, sentences: list[Sentence],
                                                          tmp_path: Path) -> None:
    loaded = saved_without_pickle(parser, tmp_path / "biaffine.model")
    before, after = parser.predict(sentences[40:]), loaded.predict(sentences[40:])
    for first, second in zip(before, after, strict=True):
        assert first.heads.tolist() == second.heads.tolist() and first.deprels == second.deprels
        assert first.extras == second.extras
        np.testing.assert_array_equal(first.arc_scores, second.arc_scores)  # type: ignore[arg-type]


def test_training_is_deterministic_with_a_seed(sentences: list[Sentence]) -> None:
    assert_seeded(BiaffineParser, {**TINY, "max_epochs": 2, "patience": 2}, sentences[:20], sentences[20:30])


def test_without_dev_a_tenth_is_held_out_and_gold_tags_are_read(sentences: list[Sentence]) -> None:
    parser = BiaffineParser(**{**TINY, "max_epochs": 1}, tag_inputs=True).fit(sentences[:30])
    assert len(parser.history_["dev_las"]) == 1
    assert any(key.startswith("tag_embeddings.") for key in parser.weights_)
    parse = parser.predict(sentences[30:31])[0]
    assert parse.upos is None and parse.extras["own_tags"] is False and len(parse.extras["upos"]) > 1  # type: ignore[arg-type]


def test_an_unfitted_parser_says_so() -> None:
    with pytest.raises(ValueError, match="not fitted"):
        BiaffineParser().predict([Sentence.from_words(["a"])])



def test_annealing_continues_from_the_best_epoch_at_a_tenth_of_the_rate(
        sentences: list[Sentence], monkeypatch: pytest.MonkeyPatch) -> None:
    assert_anneals(BiaffineParser, TINY, sentences[:20], sentences[20:30], monkeypatch)


def test_annealing_is_skipped_when_the_time_is_up(sentences: list[Sentence]) -> None:
    timed_out = BiaffineParser(**{**TINY, "max_epochs": 3}, max_seconds=0.0, anneal=2).fit(sentences[:20],
                                                                                             sentences[20:30])
    assert timed_out.history_["stopped"] == "max_seconds" and timed_out.history_["annealed_after"] == 0
    assert len(timed_out.history_["dev_las"]) == 1


def test_no_word_is_tagged_as_root(parser: BiaffineParser, sentences: list[Sentence]) -> None:
    """ROOT's own string is in the tag vocabularies (position 0 needs an id) but is never a word's
    tag, even where the network scores it highest (a barely trained network did)."""
    import copy

    pushed = copy.deepcopy(parser)
    for column in ("upos", "xpos", "feats"):
        pushed.weights_[f"classifiers.{column}.bias"][parser.vocabularies_[column].index(ROOT)] += 1e3
    del pushed.network_cache  # rebuilt from the pushed weights
    for parse, before in zip(pushed.predict(sentences[40:]), parser.predict(sentences[40:]), strict=True):
        for column in ("upos", "xpos", "feats"):
            assert ROOT not in parse.extras[column][1:], column  # type: ignore[operator, index]
            assert parse.extras[column] == before.extras[column]  # the best other tag, as before


def test_the_morphology_weight_scales_the_xpos_feats_and_lemma_losses(sentences: list[Sentence]) -> None:
    vocabularies = build_vocabularies(sentences)
    network = JointNetwork(NetworkConfig(**{k: len(v) for k, v in vocabularies.items()}, hidden=16, arc_dim=8,
                                         label_dim=8, dropout=0.0, word_dropout=0.0))
    batch = encode(sentences[:6], vocabularies)

    def gradients(weight: float) -> dict[str, float]:
        network.zero_grad()
        network.loss(batch, weight).backward()
        return {name: float(network.classifiers[name].weight.grad.abs().sum())
                for name in ("upos", "xpos", "feats", "lemmas")}

    full, none, half = gradients(1.0), gradients(0.0), gradients(0.5)
    assert all(value > 0 for value in full.values())
    assert none["upos"] == pytest.approx(full["upos"])
    assert none["xpos"] == none["feats"] == none["lemmas"] == 0
    assert half["lemmas"] == pytest.approx(full["lemmas"] / 2, rel=1e-5)
    with pytest.raises(ValueError, match="morphology_weight is a loss weight"):
        BiaffineParser(**TINY, morphology_weight=-1.0).fit(sentences[:4])


def test_label_smoothing_spreads_the_class_targets_but_never_the_heads(sentences: list[Sentence]) -> None:
    vocabularies = build_vocabularies(sentences)
    network = JointNetwork(NetworkConfig(**{k: len(v) for k, v in vocabularies.items()}, hidden=16, arc_dim=8,
                                         label_dim=8, dropout=0.0, word_dropout=0.0))
    batch = encode(sentences[:6], vocabularies)

    def gradients(smoothing: float) -> tuple[float, dict[str, torch.Tensor]]:
        network.zero_grad()
        loss = network.loss(batch, label_smoothing=smoothing)
        loss.backward()
        grads = {name: p.grad.clone() for name, p in network.named_parameters() if p.grad is not None}
        return float(loss.detach()), grads

    (plain, before), (smoothed, after) = gradients(0.0), gradients(0.1)
    assert np.isfinite(smoothed) and smoothed != plain
    assert torch.equal(after["arc_weight"], before["arc_weight"])  # the head loss alone reaches it
    for name in ("classifiers.upos.weight", "classifiers.lemmas.weight", "label_weight"):
        assert not torch.allclose(after[name], before[name]), name
    with pytest.raises(ValueError, match=r"label_smoothing is a share of each target's mass in \[0, 1\)"):
        BiaffineParser(**TINY, label_smoothing=1.0).fit(sentences[:4])


def test_a_fit_trains_with_its_label_smoothing(sentences: list[Sentence]) -> None:
    from parsing.biaffine.training import member_settings

    assert BiaffineParser().label_smoothing == 0.03
    smoothed = BiaffineParser(**TINY, label_smoothing=0.1)
    assert member_settings(smoothed.get_params(), warm=False).label_smoothing == 0.1
    plain = BiaffineParser(**TINY, label_smoothing=0.0).fit(sentences[:30], dev=sentences[30:40])
    smoothed.fit(sentences[:30], dev=sentences[30:40])
    assert BiaffineParser.label_smoothing == 0.0  # models saved before the setting trained without it
    assert any(not np.array_equal(smoothed.weights_[name], plain.weights_[name]) for name in plain.weights_)


def test_batches_by_words_cover_every_sentence_once_within_the_budget(sentences: list[Sentence]) -> None:
    from parsing.biaffine.training import batches

    groups = list(batches(sentences, 16, np.random.default_rng(0), words=30))
    assert sorted(id(s) for group in groups for s in group) == sorted(id(s) for s in sentences)
    assert all(sum(len(s) for s in group) <= 30 or len(group) == 1 for group in groups)
    assert len(groups) >= sum(len(s) for s in sentences) // 30  # not 16 sentences each: about 4
    assert max(len(group) for group in groups) < 16


def test_batch_words_sets_the_training_steps(sentences: list[Sentence],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from parsing.biaffine.training import batches

    steps: list[int] = []
    original = JointNetwork.loss
    monkeypatch.setattr(JointNetwork, "loss", lambda self, batch, *weights: (
        steps.append(int(batch.lengths.shape[0])), original(self, batch, *weights))[1])
    BiaffineParser(**{**TINY, "max_epochs": 1}, batch_words=30).fit(sentences[:20], sentences[20:30])
    assert steps == [len(group) for group in batches(sentences[:20], 16, np.random.default_rng(0), words=30)]
    steps.clear()
    BiaffineParser(**{**TINY, "max_epochs": 1}).fit(sentences[:20], sentences[20:30])
    assert sorted(steps) == [4, 8, 8]  # TINY: batch_size 8
    with pytest.raises(ValueError, match="batch_words is a number of words"):
        BiaffineParser(**TINY, batch_words=-1).fit(sentences[:4])
