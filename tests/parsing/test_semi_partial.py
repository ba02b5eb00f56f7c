"""Partial annotation on real sentences: human arcs where the members doubt, parser arcs elsewhere."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.ensemble.voting import combine_votes
from parsing.semi.partial import doubtful_words, partial_tree
from parsing.trees import is_tree
from parsing.types import Parse, Sentence


def _perturbed(sentence: Sentence, rng: np.random.Generator, flips: int) -> Parse:
    """The gold tree with ``flips`` words re-attached to another word (maybe not a tree)."""
    heads = sentence.heads.copy()
    deprels = list(sentence.deprels)
    for dep in rng.choice(np.arange(1, len(heads)), size=min(flips, len(sentence)), replace=False):
        heads[dep] = int(rng.choice([h for h in range(len(heads)) if h != dep]))
        deprels[dep] = "dep"
    return Parse(heads, deprels)


@pytest.fixture(scope="module")
def sentences(ud_root: Path) -> list[Sentence]:
    return [s for s in load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu")[:60] if len(s) > 3]


@pytest.mark.parametrize("threshold", [0.5, 0.8, 1.0])
def test_partial_tree_is_a_tree_with_every_human_arc(sentences: list[Sentence], threshold: float) -> None:
    rng = np.random.default_rng(7)
    for gold in sentences:
        members = [_perturbed(gold, rng, flips) for flips in (0, 2, 4)]
        weights = [1.0, 1.0, 1.0]
        ensemble = combine_votes(members, weights)
        tree, touched = partial_tree(gold, members, ensemble, weights, threshold)
        assert is_tree(tree.heads)
        agree = [sum((m.heads[d], m.deprels[d]) == (ensemble.heads[d], ensemble.deprels[d]) for m in members)
                 for d in range(1, len(gold.heads))]
        assert touched.tolist() == [False, *(count / len(members) < threshold for count in agree)]
        for dep in np.flatnonzero(touched):
            assert tree.heads[dep] == gold.heads[dep] and tree.deprels[dep] == gold.deprels[dep]
        kept = ~touched
        kept[0] = False
        if is_tree(np.where(touched, gold.heads, ensemble.heads)):  # nothing to repair
            assert np.array_equal(tree.heads[kept], ensemble.heads[kept])
        assert tree.forms == gold.forms and tree.upos == gold.upos


def test_threshold_one_touches_every_doubtful_word_and_a_unanimous_sentence_none(
        sentences: list[Sentence]) -> None:
    gold = sentences[0]
    same = Parse(gold.heads.copy(), list(gold.deprels))
    assert not doubtful_words([same, same], same, [1.0, 1.0], 1.0).any()
    wrong = _perturbed(gold, np.random.default_rng(0), 3)
    doubtful = doubtful_words([same, wrong], same, [1.0, 1.0], 1.0)
    differ = [(wrong.heads[d], wrong.deprels[d]) != (gold.heads[d], gold.deprels[d])
              for d in range(1, len(gold) + 1)]
    assert doubtful.sum() == sum(differ)  # head or label
    with pytest.raises(ValueError, match="threshold"):
        doubtful_words([same], same, [1.0], 0.0)
