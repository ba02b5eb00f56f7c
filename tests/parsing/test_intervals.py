"""Bootstrap intervals of attachment scores and paired differences, on real trees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.scorer.intervals import bootstrap_interval, difference, sentence_counts
from parsing.scorer.metrics import evaluate
from parsing.types import Parse, Sentence


@pytest.fixture(scope="module")
def gold(ud_root: Path) -> list[Sentence]:
    return load_sentences(next((ud_root / "UD_Wolof-WTB").glob("*-ud-dev.conllu")))[:120]


def damaged(sentences: list[Sentence], every: int) -> list[Parse]:
    """Parses equal to gold except that every ``every``-th word's label is wrong."""
    parses = []
    for sentence in sentences:
        labels = [label if d % every else "dep" for d, label in enumerate(sentence.deprels)]
        parses.append(Parse(sentence.heads.copy(), ["", *labels[1:]]))
    return parses


def test_counts_add_up_to_the_scorer_totals(gold: list[Sentence]) -> None:
    system = damaged(gold, 3)
    counts = sentence_counts(gold, system)
    result = evaluate(gold, system)
    assert counts.words.shape == (len(gold),)
    assert counts.words.sum() == result.words
    assert counts.las.sum() == result.las.correct and counts.uas.sum() == result.uas.correct
    assert (counts.las <= counts.uas).all() and (counts.uas <= counts.words).all()


def test_the_interval_holds_the_score_and_narrows_with_more_sentences(gold: list[Sentence]) -> None:
    counts = sentence_counts(gold, damaged(gold, 4))
    score = counts.las.sum() / counts.words.sum()
    low, high = bootstrap_interval(counts.las, counts.words)
    assert low < score < high
    few_low, few_high = bootstrap_interval(counts.las[:20], counts.words[:20])
    assert few_high - few_low > high - low
    assert bootstrap_interval(counts.las, counts.words) == (low, high)  # seeded


def test_paired_differences_tell_noise_from_a_real_change(gold: list[Sentence]) -> None:
    words = sentence_counts(gold, gold).words
    slightly, clearly = sentence_counts(gold, damaged(gold, 40)), sentence_counts(gold, damaged(gold, 3))
    perfect = sentence_counts(gold, gold).las
    assert not difference(clearly.las, perfect, words).within_noise
    close = difference(slightly.las, sentence_counts(gold, damaged(gold, 39)).las, words)
    assert close.within_noise and close.sentences == len(gold)


def test_bad_shapes_and_empty_input_are_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        bootstrap_interval([1, 2], [3])
    with pytest.raises(ValueError, match="no words"):
        bootstrap_interval(np.zeros(3), np.zeros(3))
