"""The transition-based ensemble members on a small slice of a real treebank."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from parsing.conllu_io import load_sentences
from parsing.scorer.metrics import evaluate
from parsing.transition import MEMBERS, ArcEagerParser, TransitionParser, make_member
from parsing.transition.parser import reverse_heads
from parsing.transition.state import State
from parsing.types import Parse, Sentence

EPOCHS = 4


@pytest.fixture(scope="module")
def data(ud_root: Path) -> tuple[list[Sentence], list[Sentence]]:
    folder = ud_root / "UD_Telugu-MTG"
    if not (folder / "te_mtg-ud-train.conllu").exists():
        pytest.skip(f"UD_Telugu-MTG not found under {ud_root}")
    train = load_sentences(folder / "te_mtg-ud-train.conllu")[:200]
    dev = load_sentences(folder / "te_mtg-ud-dev.conllu")[:150]
    return train, dev


@pytest.fixture(scope="module")
def fitted(data: tuple[list[Sentence], list[Sentence]]) -> dict[str, TransitionParser]:
    train, _ = data
    return {name: make_member(name, epochs=EPOCHS).fit(train) for name in MEMBERS}


def baseline(train: list[Sentence], dev: list[Sentence]) -> tuple[float, float]:
    """Best of 'attach to the next word' and 'attach to the previous word', with each UPOS's
    most frequent label: a trivial parser's UAS and LAS."""
    label_of: dict[str, Counter[str]] = {}
    for s in train:
        for d in range(1, len(s) + 1):
            label_of.setdefault(s.upos[d], Counter())[s.deprels[d]] += 1
    best = (0.0, 0.0)
    for direction in (1, -1):
        parses = []
        for s in dev:
            n = len(s)
            heads = np.array([-1, *(d + direction for d in range(1, n + 1))])
            heads[heads == n + 1] = 0
            labels = ["", *(label_of.get(u, Counter({"dep": 1})).most_common(1)[0][0] for u in s.upos[1:])]
            parses.append(Parse(heads=heads, deprels=labels))
        result = evaluate(dev, parses)
        best = max(best, (result.uas.f1, result.las.f1))
    return best


def is_single_rooted_tree(heads: np.ndarray) -> bool:
    if heads[0] != -1 or int(np.sum(heads[1:] == 0)) != 1:
        return False
    for d in range(1, len(heads)):
        node, steps = d, 0
        while node != 0:
            node, steps = int(heads[node]), steps + 1
            if node < 0 or steps > len(heads):
                return False
    return True


@pytest.mark.parametrize("name", list(MEMBERS))
def test_members_learn(
    data: tuple[list[Sentence], list[Sentence]], fitted: dict[str, TransitionParser], name: str
) -> None:
    train, dev = data
    parser = fitted[name]
    assert parser.member_name == name
    parses = parser.predict(dev)
    result = evaluate(dev, parses)
    uas, las = baseline(train, dev)
    assert result.uas.f1 > uas + 0.15, (result.uas.f1, uas)
    assert result.las.f1 > las + 0.2, (result.las.f1, las)
    labels = {label for s in train for label in s.deprels[1:]}
    for parse, sentence in zip(parses, dev, strict=True):
        assert len(parse) == len(sentence)
        assert is_single_rooted_tree(parse.heads)
        assert set(parse.deprels[1:]) <= labels
        assert parse.arc_scores is not None and np.isnan(parse.arc_scores[0])
        assert ((parse.arc_scores[1:] >= 0) & (parse.arc_scores[1:] <= 1)).all()


def test_right_to_left_differs(
    data: tuple[list[Sentence], list[Sentence]], fitted: dict[str, TransitionParser]
) -> None:
    _, dev = data
    for system in ("eager", "swap", "hybrid"):
        left = fitted[system].predict(dev)
        right = fitted[f"{system}-rtl"].predict(dev)
        differing = sum(a.heads.tolist() != b.heads.tolist() for a, b in zip(left, right, strict=True))
        assert differing > 0


def test_reverse_heads_is_an_involution() -> None:
    heads = np.array([-1, 3, 3, 0, 5, 3])
    assert reverse_heads(heads).tolist() == [-1, 3, 1, 0, 3, 3]
    assert reverse_heads(reverse_heads(heads)).tolist() == heads.tolist()


def test_several_roots_become_one(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, _ = data
    parser = make_member("eager", epochs=1).fit(train[:30])
    state = State.initial(4)
    root_label = int(parser.labels_.ids([parser.root_label_])[0]) - 1
    state.add_arc(0, 1, root_label)
    state.add_arc(0, 3, root_label)
    state.add_arc(3, 2, 0)  # word 4 is left without a head
    confidence = np.array([np.nan, 0.4, 0.9, 0.8, np.nan])
    heads, labels = parser._single_root(state, confidence)
    assert heads.tolist() == [-1, 3, 3, 0, 3]  # the most confident ROOT arc wins
    assert labels[3] == parser.root_label_ and labels[1] == labels[4] == parser.fallback_label_
    assert confidence[1] == confidence[4] == 0.0 and confidence[3] == 0.8


def test_save_load_gives_identical_output(
    tmp_path: Path, data: tuple[list[Sentence], list[Sentence]], fitted: dict[str, TransitionParser]
) -> None:
    _, dev = data
    parser = fitted["swap-rtl"]
    parser.save(tmp_path / "swap.model")
    loaded = TransitionParser.load(tmp_path / "swap.model")
    for a, b in zip(parser.predict(dev), loaded.predict(dev), strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels
        np.testing.assert_array_equal(a.arc_scores, b.arc_scores)


def test_seeded_training_is_deterministic_and_leaves_input_alone(
    data: tuple[list[Sentence], list[Sentence]],
) -> None:
    train, dev = data
    train, dev = train[:80], dev[:30]
    before = copy.deepcopy(train)
    dev_before = copy.deepcopy(dev)
    order = [s.sent_id for s in train]
    first = make_member("hybrid", epochs=2, random_state=5).fit(train, dev)
    second = make_member("hybrid", epochs=2, random_state=5).fit(train, dev)
    np.testing.assert_array_equal(first.weights_, second.weights_)
    first.predict(dev)
    assert [s.sent_id for s in train] == order
    for a, b in zip(train + dev, before + dev_before, strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels and a.forms == b.forms
    assert 1 <= first.epochs_ <= 2 and len(first.history_) >= 1


def test_estimator_contract() -> None:
    parser = make_member("eager-rtl", epochs=4)
    assert isinstance(parser, ArcEagerParser)
    params = parser.get_params()
    assert params["right_to_left"] is True and params["epochs"] == 4 and "system" not in params
    twin = clone(parser)
    assert twin.get_params() == params and twin.member_name == "eager-rtl"
    assert TransitionParser(system="arc-hybrid").member_name == "arc-hybrid"
    with pytest.raises(ValueError, match="unknown transition member"):
        make_member("planar")


def test_beam_search_is_refused(data: tuple[list[Sentence], list[Sentence]]) -> None:
    train, _ = data
    with pytest.raises(ValueError, match="beam"):
        make_member("eager", beam_size=4).fit(train[:5])
