"""Training tags from the self-tagging member's own folds (:mod:`parsing.member_folds`, the tagger
setting ``member_folds``): the folds, the tags they give, and a round that trains on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.member_folds import FOLD_DIR, fold_jobs, jackknifed_parses
from parsing.plan import TrainingPlan
from parsing.tag_source import upos_accuracy, with_upos
from parsing.types import Parse, Sentence
from tests.parsing.biaffine_data import TINY, short_sentences


def _tagged(tags: list[str]) -> Parse:
    return Parse(np.array([-1, 0] + [1] * (len(tags) - 1)), ["", "root"] + ["dep"] * (len(tags) - 1),
                 extras={"upos": ["<ROOT>", *tags]})


def test_the_plan_refuses_bad_fold_settings_before_training() -> None:
    plan = TrainingPlan.from_options(names=["graph1"], tags="predicted",
                                     params={"tagger": {"member_folds": 3, "member_fold_seconds": 60}})
    assert plan.tagger_settings == {"member_folds": 3, "member_fold_seconds": 60}
    for bad in (1, -2, 2.5, "3", True):
        with pytest.raises(ValueError, match="member_folds is 0 \\(off\\) or a number of folds >= 2"):
            TrainingPlan.from_options(names=["graph1"], tags="predicted",
                                      params={"tagger": {"member_folds": bad}})
    with pytest.raises(ValueError, match="member_fold_seconds is a positive number"):
        TrainingPlan.from_options(names=["graph1"], tags="predicted",
                                  params={"tagger": {"member_fold_seconds": 0}})


def test_each_fold_trains_on_the_others_and_the_folds_cover_every_sentence(tmp_path: Path) -> None:
    sentences = short_sentences("af", 40, 20)
    jobs, held_out = fold_jobs("biaffine", sentences, None, tmp_path, folds=3, random_state=5,
                               params={"hidden": 8, "max_seconds": 900}, fold_seconds=30)
    assert sorted(i for fold in held_out for i in fold) == list(range(len(sentences)))
    for fold, (job, indices) in enumerate(zip(jobs, held_out, strict=True)):
        kept = {id(s) for s in job.train}
        assert not kept & {id(sentences[i]) for i in indices}
        assert len(job.train) + len(indices) == len(sentences)
        assert job.params == {"hidden": 8, "max_seconds": 30}  # the fold's own time budget
        assert job.path == tmp_path / FOLD_DIR / f"biaffine-{fold}.model"


def test_jackknifed_tags_come_from_the_fold_that_held_each_sentence_out() -> None:
    found = jackknifed_parses(3, [[2, 0], [1]], [[_tagged(["C"]), _tagged(["A"])], [_tagged(["B"])]])
    assert [parse.extras["upos"] for parse in found] == [["<ROOT>", "A"], ["<ROOT>", "B"], ["<ROOT>", "C"]]
    with pytest.raises(ValueError, match="no fold tagged sentence 2"):
        jackknifed_parses(2, [[0]], [[_tagged(["A"])]])
    with pytest.raises(ValueError, match="sentence 1 is in more than one fold"):
        jackknifed_parses(1, [[0], [0]], [[_tagged(["A"])], [_tagged(["B"])]])
    with pytest.raises(ValueError, match="fold 0: 2 parses for 1 sentences"):
        jackknifed_parses(1, [[0]], [[_tagged(["A"]), _tagged(["B"])]])
    sentence = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["X", "X"])
    assert with_upos([sentence], [["<ROOT>", "N", "V"]])[0].upos == ["<ROOT>", "N", "V"]
    with pytest.raises(ValueError, match="sentence 1: 1 tags for 2 words"):
        with_upos([sentence], [["<ROOT>", "N"]])


def test_a_round_trains_the_others_on_the_members_jackknifed_tags(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import parsing.pipeline as pipeline

    sentences = short_sentences("af", 900, 70)
    train, dev = sentences[:55], sentences[55:]
    fitted: list[Any] = []
    original = pipeline.fit_member

    def spy(job: Any) -> Any:
        fitted.append(job)
        if FOLD_DIR in str(job.path):
            assert job.params["max_seconds"] == 120
        return original(job)

    monkeypatch.setattr(pipeline, "fit_member", spy)
    pipeline.train_models(train, dev, tmp_path, names=["graph1", "biaffine"], tags="predicted",
                          ensemble="vote-uniform",
                          params={"biaffine": {**TINY, "max_epochs": 25}, "graph1": {"max_iter": 2},
                                  "tagger": {"max_iter": 1, "member_folds": 2, "member_fold_seconds": 120}})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["tag_source"] == "biaffine"  # the barely trained tagger loses (as in test_tag_source)
    # the member first, then its two folds, then the others
    assert [(job.name, FOLD_DIR in str(job.path)) for job in fitted] == [
        ("biaffine", False), ("biaffine", True), ("biaffine", True), ("graph1", False)]
    assert sorted(len(job.train) for job in fitted[1:3]) == [27, 28]
    graph1 = fitted[3]
    folds = manifest["member_folds"]
    assert folds["folds"] == 2 and folds["train_upos"]["biaffine"] == pytest.approx(
        upos_accuracy(train, [s.upos for s in graph1.train]))
    assert [s.upos for s in graph1.train] != [s.upos for s in train]  # predicted, not gold
    bundle = pipeline.load_models(tmp_path)
    assert [s.upos for s in graph1.dev] == [s.upos for s in bundle.prepare(dev)]  # tuned on dev as parsed
    assert not (tmp_path / FOLD_DIR).exists() and "biaffine" in manifest["train_seconds"]
