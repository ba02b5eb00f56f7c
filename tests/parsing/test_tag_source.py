"""Whose UPOS the members parse with (predicted tags): the tagger's, or the self-tagging member's when
it tags dev better (:mod:`parsing.tag_source`, the manifest's ``tag_source``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from parsing.plan import TrainingPlan
from parsing.tag_source import (
    THRESHOLDS,
    choose_tag_source,
    combined_upos,
    member_upos,
    upos_accuracy,
    with_member_upos,
)
from parsing.types import Parse, Sentence
from tests.parsing.biaffine_data import TINY, short_sentences


def _parse(tags: list[str], sure: list[float] | None = None) -> Parse:
    size = len(tags)
    extras: dict[str, object] = {"upos": ["<ROOT>", *tags]}
    if sure is not None:
        extras["upos_p"] = [float("nan"), *sure]
    return Parse(np.array([-1, 0] + [1] * (size - 1)), ["", "root"] + ["dep"] * (size - 1), extras=extras)


def test_the_member_is_chosen_only_when_it_tags_dev_strictly_better() -> None:
    gold = [Sentence.from_words(["a", "b", "c"], heads=[0, 1, 1], upos=["NOUN", "VERB", "ADJ"])]
    tagger = [Sentence.from_words(["a", "b", "c"], heads=[0, 1, 1], upos=["NOUN", "VERB", "NOUN"])]
    better, equal = _parse(["NOUN", "VERB", "ADJ"]), _parse(["NOUN", "NOUN", "ADJ"], [1.0, 1.0, 1.0])
    choice = choose_tag_source(gold, tagger, "biaffine", [better])
    assert choice.source == "biaffine" and choice.threshold == 0.0
    assert choice.dev_upos == {"tagger": pytest.approx(2 / 3), "biaffine": 1.0, "combined": 1.0}
    assert choose_tag_source(gold, tagger, "biaffine", [equal]).source is None  # a tie keeps the tagger
    assert choose_tag_source(gold, tagger, "biaffine", [better], "tagger").source is None
    with pytest.raises(ValueError, match="tag_source is one of auto, tagger"):
        choose_tag_source(gold, tagger, "biaffine", [better], "member")


def test_where_the_member_is_unsure_the_tagger_tags_and_dev_picks_that_threshold() -> None:
    """The member right where sure and wrong where unsure, the tagger the other way round: the
    combination beats both on dev and keeps each one's tags where it is right."""
    gold = [Sentence.from_words(list("abcd"), heads=[0, 1, 1, 1], upos=["NOUN", "VERB", "ADJ", "ADV"])]
    tagger = [Sentence.from_words(list("abcd"), heads=[0, 1, 1, 1], upos=["X", "X", "ADJ", "ADV"])]
    member = _parse(["NOUN", "VERB", "X", "X"], [0.99, 0.97, 0.55, 0.72])
    choice = choose_tag_source(gold, tagger, "biaffine", [member])
    assert choice.source == "biaffine"
    assert choice.dev_upos == {"tagger": 0.5, "biaffine": 0.5, "combined": 1.0}
    assert 0.72 < choice.threshold <= 0.97 and choice.threshold == min(
        t for t in THRESHOLDS if 0.72 < t <= 0.97)  # the lowest of the equally good
    assert with_member_upos(tagger, [member], choice.threshold)[0].upos == gold[0].upos
    assert combined_upos(tagger[0], member) == member_upos(member)  # threshold 0: the member everywhere
    bundle_like = with_member_upos(tagger, [member])[0].upos
    assert bundle_like == ["<ROOT>", "NOUN", "VERB", "X", "X"]


def test_member_tags_replace_only_upos_and_refuse_what_does_not_fit() -> None:
    sentence = replace(Sentence.from_words(["a", "b"], heads=[0, 1], upos=["X", "X"]),
                       xpos=["<ROOT>", "x1", "x2"])
    tagged = with_member_upos([sentence], [_parse(["NOUN", "VERB"])])[0]
    assert tagged.upos == ["<ROOT>", "NOUN", "VERB"] and tagged.xpos == sentence.xpos
    assert tagged.forms == sentence.forms and list(tagged.heads) == list(sentence.heads)
    with pytest.raises(ValueError, match="sentence 1: the parse has 3 words"):
        with_member_upos([sentence], [_parse(["NOUN", "VERB", "ADJ"])])
    with pytest.raises(ValueError, match="no UPOS of its own"):
        member_upos(Parse(np.array([-1, 0]), ["", "root"]))
    assert upos_accuracy([], []) == 0.0


def test_the_plan_checks_the_setting_before_training() -> None:
    plan = TrainingPlan.from_options(names=["graph1"], tags="predicted",
                                     params={"tagger": {"tag_source": "tagger"}})
    assert plan.tagger_settings == {"tag_source": "tagger"}
    with pytest.raises(ValueError, match="tag_source is one of"):
        TrainingPlan.from_options(names=["graph1"], tags="predicted", params={"tagger": {"tag_source": "x"}})


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Sentence]]:
    """graph1 and a tiny biaffine member trained with predicted tags (the tagger barely trained, so
    the member's dev UPOS beats it), and the dev sentences."""
    pytest.importorskip("torch")
    from parsing.pipeline import train_models

    sentences = short_sentences("af", 900, 70)
    train, dev = sentences[:55], sentences[55:]
    out = tmp_path_factory.mktemp("tag-source")
    train_models(train, dev, out, names=["graph1", "biaffine"], tags="predicted", ensemble="vote-uniform",
                 params={"biaffine": {**TINY, "max_epochs": 25}, "tagger": {"max_iter": 1},
                         "graph1": {"max_iter": 2}})
    return out, dev


def test_a_round_records_both_dev_accuracies_and_picks_the_better(
        trained: tuple[Path, list[Sentence]]) -> None:
    from parsing.pipeline import load_models

    out, dev = trained
    manifest = json.loads((out / "manifest.json").read_text())
    bundle = load_models(out)
    own = bundle.parsers["biaffine"].predict(dev)
    tagger_view = bundle.tagger.tag_for_parsing(dev)  # type: ignore[attr-defined]
    threshold = manifest["upos_threshold"]
    assert threshold in THRESHOLDS and bundle.upos_threshold == threshold
    expected = {"tagger": upos_accuracy(dev, [s.upos for s in tagger_view]),
                "biaffine": upos_accuracy(dev, [member_upos(p) for p in own]),
                "combined": upos_accuracy(dev, [s.upos for s in
                                                with_member_upos(tagger_view, own, threshold)])}
    assert manifest["dev_upos"] == pytest.approx(expected)
    assert expected["combined"] >= expected["biaffine"] > expected["tagger"]  # the setting of this fixture
    assert manifest["tag_source"] == "biaffine" and bundle.tag_source == "biaffine"


def test_the_others_parse_with_the_members_tags_and_it_parses_once(trained: tuple[Path, list[Sentence]],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from parsing.pipeline import load_models

    out, dev = trained
    bundle = load_models(out)
    member = bundle.parsers["biaffine"]
    calls = []
    original = member.predict
    monkeypatch.setattr(member, "predict",
                        lambda sentences: calls.append(len(sentences)) or original(sentences))
    members, trees = bundle.parse_with_ensemble(dev)
    assert calls == [len(dev)]  # tagging and parsing share one run of the member
    tagger_tags = bundle.tagger.tag_for_parsing(dev)  # type: ignore[attr-defined]
    for number, sentence in enumerate(dev):
        own = combined_upos(tagger_tags[number], members["biaffine"][number], bundle.upos_threshold)
        assert members["graph1"][number].upos == own and trees[number].upos == own
        assert bundle.prepare([sentence])[0].upos == own
    bundle.tag_source = None  # the tagger's tags again
    assert bundle.parse(dev, ["graph1"])["graph1"][0].upos == tagger_tags[0].upos


def test_a_reparse_reads_the_tags_from_the_free_parse(trained: tuple[Path, list[Sentence]],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from parsing.constraints import Constraints
    from parsing.pipeline import load_models

    out, dev = trained
    bundle = load_models(out)
    free = bundle.parse_with_ensemble(dev[:1])
    member = bundle.parsers["biaffine"]
    seen: list[list[Sentence]] = []
    original = member.predict_constrained  # type: ignore[attr-defined]

    def spy(sentences, constraints, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(list(sentences))
        return original(sentences, constraints, *args, **kwargs)

    monkeypatch.setattr(member, "predict_constrained", spy)
    monkeypatch.setattr(member, "predict", lambda sentences: pytest.fail("the free parse is known"))
    forced = Constraints(heads={1: 0})
    members, trees = bundle.parse_constrained(dev[:1], [forced], unconstrained=free)
    assert trees[0].heads[1] == 0
    assert members["graph1"][0].upos == member_upos(free[0]["biaffine"][0])
