"""Partial annotation on real sentences: human arcs where the members doubt, parser arcs elsewhere."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints, finish_parse
from parsing.ensemble.constrained import force_combined
from parsing.ensemble.voting import combine_votes
from parsing.semi.partial import (
    doubtful_words,
    flagged_words,
    interactive_partial_trees,
    labelled_share,
    partial_tree,
    refill,
    words_to_touch,
)
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
        # marked as the app marks a saved partial tree: the members learn from its human arcs
        assert tree.annotated is not None and tree.annotated.tolist() == touched.tolist()


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


@pytest.mark.parametrize("threshold", [None, 0.8])
def test_detector_flags_touch_words_the_share_leaves_alone(sentences: list[Sentence],
                                                           threshold: float | None) -> None:
    """A wrong arc all members share has share 1: only the detector's flag gets it a human."""
    rng = np.random.default_rng(3)
    shared_errors = 0
    for gold in sentences:
        wrong = _perturbed(gold, rng, 2)  # every member makes the same two errors ...
        other = _perturbed(gold, rng, 1)
        members = [wrong, wrong, other]
        weights = [1.0, 1.0, 1.0]
        ensemble = combine_votes(members, weights)
        errors = np.array([False, *[(ensemble.heads[d], ensemble.deprels[d])
                                    != (gold.heads[d], gold.deprels[d]) for d in range(1, len(gold) + 1)]])
        p_wrong = np.where(errors[1:], 0.9, 0.05)  # ... which a perfect detector sees
        tree, touched = partial_tree(gold, members, ensemble, weights, threshold, p_wrong=p_wrong,
                                     min_p_wrong=0.5)
        below = (doubtful_words(members, ensemble, weights, threshold) if threshold is not None
                 else np.zeros(len(errors), dtype=bool))
        assert touched.tolist() == (below | errors).tolist()
        assert touched.tolist() == words_to_touch(members, ensemble, weights, threshold, p_wrong=p_wrong,
                                                  min_p_wrong=0.5).tolist()
        shared_errors += int((errors & ~below).sum())
        # every wrong arc was touched, so the partial tree is the gold tree wherever it is marked
        # and every unmarked arc was right already: the whole tree is gold
        assert is_tree(tree.heads) and np.array_equal(tree.heads, gold.heads)
        assert tree.deprels == gold.deprels and tree.annotated.tolist() == touched.tolist()
    assert shared_errors > 0  # the flags found errors below no threshold


def test_detector_flags_are_checked(sentences: list[Sentence]) -> None:
    gold = sentences[0]
    same = Parse(gold.heads.copy(), list(gold.deprels))
    n = len(gold)
    assert flagged_words(np.linspace(0, 1, n), 1.0).tolist() == [False] * n + [True]
    with pytest.raises(ValueError, match="go together"):
        words_to_touch([same], same, [1.0], 0.8, p_wrong=np.zeros(n))
    with pytest.raises(ValueError, match="go together"):
        words_to_touch([same], same, [1.0], 0.8, min_p_wrong=0.5)
    with pytest.raises(ValueError, match="needs a share threshold, the detector's flags or both"):
        partial_tree(gold, [same], same, [1.0], None)
    with pytest.raises(ValueError, match=f"p_wrong has {n - 1} scores for a sentence of {n} words"):
        words_to_touch([same], same, [1.0], None, p_wrong=np.zeros(n - 1), min_p_wrong=0.5)
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
        flagged_words(np.zeros(n), 0.0)
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        flagged_words(np.full(n, np.nan), 0.5)
    with pytest.raises(ValueError, match="shape"):
        flagged_words(np.zeros((n, 2)), 0.5)


def _members_and_ensembles(sentences: list[Sentence]) -> tuple[list[list[Parse]], list[Parse]]:
    rng = np.random.default_rng(11)
    members = [[_perturbed(gold, rng, flips) for flips in (1, 2, 3)] for gold in sentences]
    return members, [combine_votes(parses, [1.0, 1.0, 1.0]) for parses in members]


def _forcing(members: list[list[Parse]], ensembles: list[Parse], calls: list[list[Constraints]]):  # noqa: ANN202
    """A re-parse whose members change nothing but the forced arcs (no propagation)."""
    def reparse(indices, constraints):  # noqa: ANN001, ANN202
        calls.append(list(constraints))
        again = [[finish_parse(p, c) for p in members[i]] for i, c in zip(indices, constraints, strict=True)]
        trees = [force_combined(ensembles[i], parses, [1.0, 1.0, 1.0], c)
                 for i, parses, c in zip(indices, again, constraints, strict=True)]
        return again, trees
    return reparse


def test_interactive_partial_touches_one_word_at_a_time_lowest_share_first(sentences: list[Sentence]) -> None:
    members, ensembles = _members_and_ensembles(sentences)
    calls: list[list[Constraints]] = []
    results = interactive_partial_trees(sentences, members, ensembles, [1.0, 1.0, 1.0], 0.8,
                                        _forcing(members, ensembles, calls))
    first_step = {len(c) for c in calls[0]}
    assert first_step == {1}  # one word per sentence per step
    first = calls[0]
    stepped = [i for i, parses in enumerate(members)
               if doubtful_words(parses, ensembles[i], [1.0, 1.0, 1.0], 0.8).any()]
    assert len(first) == len(stepped)
    for i, forced in zip(stepped, first, strict=True):
        (word,) = forced.heads
        share = labelled_share(members[i], ensembles[i], [1.0, 1.0, 1.0])[1:]
        assert word == 1 + int(np.argmin(share))
        assert forced.heads[word] == sentences[i].heads[word]
        assert forced.labels[word] == sentences[i].deprels[word]
    for gold, (tree, touched) in zip(sentences, results, strict=True):
        assert is_tree(tree.heads) and not touched[0]
        assert tree.annotated is not None and tree.annotated.tolist() == touched.tolist()
        for dep in np.flatnonzero(touched):
            assert tree.heads[dep] == gold.heads[dep] and tree.deprels[dep] == gold.deprels[dep]


def test_interactive_partial_leaves_no_doubtful_word_and_rereads_the_shares(
        sentences: list[Sentence]) -> None:
    members, ensembles = _members_and_ensembles(sentences)
    def agreeing(indices, constraints):  # noqa: ANN001, ANN202
        """Members that all follow the gold tree once a human arc is set: perfect propagation."""
        again = [[Parse(sentences[i].heads.copy(), list(sentences[i].deprels))] * 3 for i in indices]
        return again, [parses[0] for parses in again]

    results = interactive_partial_trees(sentences, members, ensembles, [1.0, 1.0, 1.0], 0.8, agreeing)
    for i, (tree, touched) in enumerate(results):
        doubtful = doubtful_words(members[i], ensembles[i], [1.0, 1.0, 1.0], 0.8)
        assert touched.sum() == int(doubtful.any())  # one touch, and the re-read shares spare the rest
        assert np.array_equal(tree.heads, sentences[i].heads) or not doubtful.any()
    calls: list[list[Constraints]] = []
    forced = interactive_partial_trees(sentences, members, ensembles, [1.0, 1.0, 1.0], 0.8,
                                       _forcing(members, ensembles, calls))
    for (tree, touched), parses in zip(forced, members, strict=True):
        final = [finish_parse(p, Constraints.from_tree(tree.heads, tree.deprels, np.flatnonzero(touched)))
                 for p in parses]
        share = labelled_share(final, Parse(tree.heads, list(tree.deprels)), [1.0, 1.0, 1.0])
        assert not ((share < 0.8) & ~touched)[1:].any()  # nothing doubtful left untouched
    with pytest.raises(ValueError, match="threshold"):
        interactive_partial_trees(sentences, members, ensembles, [1.0, 1.0, 1.0], 1.5, agreeing)


def test_refill_keeps_the_human_arcs_and_takes_the_newer_parses_elsewhere(sentences: list[Sentence]) -> None:
    rng = np.random.default_rng(5)
    refilled = 0
    for gold in sentences[:30]:
        old = [_perturbed(gold, rng, flips) for flips in (2, 3, 4)]
        tree, touched = partial_tree(gold, old, combine_votes(old, [1.0, 1.0, 1.0]), [1.0, 1.0, 1.0], 0.8)
        if not tree.partial:
            continue
        newer = [_perturbed(gold, rng, flips) for flips in (0, 0, 1)]
        ensemble = combine_votes(newer, [1.0, 1.0, 1.0])
        again = refill(tree, newer, ensemble, [1.0, 1.0, 1.0])
        refilled += 1
        assert is_tree(again.heads)
        assert again.annotated is not None and again.annotated.tolist() == touched.tolist()
        for dep in np.flatnonzero(touched):  # the person's arcs stay
            assert (again.heads[dep], again.deprels[dep]) == (gold.heads[dep], gold.deprels[dep])
        if is_tree(np.where(touched, gold.heads, ensemble.heads)):  # the newer ensemble's elsewhere
            free = np.flatnonzero(~touched)[1:]
            assert np.array_equal(again.heads[free], ensemble.heads[free])
            assert [again.deprels[d] for d in free] == [ensemble.deprels[d] for d in free]
    assert refilled >= 20
    whole = sentences[0]
    same = Parse(whole.heads.copy(), list(whole.deprels))
    with pytest.raises(ValueError, match="partial tree"):
        refill(whole, [same] * 3, same, [1.0, 1.0, 1.0])
