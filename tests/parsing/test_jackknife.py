"""Tests of parsing.jackknife: no item is ever predicted by a model that saw it."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

import pytest

from parsing.conllu_io import load_sentences
from parsing.jackknife import fold_assignment, jackknife, jackknife_tags
from parsing.tagger.model import Tagger
from parsing.types import ROOT, Sentence


def test_every_item_is_predicted_once_by_a_model_that_never_saw_it() -> None:
    items = list(range(23))
    seen_by_call: list[tuple[set[int], list[int]]] = []

    def spy(train: list[int], held_out: list[int]) -> list[tuple[int, int]]:
        assert not set(train) & set(held_out)
        seen_by_call.append((set(train), held_out))
        return [(item, len(seen_by_call)) for item in held_out]

    predictions = jackknife(items, spy, folds=4, random_state=3)
    assert [item for item, _ in predictions] == items  # input order, every item once
    assert len(seen_by_call) == 4
    for item, call in predictions:
        train, held_out = seen_by_call[call - 1]
        assert item in held_out and item not in train
        assert train | set(held_out) == set(items)
    assert sorted(len(h) for _, h in seen_by_call) == [5, 6, 6, 6]  # balanced folds


def test_fold_assignment_is_seeded() -> None:
    assert fold_assignment(30, 3, 5).tolist() == fold_assignment(30, 3, 5).tolist()
    assert fold_assignment(30, 3, 5).tolist() != fold_assignment(30, 3, 6).tolist()


@pytest.mark.parametrize("folds", [1, 6])
def test_bad_fold_counts_are_refused(folds: int) -> None:
    with pytest.raises(ValueError, match="folds"):
        jackknife([1, 2, 3, 4, 5], lambda train, held: held, folds=folds)


def test_a_wrong_number_of_predictions_is_refused() -> None:
    with pytest.raises(ValueError, match="predictions"):
        jackknife([1, 2, 3, 4], lambda train, held: held[:-1], folds=2)


class SpyTagger:
    """Remembers what it was fitted on; refuses to tag any of it; tags everything ``X``."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def fit(self, sentences: Sequence[Sentence],
            dev: Sequence[Sentence] | None = None) -> SpyTagger:
        self.seen = {s.sent_id or "" for s in sentences}
        return self

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        assert not self.seen & {s.sent_id for s in sentences}, "tagged a training sentence"
        return [Sentence.from_words(s.forms[1:], upos=["X"] * len(s), sent_id=s.sent_id)
                for s in sentences]


def test_jackknife_tags_never_tags_a_sentence_its_tagger_saw() -> None:
    sentences = [Sentence.from_words(["w"] * (i % 3 + 1), sent_id=str(i)) for i in range(12)]
    tagged = jackknife_tags(sentences, SpyTagger, folds=3)
    assert [s.sent_id for s in tagged] == [s.sent_id for s in sentences]
    assert all(s.upos[1:] == ["X"] * len(s) for s in tagged)


def test_jackknife_tags_with_the_real_tagger(ud_root: Path) -> None:
    sentences = load_sentences(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-train.conllu")[:300]
    before = copy.deepcopy(sentences)
    tagged = jackknife_tags(sentences, lambda: Tagger(max_iter=3), folds=3)
    assert [s.forms for s in tagged] == [s.forms for s in sentences]
    assert [s.upos for s in sentences] == [s.upos for s in before]  # input untouched
    words = [(p, g) for t, s in zip(tagged, sentences, strict=True)
             for p, g in zip(t.upos[1:], s.upos[1:], strict=True)]
    assert all(t.upos[0] == ROOT for t in tagged)
    accuracy = sum(p == g for p, g in words) / len(words)
    assert 0.5 < accuracy < 1.0  # learned something, but not from the sentences themselves
