"""parsing.scorer.compare and the bar chart: oracle, agreement, unique arcs, confusion, differences."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from parsing.charts import bar_chart_svg
from parsing.scorer.breakdowns import ARC_DIRECTION_BUCKETS, by_arc_direction
from parsing.scorer.compare import (
    agreement,
    best_per_row,
    differences,
    label_confusion,
    oracle_parses,
    unique_correct,
)
from parsing.scorer.metrics import arc_table, evaluate
from parsing.types import Parse, Sentence

GOLD = [
    Sentence.from_words(["the", "dog", "barks"], upos=["DET", "NOUN", "VERB"], heads=[2, 3, 0],
                        deprels=["det", "nsubj", "root"]),
    Sentence.from_words(["run", "!"], upos=["VERB", "PUNCT"], heads=[0, 1], deprels=["root", "punct"]),
]


def parse(heads: list[int], deprels: list[str]) -> Parse:
    return Parse(heads=np.array([-1, *heads]), deprels=["", *deprels])


# A: "the" attached to "barks" (head wrong), sentence 2 right
A = [parse([3, 3, 0], ["det", "nsubj", "root"]), parse([0, 1], ["root", "punct"])]
# B: "dog" labelled obj:x (label wrong), "!" attached to ROOT (head wrong)
B = [parse([2, 3, 0], ["det", "obj:x", "root"]), parse([0, 0], ["root", "root"])]


def test_oracle_counts_a_word_right_when_any_system_is() -> None:
    oracle = oracle_parses(GOLD, [A, B])
    result = evaluate(GOLD, oracle)
    # every head is right in A or B; every arc too except none: "dog" right in A, "the" in B
    assert result.uas.correct == 5 and result.las.correct == 5
    assert evaluate(GOLD, A).las.correct == 4 and evaluate(GOLD, B).las.correct == 3


def test_oracle_refuses_misaligned_systems() -> None:
    with pytest.raises(ValueError, match="sentence 2"):
        oracle_parses(GOLD, [[A[0], parse([0], ["root"])]])


def test_agreement_counts_heads_and_universal_labels() -> None:
    result = agreement(A, B)
    # heads equal: dog, barks, run (3 of 5); labels equal among them: barks, run ("obj:x" vs nsubj differ)
    assert (result.words, result.same_head, result.same_arc) == (5, 3, 2)
    assert result.unlabelled == pytest.approx(0.6)


def test_unique_correct_arcs() -> None:
    tables = {"A": arc_table(GOLD, A), "B": arc_table(GOLD, B)}
    # A alone: "!" head (B wrong) -> heads 1; arcs: dog (B label wrong), "!" -> 2
    # B alone: "the" head and arc
    assert unique_correct(tables) == {"A": (1, 2), "B": (1, 1)}


def test_label_confusion_counts_every_word_on_universal_labels() -> None:
    confusion = label_confusion(GOLD, B)
    assert confusion[("nsubj", "obj")] == 1
    assert confusion[("punct", "root")] == 1
    assert confusion[("root", "root")] == 2
    assert sum(confusion.values()) == 5


def test_differences_list_sentences_and_counts() -> None:
    found = differences(A, B)
    assert [(d.index, d.heads, d.labels) for d in found] == [(0, 1, 1), (1, 1, 0)]
    assert differences(A, A) == []


def test_best_per_row_ignores_thin_support() -> None:
    table = {"NOUN": {"a": 90.0, "b": 100.0}}
    assert best_per_row(table) == {"NOUN": {"b"}}
    assert best_per_row(table, min_words=5, words={"NOUN": {"a": 10, "b": 2}}) == {"NOUN": {"a"}}


def test_arc_direction_buckets_sum_to_the_total() -> None:
    table = arc_table(GOLD, A)
    buckets = by_arc_direction(table)
    assert list(buckets) == list(ARC_DIRECTION_BUCKETS)
    assert sum(b.words for b in buckets.values()) == 5
    assert buckets["root"].words == 2 and buckets["right 1"].words == 2  # the->dog, dog->barks
    assert buckets["right 2"].words == 0 and buckets["left 1"].words == 1  # "!" -> run
    assert buckets["right 1"].uas_correct == 1  # "the" wrong in A


def test_bar_chart_is_valid_escaped_svg_with_a_bar_per_value() -> None:
    svg = bar_chart_svg({"UAS": {"<a>": 80.0, "b": None}, "LAS": {"<a>": 70.0, "b": 60.0}},
                        title="Scores & more", y_label="%", highlight="b")
    root = ET.fromstring(svg)
    bars = [rect for group in root.iter("{http://www.w3.org/2000/svg}g")
            if group.get("class") == "bar-group" for rect in group.iter("{http://www.w3.org/2000/svg}rect")]
    assert len(bars) == 3  # b has no UAS
    tips = sorted(rect.findtext("{http://www.w3.org/2000/svg}title") or "" for rect in bars)
    assert tips == ["<a>, LAS: 70", "<a>, UAS: 80", "b, LAS: 60"]
    assert "no data" in bar_chart_svg({"UAS": {"a": None}}, title="t", y_label="%")


def test_bar_chart_colours_a_series_alike_in_every_chart() -> None:
    colours = {"a": "#111111", "b": "#222222"}
    one = bar_chart_svg({"UAS": {"a": 1.0, "b": 2.0}}, title="t", y_label="%", colours=colours)
    two = bar_chart_svg({"NOUN": {"b": 2.0}}, title="t", y_label="%", colours=colours)
    assert 'fill="#222222"><title>b, UAS' in one and 'fill="#222222"><title>b, NOUN' in two
    assert 'fill="#0072B2"><title>b, NOUN' in bar_chart_svg({"NOUN": {"b": 2.0}}, title="t", y_label="%")
