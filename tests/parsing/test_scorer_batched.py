"""The scorer's batched and vectorised paths (issue #30: scoreboard and compare pages on 10,000 words)
give what the one-at-a-time functions and a plain per-word count give."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from parsing.scorer.compare import (
    agreement,
    agreement_matrix,
    differences,
    label_confusion,
    oracle_parses,
    oracle_table,
    pair_report,
)
from parsing.scorer.intervals import bootstrap_interval, bootstrap_intervals
from parsing.scorer.metrics import arc_table, arc_tables, evaluate, evaluate_table, universal
from parsing.scorer.significance import compare, compare_tables, resample_counts
from parsing.types import Parse, Sentence

LABELS = ["nsubj", "obj", "nmod:poss", "nmod", "punct", "root", "det", "acl:relcl", "_"]


def treebank(seed: int, sentences: int = 60, systems: int = 3) -> tuple[list[Sentence], list[list[Parse]]]:
    """Random gold trees and ``systems`` damaged copies (heads and labels changed at random)."""
    rng = np.random.default_rng(seed)
    gold: list[Sentence] = []
    parses: list[list[Parse]] = [[] for _ in range(systems)]
    for _ in range(sentences):
        n = int(rng.integers(1, 20))
        heads = rng.integers(0, n + 1, n).tolist()
        deprels = [str(rng.choice(LABELS)) for _ in range(n)]
        gold.append(Sentence.from_words([f"w{i}" for i in range(n)], heads=heads, deprels=deprels,
                                        upos=[str(rng.choice(["NOUN", "VERB", "PUNCT"])) for _ in range(n)]))
        for system in parses:
            moved = [h if rng.random() < 0.7 else int(rng.integers(0, n + 1)) for h in heads]
            relabelled = [r if rng.random() < 0.8 else str(rng.choice(LABELS)) for r in deprels]
            system.append(Parse(heads=np.array([-1, *moved]), deprels=["", *relabelled]))
    return gold, parses


def per_word(first: list[Parse], second: list[Parse]) -> tuple[int, int, Counter[tuple[str, str]], list[int]]:
    """Same heads, same arcs, label pairs and differing sentences counted word by word."""
    same_head = same_arc = 0
    pairs: Counter[tuple[str, str]] = Counter()
    differ = []
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        other = False
        for word in range(1, len(a) + 1):
            labels = universal(a.deprels[word]), universal(b.deprels[word])
            pairs[labels] += 1
            same_head += int(a.heads[word] == b.heads[word])
            same_arc += int(a.heads[word] == b.heads[word] and labels[0] == labels[1])
            other = other or a.heads[word] != b.heads[word] or labels[0] != labels[1]
        if other:
            differ.append(index)
    return same_head, same_arc, pairs, differ


@pytest.mark.parametrize("seed", [0, 1])
def test_pair_report_counts_what_a_word_by_word_count_counts(seed: int) -> None:
    _, (a, b, _) = treebank(seed)
    same_head, same_arc, pairs, differ = per_word(a, b)
    report = pair_report(a, b)
    assert (report.agreement.same_head, report.agreement.same_arc) == (same_head, same_arc)
    assert report.confusion == pairs == label_confusion(a, b)
    assert [d.index for d in report.differences] == differ == [d.index for d in differences(a, b)]
    assert report.agreement == agreement(a, b) == agreement_matrix({"a": a, "b": b})[("b", "a")]


def test_batched_tables_and_oracle_match_the_one_at_a_time_functions() -> None:
    gold, systems = treebank(2)
    tables = arc_tables(gold, systems)
    for system, table in zip(systems, tables, strict=True):
        alone = arc_table(gold, system)
        assert all(np.array_equal(getattr(table, f), getattr(alone, f)) for f in
                   ("sentence", "position", "gold_heads", "system_heads", "gold_deprels", "system_deprels"))
        assert evaluate_table(table) == evaluate(gold, system)
    oracle = oracle_table(tables)
    assert evaluate_table(oracle) == evaluate(gold, oracle_parses(gold, systems))
    assert evaluate_table(oracle).uas.correct == int(np.any([t.head_correct for t in tables], axis=0).sum())
    punct = arc_tables(gold, systems, exclude_punct=True)[1]
    assert evaluate_table(punct, exclude_punct=True) == evaluate(gold, systems[1], exclude_punct=True)


def test_intervals_and_tests_of_several_scores_are_those_of_each_alone() -> None:
    gold, (a, b, _) = treebank(3)
    words = np.bincount(arc_table(gold, a).sentence, minlength=len(gold))
    rows = np.stack([np.bincount(t.sentence[t.label_correct], minlength=len(gold))
                     for t in arc_tables(gold, [a, b])])
    assert bootstrap_intervals(rows, words) == [bootstrap_interval(row, words) for row in rows]
    batched = compare_tables(*arc_tables(gold, [a, b]), resamples=500, seed=4)
    assert batched == compare(gold, a, b, resamples=500, seed=4)
    with pytest.raises(ValueError, match="shape"):
        bootstrap_intervals(rows[:, :-1], words)


def test_resample_counts_draw_each_sentence_once_on_average() -> None:
    counts = resample_counts(np.random.default_rng(0), 50, 2000)
    assert counts.shape == (2000, 50) and (counts.sum(axis=1) == 50).all()
    assert abs(counts.mean(axis=0) - 1).max() < 0.1  # uniform over sentences
    assert 0.9 < counts.var(axis=0).mean() / (1 - 1 / 50) < 1.1  # the multinomial's variance
