"""The biaffine member in the pipeline and without PyTorch: registration, the tag modes (gold tags as
inputs; predicted tags: its own, from gold training targets), and a clear error without torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsing.members import EXTRA_MEMBERS, MEMBERS, is_self_tagging, tag_mode_params
from tests.parsing.biaffine_data import import_without_torch
from tests.parsing.conftest import UD_ROOT

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"
SMALL = {"word_dim": 16, "char_dim": 8, "char_hidden": 8, "hidden": 16, "layers": 1, "arc_dim": 16,
         "label_dim": 8, "max_epochs": 1}


def test_registered_as_a_named_extra_member_that_tags_itself() -> None:
    assert "biaffine" in EXTRA_MEMBERS and "biaffine" not in MEMBERS
    assert is_self_tagging("biaffine") and not is_self_tagging("graph1")
    assert tag_mode_params("biaffine", "gold") == {"tag_inputs": True}
    assert tag_mode_params("biaffine", "predicted") == {"tag_inputs": False}
    assert tag_mode_params("eager", "predicted") == {}


def test_the_library_imports_without_torch_and_the_member_says_how_to_get_it() -> None:
    message = import_without_torch("parsing, parsing.pipeline, parsing.members, parsing.biaffine, "
                                   "parsing.biaffine.member", "biaffine")
    assert "the biaffine member needs PyTorch" in message and "pip install torch==2.13.0" in message


@pytest.mark.parametrize("tags", ["gold", "predicted"])
def test_trained_and_loaded_through_the_pipeline(tags: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.conllu_io import load_sentences
    from parsing.pipeline import load_models, train_models

    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    sentences = [s for s in load_sentences(AFRIKAANS)[:600] if len(s) <= 9][:40]
    train, dev = sentences[:30], sentences[30:]
    train_models(train, dev, tmp_path, names=["biaffine", "graph1"], tags=tags,  # type: ignore[arg-type]
                 params={"biaffine": SMALL, "tagger": {"max_iter": 2} if tags == "predicted" else {}})
    bundle = load_models(tmp_path)
    member = bundle.parsers["biaffine"]
    assert member.get_params()["tag_inputs"] is (tags == "gold")
    if tags == "predicted":  # its tag classifiers learned from the gold XPOS, not the tagger's view ("_")
        assert len(member.vocabularies_["xpos"]) > 3  # type: ignore[attr-defined]
    parses = bundle.parse(dev, ["biaffine", "graph1"])
    own, other = parses["biaffine"][0], parses["graph1"][0]
    assert len(own.extras["lemmas"]) == len(dev[0]) + 1  # type: ignore[arg-type]
    if tags == "predicted":
        assert own.upos == own.extras["upos"] and other.upos == bundle.prepare(dev[:1])[0].upos
    else:
        assert own.upos is None and other.upos is None


def test_a_second_biaffine_member_starts_from_another_seed(tmp_path: Path) -> None:
    """``biaffine-b`` is the same network seeded ``seed + 1000`` in a round (and in an ensemble
    built from names): two neural voters whose errors differ."""
    pytest.importorskip("torch")
    from parsing.conllu_io import load_sentences
    from parsing.ensemble import ArcVoting
    from parsing.members import member_seed
    from parsing.pipeline import load_models, train_models

    assert "biaffine-b" in EXTRA_MEMBERS and is_self_tagging("biaffine-b")
    assert tag_mode_params("biaffine-b", "predicted") == {"tag_inputs": False}
    assert member_seed("biaffine", 7) == 7 and member_seed("biaffine-b", 7) == 1007
    assert [m.get_params()["random_state"] for m in ArcVoting(["biaffine", "biaffine-b"],
                                                              random_state=5)._new_members()] == [5, 1005]
    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    sentences = [s for s in load_sentences(AFRIKAANS)[:600] if len(s) <= 9][:40]
    train_models(sentences[:30], sentences[30:], tmp_path, names=["biaffine", "biaffine-b"], tags="gold",
                 params={"biaffine": SMALL, "biaffine-b": SMALL}, random_state=2)
    bundle = load_models(tmp_path)
    first, second = bundle.parsers["biaffine"], bundle.parsers["biaffine-b"]
    assert first.get_params()["random_state"] == 2 and second.get_params()["random_state"] == 1002
    assert (first.weights_["arc_weight"] != second.weights_["arc_weight"]).any()  # type: ignore[attr-defined]


def test_a_round_trains_the_same_weights_as_the_member_trained_alone(tmp_path: Path) -> None:
    """A round with predicted tags (the tagger trained, dev tagged, the member's settings read from
    the plan, ``biaffine-b``'s seed offset) trains exactly the weights of the member fitted alone on
    the gold trees with the same seed: a seed gives one model whichever path trains it."""
    pytest.importorskip("torch")
    import numpy as np

    from parsing.biaffine.member import BiaffineParser
    from parsing.conllu_io import load_sentences
    from parsing.pipeline import load_models, train_models

    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    sentences = [s for s in load_sentences(AFRIKAANS)[:600] if len(s) <= 9][:40]
    train, dev = sentences[:30], sentences[30:]
    settings = {**SMALL, "max_epochs": 2}
    train_models(train, dev, tmp_path, names=["biaffine-b"], tags="predicted", random_state=3,
                 params={"biaffine-b": settings, "tagger": {"max_iter": 2}})
    in_round = load_models(tmp_path).parsers["biaffine-b"].weights_  # type: ignore[attr-defined]
    alone = BiaffineParser(random_state=1003, **settings).fit(train, dev).weights_
    assert sorted(in_round) == sorted(alone)
    assert all(np.array_equal(in_round[key], alone[key]) for key in alone)


def test_the_default_members_add_the_neural_members_where_torch_is(monkeypatch: pytest.MonkeyPatch) -> None:
    import parsing.members
    from parsing.cli import build_parser
    from parsing.commands.parsers import train_plan_of
    from parsing.members import default_members

    with pytest.raises(ValueError, match="tags must be gold or predicted"):
        default_members("both")
    if parsing.members.missing_requirement("biaffine") is None:
        assert default_members("gold") == [*MEMBERS, "biaffine"]
        assert default_members("predicted") == [*MEMBERS, "biaffine", "lstm-hybrid"]
        plan = train_plan_of(build_parser().parse_args(["train", "--train", "t", "--dev", "d", "--out", "m"]))
        assert list(plan.members) == [*MEMBERS, "biaffine", "lstm-hybrid"]
        assert plan.ensemble == "vote-tuned-labels"
        plan = train_plan_of(build_parser().parse_args(
            ["train", "--train", "t", "--dev", "d", "--out", "m", "--tags", "gold"]))
        assert list(plan.members) == [*MEMBERS, "biaffine"] and plan.ensemble == "vote-tuned-labels"
        plan = train_plan_of(build_parser().parse_args(["train", "--train", "t", "--out", "m"]))
        assert plan.ensemble == "vote-uniform"  # nothing to tune on: no folds trained for it
    monkeypatch.setattr(parsing.members, "missing_requirement", lambda name: "no torch here")
    assert default_members("gold") == list(MEMBERS)  # without PyTorch: the nine
    assert default_members("predicted") == list(MEMBERS)  # without PyTorch: the nine
