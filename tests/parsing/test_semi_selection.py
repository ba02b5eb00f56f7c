"""Selection strategies on real sentences with member parses perturbed in known ways."""

from __future__ import annotations

import doctest
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.semi import selection
from parsing.semi.selection import STRATEGIES, rank_sentences, select_batch, sentence_priorities
from parsing.types import Parse, Sentence


@pytest.fixture(scope="module")
def sentences(ud_root: Path) -> list[Sentence]:
    return load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu")[:12]


def _gold(sentence: Sentence) -> Parse:
    return Parse(heads=sentence.heads.copy(), deprels=list(sentence.deprels))


def _moved(sentence: Sentence, words: int, shift: int) -> Parse:
    """The gold tree with the first ``words`` words attached elsewhere (``shift`` picks where)."""
    heads = sentence.heads.copy()
    n = len(sentence)
    for d in range(1, min(words, n) + 1):
        candidates = [h for h in range(n + 1) if h not in (d, sentence.heads[d])]
        heads[d] = candidates[shift % len(candidates)]
    return Parse(heads=heads, deprels=list(sentence.deprels))


def _parses(sentences: list[Sentence], wrong: list[int], *, same_error: bool
            ) -> tuple[list[list[Parse]], list[Parse]]:
    """Three members: gold, and two that move ``wrong[i]`` words of sentence ``i`` (to the same
    wrong head when ``same_error``, else to different ones). The ensemble says gold."""
    members: list[list[Parse]] = [[_gold(s) for s in sentences], [], []]
    for s, count in zip(sentences, wrong, strict=True):
        members[1].append(_moved(s, count, 0))
        members[2].append(_moved(s, count, 0 if same_error else 1))
    return members, [_gold(s) for s in sentences]


def _shares(members: list[list[Parse]], ensemble: list[Parse], i: int) -> list[float]:
    """Vote share of each word of sentence ``i``, computed from its definition."""
    parse = ensemble[i]
    return [
        sum(member[i].heads[d] == parse.heads[d] for member in members) / len(members)
        for d in range(1, len(parse.heads))
    ]


def _wrong(sentences: list[Sentence]) -> list[int]:
    return [(3 * i) % 5 for i in range(len(sentences))]  # 0..4 moved words, mixed over lengths


def _expected_order(values: list[float]) -> list[int]:
    return sorted(range(len(values)), key=lambda i: (-round(values[i], 9), i))


def test_expected_errors_rank_by_sum_of_doubt(sentences: list[Sentence]) -> None:
    members, ensemble = _parses(sentences, _wrong(sentences), same_error=True)
    expected = [sum(1 - share for share in _shares(members, ensemble, i)) for i in range(len(sentences))]
    assert rank_sentences("expected-errors", sentences, members, ensemble) == _expected_order(expected)
    priorities = sentence_priorities("expected-errors", sentences, members, ensemble)
    assert priorities.shape == (len(sentences),)
    np.testing.assert_allclose(priorities, expected)


def test_disagreement_ranks_by_mean_doubt_per_word(sentences: list[Sentence]) -> None:
    members, ensemble = _parses(sentences, _wrong(sentences), same_error=True)
    means = [float(np.mean([1 - s for s in _shares(members, ensemble, i)])) for i in range(len(sentences))]
    sums = [sum(1 - s for s in _shares(members, ensemble, i)) for i in range(len(sentences))]
    order = sorted(range(len(sentences)), key=lambda i: (-round(means[i], 9), -round(sums[i], 9), i))
    assert rank_sentences("disagreement", sentences, members, ensemble) == order
    # the two strategies really differ on this data: the mean favours short sentences
    assert order != rank_sentences("expected-errors", sentences, members, ensemble)


def test_weights_change_the_shares(sentences: list[Sentence]) -> None:
    members, ensemble = _parses(sentences, _wrong(sentences), same_error=True)
    heavy_gold = sentence_priorities("expected-errors", sentences, members, ensemble, weights=[8.0, 1.0, 1.0])
    uniform = sentence_priorities("expected-errors", sentences, members, ensemble)
    moved = np.array(_wrong(sentences)) > 0
    assert np.all(heavy_gold[moved] < uniform[moved])
    assert np.all(heavy_gold[~moved] == 0)


def test_entropy_is_higher_when_members_split_three_ways(sentences: list[Sentence]) -> None:
    wrong = _wrong(sentences)
    same = _parses(sentences, wrong, same_error=True)
    split = _parses(sentences, wrong, same_error=False)
    entropy_same = sentence_priorities("entropy", sentences, *same)
    entropy_split = sentence_priorities("entropy", sentences, *split)
    counts = np.array([min(w, len(s)) for w, s in zip(wrong, sentences, strict=True)])
    # by definition: 1 of 3 right + 2 on one wrong head = H(1/3, 2/3); three heads = log2(3)
    two_way = -(1 / 3 * math.log2(1 / 3) + 2 / 3 * math.log2(2 / 3))
    np.testing.assert_allclose(entropy_same, counts * two_way)
    np.testing.assert_allclose(entropy_split, counts * math.log2(3))
    assert rank_sentences("entropy", sentences, *split) == _expected_order(list(entropy_split))


def test_longest_first(sentences: list[Sentence]) -> None:
    ranked = rank_sentences("longest", sentences, [], [])
    lengths = [len(sentences[i]) for i in ranked]
    assert lengths == sorted(lengths, reverse=True)
    for a, b in zip(ranked, ranked[1:], strict=False):  # equal lengths keep corpus order
        if len(sentences[a]) == len(sentences[b]):
            assert a < b


def test_random_is_a_seeded_permutation(sentences: list[Sentence]) -> None:
    first = rank_sentences("random", sentences, [], [], random_state=3)
    assert sorted(first) == list(range(len(sentences)))
    assert rank_sentences("random", sentences, [], [], random_state=3) == first
    others = {tuple(rank_sentences("random", sentences, [], [], random_state=s)) for s in range(4, 8)}
    assert len(others | {tuple(first)}) > 1


def test_ties_are_broken_by_corpus_order(sentences: list[Sentence]) -> None:
    twice = [sentences[0], sentences[1], sentences[0]]
    members, ensemble = _parses(twice, [2, 0, 2], same_error=True)
    for strategy in STRATEGIES[1:]:
        ranked = rank_sentences(strategy, twice, members, ensemble)
        assert ranked.index(0) < ranked.index(2)


def test_diversity_drops_a_near_duplicate(sentences: list[Sentence]) -> None:
    copy = replace(sentences[2], forms=[f.upper() for f in sentences[2].forms])
    pool = [*sentences[:6], copy]
    ranked = [2, 6, 0, 1, 3, 4, 5]
    assert select_batch(ranked, pool, 3) == [2, 6, 0]
    assert select_batch(ranked, pool, 3, diversity=True) == [2, 0, 1]
    assert select_batch(ranked, pool, 3, diversity=True, max_similarity=1.0) == [2, 6, 0]
    # when nothing else is left the duplicate fills the batch rather than shrinking it
    assert select_batch([2, 6], pool, 2, diversity=True) == [2, 6]


def test_bad_arguments_are_named(sentences: list[Sentence]) -> None:
    with pytest.raises(ValueError, match="unknown selection strategy 'best'"):
        rank_sentences("best", sentences, [], [])
    with pytest.raises(ValueError, match="needs the members' parses"):
        rank_sentences("entropy", sentences, [], [])
    with pytest.raises(ValueError, match="batch size"):
        select_batch([0], sentences, -1)


def test_doctests() -> None:
    assert doctest.testmod(selection).failed == 0
