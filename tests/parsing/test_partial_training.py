"""Training on partial trees: the graph members learn only from the arcs a person set or
confirmed (``Sentence.annotated``); the arcs filled in around them are left out of the loss.

Small real data (UD Wolof, 40 sentences, two epochs, small hash spaces).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints, repair_heads
from parsing.members import build_member
from parsing.types import Sentence

SMALL = {"max_iter": 2, "n_bits": 16, "random_state": 0}


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> list[Sentence]:
    return load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:40]


def partial(sentences: list[Sentence], *, filled: str, seed: int = 0) -> list[Sentence]:
    """Every sentence with a third of its words annotated; the other arcs are the gold ones
    (``filled="gold"``) or a random tree around the annotated arcs (``filled="random"``)."""
    rng, noisy = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    out = []
    for sentence in sentences:
        n = len(sentence)
        annotated = np.zeros(n + 1, dtype=bool)
        annotated[1:] = rng.random(n) < 1 / 3
        heads = sentence.heads.copy()
        if filled == "random":
            human = Constraints({int(w): int(sentence.heads[w]) for w in np.flatnonzero(annotated)})
            noise = np.array([-1, *noisy.integers(0, n + 1, size=n)])
            heads = repair_heads(noise, human)
        out.append(replace(sentence, heads=heads, annotated=annotated))
    return out


@pytest.mark.parametrize("name", ["graph1", "graph2"])
def test_filled_in_arcs_are_left_out_of_the_loss(wolof: list[Sentence], name: str) -> None:
    with_gold = build_member(name, **SMALL).fit(partial(wolof, filled="gold"))
    with_noise = build_member(name, **SMALL).fit(partial(wolof, filled="random"))
    # the arc weights depend only on the annotated arcs, not on what fills the others in
    np.testing.assert_array_equal(with_gold.weights_, with_noise.weights_)
    whole = build_member(name, **SMALL).fit(wolof)
    assert not np.array_equal(whole.weights_, with_gold.weights_)  # the mask did change training


def test_a_whole_annotated_tree_trains_as_before(wolof: list[Sentence]) -> None:
    marked = [replace(s, annotated=np.ones(len(s) + 1, dtype=bool)) for s in wolof]
    np.testing.assert_array_equal(build_member("graph1", **SMALL).fit(marked).weights_,
                                  build_member("graph1", **SMALL).fit(wolof).weights_)
    assert not marked[0].partial and partial(wolof[:1], filled="gold")[0].partial


def test_annotated_must_cover_every_position(wolof: list[Sentence]) -> None:
    with pytest.raises(ValueError, match="annotated"):
        replace(wolof[0], annotated=np.ones(2, dtype=bool))


def test_the_labeller_leaves_unconfirmed_labels_out_of_the_loss(wolof: list[Sentence]) -> None:
    from parsing.labeller import ArcLabeller

    marked = partial(wolof, filled="gold")
    # the labels the parsers filled in are nonsense here: a label no treebank has
    scrambled = [replace(s, deprels=[label if s.annotated is not None and s.annotated[d] else "parser-made"
                                     for d, label in enumerate(s.deprels)]) for s in marked]
    with_gold = ArcLabeller(n_bits=16).fit(marked)
    with_noise = ArcLabeller(n_bits=16).fit(scrambled)
    assert "parser-made" not in with_noise.classes_.tolist()
    np.testing.assert_array_equal(with_gold.classes_, with_noise.classes_)
    assert with_gold.model_ is not None and with_noise.model_ is not None
    np.testing.assert_array_equal(with_gold.model_.coef_, with_noise.model_.coef_)
    whole = ArcLabeller(n_bits=16).fit(wolof)  # the mask did change training
    assert not np.array_equal(whole.columns_, with_gold.columns_)


def test_a_labeller_with_no_annotated_arc_is_refused(wolof: list[Sentence]) -> None:
    from parsing.labeller import ArcLabeller

    nothing = [replace(s, annotated=np.zeros(len(s) + 1, dtype=bool)) for s in wolof[:3]]
    with pytest.raises(ValueError, match="annotated arc"):
        ArcLabeller(n_bits=16).fit(nothing)


TRANSITION = {"epochs": 3, "n_bits": 16, "random_state": 0}


@pytest.mark.parametrize("name", ["eager", "hybrid-rtl"])
def test_transition_members_weight_updates_that_lose_only_filled_arcs(wolof: list[Sentence],
                                                                     name: str) -> None:
    marked = partial(wolof, filled="gold")
    whole = build_member(name, **TRANSITION).fit(wolof).weights_.dense()
    # weight 1 (the default) learns the filled-in tree like a human one: as if it were whole
    np.testing.assert_array_equal(build_member(name, **TRANSITION).fit(marked).weights_.dense(), whole)
    left_out = build_member(name, filled_weight=0.0, **TRANSITION).fit(marked).weights_.dense()
    halved = build_member(name, filled_weight=0.5, **TRANSITION).fit(marked).weights_.dense()
    assert not np.array_equal(left_out, whole) and not np.array_equal(halved, whole)
    assert not np.array_equal(left_out, halved)
    # a whole tree marked as annotated has no filled arcs: the weight changes nothing
    every = [replace(s, annotated=np.ones(len(s) + 1, dtype=bool)) for s in wolof]
    every_weighted = build_member(name, filled_weight=0.0, **TRANSITION).fit(every)
    np.testing.assert_array_equal(every_weighted.weights_.dense(), whole)


def test_leaving_noisy_filled_arcs_out_learns_the_human_arcs_better(ud_root: Path) -> None:
    train = load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:150]
    dev = load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu")[:150]
    noisy = partial(train, filled="random")  # two thirds of every tree is a random tree

    def uas(weight: float) -> float:
        parser = build_member("eager", filled_weight=weight, **TRANSITION).fit(noisy)
        parses = parser.predict(dev)
        right = sum(int(np.sum(p.heads[1:] == s.heads[1:])) for p, s in zip(parses, dev, strict=True))
        return right / sum(len(s) for s in dev)

    assert uas(0.0) > uas(1.0) + 0.05


def test_the_swap_member_and_bad_weights(wolof: list[Sentence]) -> None:
    marked = partial(wolof[:10], filled="gold")
    # the static swap oracle needs the whole tree: the weight does not apply to it
    left_out = build_member("swap", filled_weight=0.0, **TRANSITION).fit(marked)
    alike = build_member("swap", **TRANSITION).fit(marked)
    np.testing.assert_array_equal(left_out.weights_.dense(), alike.weights_.dense())
    with pytest.raises(ValueError, match="filled_weight"):
        build_member("eager", filled_weight=1.5)
