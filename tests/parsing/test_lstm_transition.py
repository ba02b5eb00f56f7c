"""The ``lstm-hybrid`` member (:mod:`parsing.lstm_transition`): arc-hybrid over BiLSTM features
(Kiperwasser & Goldberg 2016), on short real sentences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.lstm_transition.member import LSTMTransitionParser  # noqa: E402
from parsing.lstm_transition.network import SLOTS  # noqa: E402
from parsing.lstm_transition.oracle import oracle_examples  # noqa: E402
from parsing.members import EXTRA_MEMBERS, MEMBERS, build_member  # noqa: E402
from parsing.neural import system  # noqa: E402
from parsing.neural.search import ActionSpace  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.trees import is_tree  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import (  # noqa: E402
    assert_anneals,
    assert_keeps_forced_arcs,
    assert_seeded,
    import_without_torch,
    saved_without_pickle,
    short_sentences,
)

TINY = {"word_dim": 24, "char_dim": 12, "char_hidden": 16, "tag_dim": 8, "hidden": 48, "layers": 1,
        "mlp_dim": 32, "dropout": 0.0, "word_dropout": 0.0, "batch_size": 8, "learning_rate": 5e-3}
"""A network small enough to learn a few dozen sentences in seconds."""


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    return short_sentences("af", 400, 60, longest=12)


@pytest.fixture(scope="module")
def parser(sentences: list[Sentence]) -> LSTMTransitionParser:
    return LSTMTransitionParser(**TINY, max_epochs=25, patience=25).fit(sentences[:40], sentences[:40])


def test_registered_as_a_named_member_that_reads_the_pipelines_tags() -> None:
    assert "lstm-hybrid" in EXTRA_MEMBERS and "lstm-hybrid" not in MEMBERS
    spec = EXTRA_MEMBERS["lstm-hybrid"]
    assert not spec.self_tagging and spec.requires == "torch" and "Kiperwasser" in spec.summary
    assert isinstance(build_member("lstm-hybrid"), LSTMTransitionParser)


def test_the_static_oracle_rebuilds_every_projective_tree(sentences: list[Sentence]) -> None:
    """The training examples are the configurations of the gold derivation: replaying their gold
    actions gives the (lifted) gold tree, and their slots are the stack and buffer words."""
    for sentence in sentences[:20]:
        heads, labels = system.projectivize(sentence.heads, sentence.deprels)
        names = sorted(set(labels[1:]))
        ids = {label: number for number, label in enumerate(names, start=1)}
        space = ActionSpace(np.ones(len(names) + 1, dtype=bool), np.ones(len(names) + 1, dtype=bool))
        rows, valid, gold = oracle_examples(heads, labels, space, ids)
        n = len(sentence)
        assert rows.shape == (2 * n, SLOTS) and gold.shape == (2 * n,)
        assert valid.shape == (2 * n, space.n_actions)
        assert valid[np.arange(2 * n), gold].all()
        state = system.start(n)
        for row, action in zip(rows, gold.tolist(), strict=True):
            top = system.stack_top(state)
            assert [r - 1 for r in row[:3]] == top
            assert row[3] - 1 == (state.buffer if state.buffer <= n else -1)
            move, label = space.decode(action)
            state = system.advance(state, move, label)
        assert state.heads.tolist() == heads.tolist()
        assert [""] + [names[x - 1] for x in state.labels[1:].tolist()] == labels


def test_it_learns_trees_with_kbest_lists(parser: LSTMTransitionParser, sentences: list[Sentence]) -> None:
    train, held = sentences[:40], sentences[40:]
    assert evaluate(train, parser.predict(train)).las.f1 > 0.9  # it fits what it saw
    assert parser.history_["best_epoch"] >= 1 and len(parser.history_["dev_las"]) >= 1
    for parse, sentence in zip(parser.predict(held), held, strict=True):
        assert is_tree(parse.heads) and np.count_nonzero(parse.heads[1:] == 0) == 1
        assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
        assert ((parse.arc_scores[1:] > 0) & (parse.arc_scores[1:] <= 1 + 1e-9)).all()
        kbest = parse.extras["kbest"]
        assert isinstance(kbest, list) and 1 <= len(kbest) <= parser.beam_size
        assert kbest[0][0].tolist() == parse.heads.tolist()
        assert sum(p for _, _, p in kbest) == pytest.approx(1.0)
        assert set(parse.deprels[1:]) <= set(parser.labels_)
        assert len(parse.heads) == len(sentence) + 1


def test_a_beam_of_one_is_the_greedy_parse(parser: LSTMTransitionParser, sentences: list[Sentence]) -> None:
    """The beam search scores with the network the greedy parse (training's dev check) uses, and
    sentences parsed together parse as they do alone (one BiLSTM pass per chunk)."""
    narrow = LSTMTransitionParser(**{**parser.get_params(), "beam_size": 1})
    narrow.__dict__.update({k: v for k, v in vars(parser).items() if k.endswith("_") or k.endswith("_cache")})
    greedy, beam = parser.predict_greedy(sentences[40:]), narrow.predict(sentences[40:])
    assert [g.heads.tolist() for g in greedy] == [b.heads.tolist() for b in beam]
    assert [g.deprels for g in greedy] == [b.deprels for b in beam]
    alone = [parser.predict([s])[0] for s in sentences[40:]]
    assert [a.heads.tolist() for a in alone] == [b.heads.tolist() for b in parser.predict(sentences[40:])]


def test_forced_arcs_and_labels_are_always_kept(parser: LSTMTransitionParser,
                                                sentences: list[Sentence]) -> None:
    assert_keeps_forced_arcs(parser, sentences[40:], parser.labels_[0])


def test_model_file_is_npz_without_pickle_and_round_trips(parser: LSTMTransitionParser,
                                                          sentences: list[Sentence], tmp_path: Path) -> None:
    loaded = saved_without_pickle(parser, tmp_path / "lstm-hybrid.model")
    for first, second in zip(parser.predict(sentences[40:]), loaded.predict(sentences[40:]), strict=True):
        assert first.heads.tolist() == second.heads.tolist() and first.deprels == second.deprels
        np.testing.assert_allclose(first.arc_scores, second.arc_scores)  # type: ignore[arg-type]


def test_training_is_deterministic_with_a_seed(sentences: list[Sentence]) -> None:
    settings = {**TINY, "max_epochs": 2, "patience": 2}
    assert_seeded(LSTMTransitionParser, settings, sentences[:20], sentences[20:30])


def test_it_reads_the_tags_it_is_given(parser: LSTMTransitionParser, sentences: list[Sentence]) -> None:
    """UPOS are inputs (the pipeline's predicted or gold tags): other tags give other trees."""
    held = sentences[:40]
    scrambled = [Sentence(s.forms, s.lemmas, [s.upos[0], *(["PUNCT"] * len(s))], s.xpos, s.feats, s.heads,
                          s.deprels, s.sent_id) for s in held]
    assert evaluate(held, parser.predict(scrambled)).las.f1 < evaluate(held, parser.predict(held)).las.f1


def test_bad_settings_and_data_are_refused_clearly(sentences: list[Sentence]) -> None:
    with pytest.raises(ValueError, match="beam_size"):
        LSTMTransitionParser(**TINY, beam_size=0).fit(sentences[:5])
    with pytest.raises(ValueError, match="single-rooted"):
        LSTMTransitionParser(**TINY).fit([Sentence.from_words(["a", "b"])])
    with pytest.raises(ValueError, match="not fitted"):
        LSTMTransitionParser().predict(sentences[:1])
    with pytest.raises(ValueError, match="batch_words is a number of words"):
        LSTMTransitionParser(**TINY, batch_words=-1).fit(sentences[:5])


def test_batch_words_groups_sentences_of_similar_length_within_the_budget(sentences: list[Sentence]) -> None:
    by_words = LSTMTransitionParser(**TINY, batch_words=30)._updates(sentences, np.random.default_rng(0))
    assert sorted(i for group in by_words for i in group) == list(range(len(sentences)))
    assert all(sum(len(sentences[i]) for i in group) <= 30 or len(group) == 1 for group in by_words)
    by_sentences = LSTMTransitionParser(**TINY)._updates(sentences, np.random.default_rng(0))
    order, size = np.random.default_rng(0).permutation(len(sentences)), 8  # TINY's batch_size
    assert by_sentences == [order[start:start + size].tolist() for start in range(0, len(order), size)]
    trained = LSTMTransitionParser(**TINY, max_epochs=2, patience=2, batch_words=30).fit(sentences[:30],
                                                                                         sentences[30:40])
    assert len(trained.history_["dev_las"]) == 2 and trained.batch_words == 30


def test_the_library_imports_without_torch_and_the_member_says_how_to_get_it() -> None:
    message = import_without_torch("parsing.members, parsing.lstm_transition, parsing.lstm_transition.member",
                                   "lstm-hybrid")
    assert "the lstm-hybrid member needs PyTorch" in message and "pip install torch==2.13.0" in message


def test_training_with_exploration_learns_from_its_own_configurations(sentences: list[Sentence]) -> None:
    """With ``explore`` the network parses its training sentences from the second epoch on and
    learns the least-cost moves where it lands: it learns the trees it saw, if more slowly than
    from the static oracle alone (its own wrong turns are part of what it sees)."""
    first = LSTMTransitionParser(**TINY, max_epochs=1).fit(sentences[:40], sentences[:40])
    explorer = LSTMTransitionParser(**TINY, explore=0.9, max_epochs=25, patience=25).fit(sentences[:40],
                                                                                       sentences[:40])
    learned = evaluate(sentences[:40], explorer.predict(sentences[:40])).las.f1
    assert learned > 0.6 and learned > evaluate(sentences[:40], first.predict(sentences[:40])).las.f1 + 0.2
    assert "gold_cache" not in vars(explorer)
    with pytest.raises(ValueError, match="explore"):
        LSTMTransitionParser(**TINY, explore=1.5).fit(sentences[:5])


def test_the_best_actions_are_the_least_cost_moves_with_the_gold_label() -> None:
    from parsing.lstm_transition.explore import best_actions

    space = ActionSpace(np.array([False, True, False]), np.ones(3, dtype=bool))  # label 1 only on ROOT
    valid = np.ones(space.n_actions, dtype=bool)
    assert best_actions([0, 0, 2], space, valid, 2).tolist() == [True, False, True, False, False]
    assert best_actions([3, None, 1], space, valid, 1).tolist() == [False, False, False, True, False]
    valid[space.encode(system.RIGHT, 1)] = False  # the gold label is not allowed: any label of the move
    assert best_actions([3, None, 1], space, valid, 1).tolist() == [False, False, False, False, True]


def test_a_model_saved_before_a_setting_existed_loads_with_its_default(parser: LSTMTransitionParser,
                                                                      sentences: list[Sentence],
                                                                      tmp_path: Path) -> None:
    """A file written before ``explore`` existed has no such attribute: loading, cloning (as an
    ensemble does) and parsing still work, with the setting's default."""
    from sklearn.base import clone

    older = LSTMTransitionParser.load(_saved(parser, tmp_path / "m.model"))
    del older.__dict__["explore"]
    saved = _saved(older, tmp_path / "older.model")
    loaded = LSTMTransitionParser.load(saved)
    assert loaded.explore == 0.0 and clone(loaded).get_params()["explore"] == 0.0
    assert [p.heads.tolist() for p in loaded.predict(sentences[40:])] == \
        [p.heads.tolist() for p in parser.predict(sentences[40:])]


def _saved(parser: LSTMTransitionParser, path: Path) -> Path:
    parser.save(path)
    return path


def test_annealing_continues_from_the_best_epoch_at_a_tenth_of_the_rate(
        sentences: list[Sentence], monkeypatch: pytest.MonkeyPatch) -> None:
    assert_anneals(LSTMTransitionParser, TINY, sentences[:20], sentences[20:30], monkeypatch)
