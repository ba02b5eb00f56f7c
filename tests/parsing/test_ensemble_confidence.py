"""Confidence and disagreement: vote share, entropy, agreement, ranking, calibration."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parsing.ensemble.confidence import (
    calibration,
    calibration_report,
    corpus_confidence,
    head_entropy,
    heads_agree,
    labels_agree,
    rank_for_annotation,
    sentence_confidence,
)
from parsing.ensemble.voting import combine_votes
from parsing.types import Parse, Sentence

HEADS = np.array([[-1, 2, 0, 2], [-1, 2, 0, 1], [-1, 3, 0, 0]])
LABELS = [["", "nsubj", "root", "obj"], ["", "nsubj", "root", "obj"], ["", "obl", "root", "obj"]]


def test_vote_share_entropy_and_agreement() -> None:
    conf = sentence_confidence(HEADS, LABELS, [1.0, 1.0, 2.0], [-1, 2, 0, 2], ["", "nsubj", "root", "obj"],
                               forms=["<ROOT>", "a", "b", "c"], sent_id="x", index=3)
    t1, t2, t3 = conf.tokens
    assert [t.vote_share for t in conf.tokens] == [0.5, 1.0, 0.25]
    assert t1.member_heads == (2, 2, 3) and t1.member_deprels == ("nsubj", "nsubj", "obl")
    assert t1.entropy == pytest.approx(1.0)  # two heads, half the weight each
    assert t2.entropy == 0.0 and t2.heads_agree and t2.labels_agree
    assert t3.entropy == pytest.approx(1.5)  # 1/4, 1/4, 1/2
    assert not t1.heads_agree and not t3.heads_agree
    assert conf.disagreement == pytest.approx((0.5 + 0.0 + 0.75) / 3)
    assert conf.expected_errors == pytest.approx(1.25) and conf.disagreeing_words == 2
    assert json.loads(json.dumps(conf.to_dict()))["tokens"][0]["form"] == "a"


def test_entropy_is_log_of_members_when_all_differ() -> None:
    entropy = head_entropy([[-1, 0, 1, 1], [-1, 2, 0, 2], [-1, 3, 3, 0], [-1, 0, 1, 4]], np.ones(4))
    assert np.isnan(entropy[0])
    np.testing.assert_allclose(entropy[1:], [1.5, 1.5, 2.0])


def test_labels_agree_needs_same_head_and_label() -> None:
    heads = [[-1, 0, 1], [-1, 0, 1]]
    assert labels_agree(heads, [["", "root", "obj"], ["", "root", "nsubj"]]).tolist() == [True, True, False]
    assert heads_agree(heads).tolist() == [True, True, True]


def test_disagreement_ranking_order() -> None:
    def sent(i: int, n: int) -> Sentence:
        return Sentence.from_words(["w"] * n, sent_id=f"s{i}")

    corpus = [sent(0, 2), sent(1, 2), sent(2, 3), sent(3, 2)]
    members = [
        [Parse(np.array([-1, 0, 1]), [""] * 3), Parse(np.array([-1, 2, 0]), [""] * 3),
         Parse(np.array([-1, 0, 1, 1]), [""] * 4), Parse(np.array([-1, 0, 1]), [""] * 3)],
        [Parse(np.array([-1, 0, 1]), [""] * 3), Parse(np.array([-1, 0, 1]), [""] * 3),
         Parse(np.array([-1, 0, 1, 2]), [""] * 4), Parse(np.array([-1, 0, 1]), [""] * 3)],
        [Parse(np.array([-1, 0, 1]), [""] * 3), Parse(np.array([-1, 2, 0]), [""] * 3),
         Parse(np.array([-1, 2, 3, 0]), [""] * 4), Parse(np.array([-1, 2, 0]), [""] * 3)],
    ]
    ensemble = [combine_votes([m[i] for m in members], np.ones(3)) for i in range(4)]
    conf = corpus_confidence(corpus, ensemble, members)
    assert conf[0].disagreement == 0.0
    assert conf[1].disagreement == pytest.approx(1 / 3) and conf[3].disagreement == pytest.approx(1 / 3)
    assert conf[2].disagreement == pytest.approx(4 / 9)
    assert rank_for_annotation(conf) == [2, 1, 3, 0]  # ties in corpus order, unanimous last


def test_calibration_buckets() -> None:
    buckets = calibration([0.0, 0.2, 0.3, 0.6 + 1e-12, 0.61, 1.0, 1.0, 1.0], [0, 1, 1, 0, 1, 1, 1, 0])
    assert [(b.lower, b.upper) for b in buckets][:2] == [(0.0, 0.2), (0.2, 0.4)]
    assert [b.words for b in buckets] == [2, 1, 1, 1, 3]
    assert [b.correct for b in buckets] == [1, 1, 0, 1, 2]
    assert buckets[4].accuracy == pytest.approx(2 / 3)
    empty = calibration([1.0], [1], edges=(0.0, 0.5, 1.0))[0]
    assert empty.accuracy is None and json.dumps(empty.to_dict())
    with pytest.raises(ValueError):
        calibration([0.5], [1], edges=(0.5,))


def test_calibration_report_on_dev() -> None:
    gold = [Sentence.from_words(["a", "b"], heads=[2, 0]), Sentence.from_words(["c", "d"], heads=[0, 1])]
    right = [Parse(np.array([-1, 2, 0]), [""] * 3), Parse(np.array([-1, 0, 1]), [""] * 3)]
    wrong = [Parse(np.array([-1, 0, 1]), [""] * 3), Parse(np.array([-1, 0, 1]), [""] * 3)]
    members = [right, right, wrong]
    ensemble = [combine_votes([m[i] for m in members], np.ones(3)) for i in range(2)]
    report = calibration_report(gold, ensemble, members)
    # sentence 0: 2/3 agree on the right heads; sentence 1: unanimous and right
    assert [(b.words, b.correct) for b in report] == [(0, 0), (0, 0), (0, 0), (2, 2), (2, 2)]
