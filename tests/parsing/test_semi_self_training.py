"""Self-training on real sentences: what is selected, with whose trees, within which bound."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.pipeline import load_models, read_manifest, train_models
from parsing.semi import self_training
from parsing.semi.self_training import (
    SelfTrainingBundle,
    SelfTrainingConfig,
    length_bins,
    select_automatic,
    select_candidates,
    tree_agreement,
)
from parsing.types import Parse, Sentence

CHEAP = {"graph1": {"max_iter": 1, "n_bits": 16}, "eager": {"epochs": 1, "n_bits": 16}}


@pytest.fixture(scope="module")
def wolof(ud_root: Path) -> list[Sentence]:
    return load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:120]


def _gold(sentence: Sentence) -> Parse:
    return Parse(heads=sentence.heads.copy(), deprels=list(sentence.deprels))


def _wrong_head(sentence: Sentence) -> Parse:
    """Gold with word 1 attached somewhere else."""
    heads = sentence.heads.copy()
    heads[1] = next(h for h in range(len(sentence) + 1) if h not in (1, sentence.heads[1]))
    return Parse(heads=heads, deprels=list(sentence.deprels))


def _wrong_label(sentence: Sentence) -> Parse:
    deprels = list(sentence.deprels)
    deprels[1] = "dep" if deprels[1] != "dep" else "obl"
    return Parse(heads=sentence.heads.copy(), deprels=deprels)


def test_config_rejects_bad_settings_by_name() -> None:
    for kwargs, field in [({"source": "gold"}, "source"), ({"select": "best"}, "selection"),
                          ({"max_automatic": -1}, "max_automatic"), ({"max_share": -0.5}, "max_share"),
                          ({"max_share": float("inf")}, "max_share"), ({"agreement_k": 0}, "agreement_k"),
                          ({"min_confidence": 1.5}, "min_confidence"), ({"length_bins": 0}, "length_bins"),
                          ({"max_automatic": True}, "max_automatic")]:
        with pytest.raises(ValueError, match=field):
            SelfTrainingConfig(**kwargs)  # type: ignore[arg-type]
    assert SelfTrainingConfig().to_dict()["source"] == "ensemble"


def test_bound_is_respected(wolof: list[Sentence]) -> None:
    pool = wolof[:60]
    parses = [[_gold(s) for s in pool]] * 3
    ensemble = [_gold(s) for s in pool]
    for config, n_human, bound in [
        (SelfTrainingConfig(select="random", max_share=0.5, stratify_by_length=False), 20, 10),
        (SelfTrainingConfig(select="random", max_automatic=4, stratify_by_length=False), 20, 4),
        (SelfTrainingConfig(select="confidence", max_share=2.0, stratify_by_length=False), 20, 40),
        (SelfTrainingConfig(select="agreement", max_share=0.25), 40, 10),
        (SelfTrainingConfig(select="random", max_share=0.0), 40, 0),
    ]:
        chosen = select_candidates(config, pool, parses, ensemble, n_human)
        assert len(chosen) <= bound
        assert len(set(chosen)) == len(chosen)
        if not config.stratify_by_length:
            assert len(chosen) == bound  # every tree is a candidate here


def test_agreement_selects_only_agreed_trees(wolof: list[Sentence]) -> None:
    pool = wolof[:40]
    gold = [_gold(s) for s in pool]
    # sentence i: all agree (i % 3 == 0), one member has a wrong head (1), or a wrong label (2)
    odd = [gold[i] if i % 3 == 0 else (_wrong_head if i % 3 == 1 else _wrong_label)(s)
           for i, s in enumerate(pool)]
    members = {"a": gold, "b": list(gold), "c": odd}
    assert tree_agreement(list(members.values())).tolist() == [3 if i % 3 == 0 else 2 for i in range(40)]
    config = SelfTrainingConfig(select="agreement", source="own", max_share=10.0, stratify_by_length=False)
    automatic = select_automatic(config, pool, members, gold, n_human=40)
    chosen = {s.sent_id for s in automatic["a"]}
    assert chosen == {s.sent_id for i, s in enumerate(pool) if i % 3 == 0}
    two = select_automatic(SelfTrainingConfig(select="agreement", agreement_k=2, max_share=10.0,
                                              stratify_by_length=False), pool, members, gold, n_human=40)
    assert len(two["a"]) == 40
    with pytest.raises(ValueError, match="agreement_k=4"):
        select_automatic(SelfTrainingConfig(select="agreement", agreement_k=4), pool, members, gold, 40)


def test_confidence_uses_mean_vote_share(wolof: list[Sentence]) -> None:
    pool = wolof[:30]
    gold = [_gold(s) for s in pool]
    wrong = [_wrong_head(s) if i % 2 else _gold(s) for i, s in enumerate(pool)]
    members = {"a": gold, "b": gold, "c": wrong}
    config = SelfTrainingConfig(select="confidence", min_confidence=1.0, max_share=10.0,
                                stratify_by_length=False)
    chosen = select_candidates(config, pool, list(members.values()), gold, 30)
    assert chosen == [i for i in range(30) if i % 2 == 0]
    # one word of n at share 2/3: the mean is 1 - 1/(3n), so a lower threshold keeps long sentences
    lenient = SelfTrainingConfig(select="confidence", min_confidence=0.95, max_share=10.0,
                                 stratify_by_length=False)
    kept = select_candidates(lenient, pool, list(members.values()), gold, 30)
    assert kept == [i for i in range(30) if i % 2 == 0 or 1 - 1 / (3 * len(pool[i])) >= 0.95]


def test_own_and_ensemble_labels(wolof: list[Sentence]) -> None:
    pool = wolof[:20]
    gold = [_gold(s) for s in pool]
    members = {"right": gold, "wrong": [_wrong_head(s) for s in pool]}
    settings: dict[str, Any] = {"select": "random", "max_share": 1.0, "stratify_by_length": False}
    own = select_automatic(SelfTrainingConfig(source="own", **settings), pool, members, gold, 20)
    ensemble = select_automatic(SelfTrainingConfig(source="ensemble", **settings), pool, members, gold, 20)
    assert len(own["wrong"]) == len(ensemble["wrong"]) == 20
    for tree, sentence, mine in zip(own["wrong"], pool, members["wrong"], strict=True):
        assert tree.sent_id == sentence.sent_id and tree.forms == sentence.forms
        assert tree.heads.tolist() == mine.heads.tolist() != sentence.heads.tolist()
    for name in members:
        assert [t.heads.tolist() for t in ensemble[name]] == [s.heads.tolist() for s in pool]
    assert all(t.heads.tolist() == s.heads.tolist() for t, s in zip(own["right"], pool, strict=True))


def test_pool_sentences_are_not_modified(wolof: list[Sentence]) -> None:
    pool = [Sentence.from_words(s.forms[1:], upos=s.upos[1:], sent_id=s.sent_id) for s in wolof[:10]]
    gold = [_gold(s) for s in wolof[:10]]
    automatic = select_automatic(SelfTrainingConfig(select="random", stratify_by_length=False),
                                 pool, {"a": gold}, gold, 10)
    assert len(automatic["a"]) == 10
    assert all(not s.has_tree for s in pool)
    assert all(t.has_tree for t in automatic["a"])


def test_stratification_keeps_long_sentences(wolof: list[Sentence]) -> None:
    pool = wolof[:120]
    lengths = np.array([len(s) for s in pool])
    long = lengths > np.median(lengths)
    gold = [_gold(s) for s in pool]
    # agreement favours short sentences: all short ones agree, one long one in five
    odd = [gold[i] if not long[i] or i % 5 == 0 else _wrong_head(pool[i]) for i in range(len(pool))]
    parses = [gold, odd]
    flat = SelfTrainingConfig(select="agreement", max_share=1.0, stratify_by_length=False)
    strata = SelfTrainingConfig(select="agreement", max_share=1.0, stratify_by_length=True)
    long_flat = [long[i] for i in select_candidates(flat, pool, parses, gold, 40)]
    chosen = select_candidates(strata, pool, parses, gold, 40)
    long_strata = [long[i] for i in chosen]
    assert all(np.array(tree_agreement(parses))[chosen] == 2)
    assert sum(long_strata) / len(long_strata) > sum(long_flat) / len(long_flat) + 0.1
    # no bin gets more than its pool share of the bound
    bins = length_bins(lengths.tolist(), 4)
    for b in range(int(bins.max()) + 1):
        assert int(np.sum(bins[chosen] == b)) <= int(np.ceil(40 * np.mean(bins == b)))


def test_train_models_adds_extra_trees_and_keeps_human_ones(wolof: list[Sentence], tmp_path: Path) -> None:
    train, pool = wolof[:20], wolof[20:30]
    automatic = [Sentence(forms=s.forms, lemmas=s.lemmas, upos=s.upos, xpos=s.xpos, feats=s.feats,
                          heads=s.heads.copy(), deprels=["", *["dep:auto"] * len(s)], sent_id=s.sent_id)
                 for s in pool]
    train_models(train, None, tmp_path / "m", names=["graph1", "eager"], params=CHEAP,
                 extra_train={"graph1": automatic})
    manifest = read_manifest(tmp_path / "m")
    assert manifest["train_sentences"] == 20
    assert manifest["automatic_sentences"] == {"graph1": 10, "eager": 0}
    bundle = load_models(tmp_path / "m")
    assert "dep:auto" in bundle.parsers["graph1"].labeller_.classes_
    assert "dep:auto" not in bundle.parsers["eager"].labels_.index
    with pytest.raises(ValueError, match="neural, which is not being trained"):
        train_models(train, None, tmp_path / "n", names=["graph1"], extra_train={"neural": automatic})


def test_bundle_retrains_with_automatic_trees(wolof: list[Sentence], tmp_path: Path) -> None:
    train, pool = wolof[:25], wolof[25:65]
    config = SelfTrainingConfig(source="ensemble", select="random", max_share=0.4)
    estimator = SelfTrainingBundle(("graph1", "eager"), config=config, params=CHEAP)
    assert estimator.fit(train, None, pool, tmp_path / "model") is estimator
    assert estimator.n_automatic_ == {"graph1": 10, "eager": 10}
    assert len(estimator.automatic_ids_) == 10
    manifest = read_manifest(estimator.model_dir_)
    assert manifest["train_sentences"] == 25
    assert manifest["automatic_sentences"] == {"graph1": 10, "eager": 10}
    assert manifest["ensemble"]["method"] == "vote-uniform"
    assert len(load_models(estimator.model_dir_).parsers) == 2


def test_doctests() -> None:
    assert doctest.testmod(self_training).failed == 0
