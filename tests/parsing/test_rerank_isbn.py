"""Tests of reranking the ISBN parser (parsing.rerank.isbn_replay, parsing.rerank.member's
RerankedISBNParser) on real Telugu sentences: replayed derivations score as the beam did, the
Fisher block is the gradient of log P w.r.t. the move and label output weights, recording
derivations leaves the parser's output unchanged, the member only picks trees of its list,
saves and loads, parses as plain isbn without dev, and bad derivations are refused."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints
from parsing.isbn import ISBNParser, beam, system
from parsing.members import build_member, member_names
from parsing.rerank import Candidates, Reranker, adapt, beam_candidates, perceptron
from parsing.rerank import features as ft
from parsing.rerank.extract import dimension
from parsing.rerank.isbn_replay import replay
from parsing.rerank.member import RerankedISBNParser
from parsing.rerank.replay import Steps
from parsing.trees import is_tree
from parsing.types import Sentence

SMALL: dict[str, Any] = {"hidden": 16, "beam_size": 4, "max_epochs": 4, "min_count": 1, "learning_rate": 0.01}
K = 4


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence], list[Sentence]]:
    """120 training sentences, 40 dev sentences (the reranker's) and 40 others to parse."""
    telugu = ud_root / "UD_Telugu-MTG"
    train, dev = (load_sentences(telugu / f"te_mtg-ud-{part}.conllu") for part in ("train", "dev"))
    return train[:120], dev[:40], dev[40:80]


@pytest.fixture(scope="module")
def parser(data: tuple[list[Sentence], ...]) -> ISBNParser:
    return ISBNParser(**SMALL, random_state=1).fit(data[0])


@pytest.fixture(scope="module")
def lists(parser: ISBNParser, data: tuple[list[Sentence], ...]) -> list[Candidates]:
    return beam_candidates(parser, data[1], K)


@pytest.fixture(scope="module")
def member(data: tuple[list[Sentence], ...]) -> RerankedISBNParser:
    return RerankedISBNParser(k=K, rates=(0.01, 1.0), epochs=2, isbn_params=SMALL).fit(data[0], data[1])


def test_replay_gives_the_beam_scores(parser: ISBNParser, data: tuple[list[Sentence], ...]) -> None:
    dev = data[1]
    listed = parser.kbest_derivations(dev, K)
    flat = [[codes for _, _, _, paths in trees for codes, _ in paths] for trees in listed]
    for trees, steps in zip(listed, replay(parser, dev, flat), strict=True):
        scores = [log_prob for _, _, _, paths in trees for _, log_prob in paths]
        np.testing.assert_allclose([s.log_prob for s in steps], scores, atol=1e-4)
        for derivation, codes in zip(steps, (c for _, _, _, paths in trees for c, _ in paths), strict=True):
            arcs = codes >= system.N_MOVES
            assert len(derivation.actions) == len(codes) + arcs.sum()  # a label row after each arc
            assert derivation.actions[derivation.actions >= system.N_MOVES].tolist() == codes[arcs].tolist()
            assert (derivation.positions == -1).all()


def _previous_extended(self: beam.Hypothesis, move: int, label: int, log_prob: float) -> beam.Hypothesis:
    """:meth:`Hypothesis.extended` as it was before derivations were recorded."""
    state = self.state.copy()
    system.apply(state, move, label)
    return beam.Hypothesis(state, self.last_top.copy(), self.last_front.copy(), log_prob, move)


def test_recording_derivations_leaves_predict_unchanged(
    parser: ISBNParser, data: tuple[list[Sentence], ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    sentences = data[2]
    recorded = parser.predict(sentences)
    with monkeypatch.context() as patch:
        patch.setattr(beam.Hypothesis, "extended", _previous_extended)
        unrecorded = parser.predict(sentences)
    for a, b in zip(recorded, unrecorded, strict=True):
        assert a.heads.tobytes() == b.heads.tobytes() and a.deprels == b.deprels
        assert a.arc_scores is not None and b.arc_scores is not None
        assert a.arc_scores.tobytes() == b.arc_scores.tobytes()
    # kbest_derivations lists predict's k-best trees, in order, with the same probabilities.
    for parse, trees in zip(recorded, parser.kbest_derivations(sentences, parser.beam_size), strict=True):
        kbest = parse.extras["kbest"]
        assert isinstance(kbest, list)
        assert [(h.tolist(), d, p) for h, d, p in kbest] == [(h.tolist(), d, p) for h, d, p, _ in trees]


def _derivative(parser: ISBNParser, name: str, index: tuple[int, ...], value: Callable[[], float],
                step: float = 1e-6) -> float:
    """Central difference of ``value()`` in one weight ``parser.params_[name][index]``."""
    weights = parser.params_[name]
    saved = weights[index]
    up_and_down = []
    for shift in (step, -step):
        weights[index] = saved + shift
        up_and_down.append(value())
    weights[index] = saved
    return (up_and_down[0] - up_and_down[1]) / (2 * step)


def test_fisher_block_matches_finite_differences_of_log_p(
    parser: ISBNParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    twin = copy.deepcopy(parser)
    twin.params_ = {name: value.astype(np.float64) for name, value in parser.params_.items()}
    n_labels = len(twin.labels_)

    def branching(steps: Steps, block: slice) -> list[int]:
        """The labels (ids) taken in ``block`` of the decision space where more than one was allowed."""
        rows = (steps.actions >= block.start) & (steps.actions < block.stop)
        allowed = np.isfinite(steps.log_probs[rows]).sum(axis=1) > 1
        return [int(label) for label in steps.actions[rows][allowed] - block.start]

    lefts, rights = slice(4, 4 + n_labels), slice(4 + n_labels, 4 + 2 * n_labels)
    i, d = next((i, d) for i, listed in enumerate(lists) for d in listed.derivations[0]
                if all(branching(replay(twin, [data[1][i]], [[d]])[0][0], b) for b in (lefts, rights)))
    sentence = data[1][i]

    def log_p() -> float:
        return replay(twin, [sentence], [[d]])[0][0].log_prob

    steps = replay(twin, [sentence], [[d]])[0][0]
    block = ft.fisher_block(steps)  # (H+1, 4 + 2L): [Wm | Wl | Wr], then the bias row
    hidden = twin.params_["Wm"].shape[0]
    left, right = branching(steps, lefts)[0], branching(steps, rights)[0]
    unused = int(np.flatnonzero(twin.other_labels_ & (np.arange(n_labels) != left))[0])
    checked = [("Wm", (0, system.SHIFT), 0, system.SHIFT), ("Wm", (hidden - 1, system.REDUCE), hidden - 1, 1),
               ("bm", (system.LEFT,), hidden, system.LEFT),
               ("Wl", (2, left), 2, 4 + left), ("bl", (left,), hidden, 4 + left),
               ("Wl", (1, unused), 1, 4 + unused),
               ("Wr", (3, right), 3, 4 + n_labels + right), ("br", (right,), hidden, 4 + n_labels + right)]
    for name, index, row, column in checked:
        numeric = _derivative(twin, name, index, log_p)
        assert block[row, column] == pytest.approx(numeric, abs=1e-6), (name, index)
    assert np.abs(block[:, 4 + left]).sum() > 0 and np.abs(block[:, 4 + n_labels + right]).sum() > 0


@pytest.mark.parametrize("kind", ["top_eff", "fisher"])
def test_reranker_only_returns_trees_of_the_list(
    kind: str, parser: ISBNParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    dev = data[1]
    reranker = Reranker(kind, rate=1.0, epochs=2).fit(parser, dev[:30], lists[:30])
    width = 4 + 2 * len(parser.labels_)  # moves, LEFT labels, RIGHT labels
    assert len(reranker.weights_) == dimension(parser) == 1 + (parser.hidden + 1) * width
    for tree, listed in zip(reranker.rerank(parser, dev[30:], lists[30:]), lists[30:], strict=True):
        assert any(tree[0] is heads and tree[1] is deprels for heads, deprels in listed.trees)
    stay = copy.copy(reranker)
    stay.weights_ = perceptron.initial_weights(dimension(parser), reranker.sign)
    assert stay.choose(parser, dev, lists) == [0] * len(dev)


def test_member_picks_trees_of_its_own_kbest_list(
    member: RerankedISBNParser, data: tuple[list[Sentence], ...]
) -> None:
    assert member.reranked_ and member.reranker_ is not None and member.reranker_.n_train_ > 0
    sentences = data[2]
    for sentence, parse in zip(sentences, member.predict(sentences), strict=True):
        kbest, rank = parse.extras["kbest"], parse.extras["rank"]
        assert isinstance(kbest, list) and isinstance(rank, int)
        assert 0 <= rank < len(kbest) <= member.k
        assert parse.heads.tolist() == kbest[rank][0].tolist() and parse.deprels == list(kbest[rank][1])
        assert len(parse) == len(sentence) and is_tree(parse.heads)


def test_save_and_load_give_the_same_parses(
    member: RerankedISBNParser, data: tuple[list[Sentence], ...], tmp_path: Path
) -> None:
    path = tmp_path / "isbn-rerank.model"
    member.save(path)
    loaded = RerankedISBNParser.load(path)
    assert loaded.reranked_
    for a, b in zip(member.predict(data[2]), loaded.predict(data[2]), strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels
        assert a.extras["rank"] == b.extras["rank"]


def test_without_dev_it_is_plain_isbn(parser: ISBNParser, data: tuple[list[Sentence], ...]) -> None:
    plain = RerankedISBNParser(k=K, isbn_params=SMALL, random_state=1).fit(data[0])
    assert not plain.reranked_
    for a, b in zip(plain.predict(data[2]), parser.predict(data[2]), strict=True):
        assert a.heads.tobytes() == b.heads.tobytes() and a.deprels == b.deprels and a.extras["rank"] == 0
        assert a.arc_scores is not None and b.arc_scores is not None
        assert a.arc_scores.tobytes() == b.arc_scores.tobytes()


def test_forced_arcs_go_to_the_isbn_constrained_beam(
    member: RerankedISBNParser, data: tuple[list[Sentence], ...]
) -> None:
    sentences = [s for s in data[2] if len(s) >= 4][:8]
    constraints = [Constraints({1: int(s.heads[1]), 3: int(s.heads[3])}, {3: s.deprels[3]})
                   for s in sentences]
    parses = member.predict_constrained(sentences, constraints)
    expected = member.isbn_.predict_constrained(sentences, constraints)
    for forced, parse, own in zip(constraints, parses, expected, strict=True):
        assert forced.satisfied_by(parse.heads) and parse.heads.tolist() == own.heads.tolist()


def test_it_is_a_member_by_name_but_not_a_default_one() -> None:
    assert "isbn-rerank" not in member_names() and member_names("isbn-rerank") == ["isbn-rerank"]
    built = build_member("isbn-rerank", k=6)
    assert isinstance(built, RerankedISBNParser) and built.get_params()["k"] == 6


def test_bad_derivations_raise_value_errors(
    parser: ISBNParser, data: tuple[list[Sentence], ...], lists: list[Candidates]
) -> None:
    n_labels = len(parser.labels_)
    i = next(i for i, s in enumerate(data[1]) if len(s) >= 3)
    sentence, good = data[1][i], lists[i].derivations[0][0]
    root_only = int(np.flatnonzero(parser.root_labels_ & ~parser.other_labels_)[0])
    never_root = int(np.flatnonzero(parser.other_labels_ & ~parser.root_labels_)[0])
    bad = [
        ("invalid move", [system.REDUCE, *good.tolist()]),  # nothing to reduce at the start
        ("decision code", np.where(good == good[0], 2, good)),  # a bare LEFT without a label
        ("decision code", [*good[:-1].tolist(), 4 + 2 * n_labels]),
        ("not allowed", [system.SHIFT, 4 + root_only]),  # ROOT's label on another arc
        ("not allowed", [4 + n_labels + never_root]),  # another label on ROOT's arc
        ("stops before", good[:-1]),
        ("goes on after", [*good.tolist(), system.SHIFT]),
    ]
    for message, codes in bad:
        with pytest.raises(ValueError, match=message):
            replay(parser, [sentence], [[np.asarray(codes, dtype=np.int64)]])
    assert replay(parser, [sentence], [[good]])[0][0].actions.max() < 4 + 2 * n_labels
    with pytest.raises(ValueError, match="no adaptation word slots"):
        dimension(parser, 1)
    with pytest.raises(ValueError, match="word slots need the neural member"):
        adapt(parser, data[1][:5], k=K)
