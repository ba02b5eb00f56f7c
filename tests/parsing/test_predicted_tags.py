"""``parse --tags predicted`` writes the tags the parsers used, not the input's UPOS column."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from parsing.cli import main
from parsing.conllu_io import UPOS, format_conllu, read_conllu, to_sentence
from parsing.pipeline import load_models

QUICK = ["--set", "graph1.max_iter=2", "--set", "eager.epochs=2"]


@pytest.fixture(scope="module")
def tagged_model(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A model trained with predicted tags on 120 Wolof sentences, and 30 other sentences whose
    UPOS column is wrong (every word ``X``)."""
    folder = tmp_path_factory.mktemp("wolof")
    source = ud_root / "UD_Wolof-WTB"
    train = folder / "train.conllu"
    train.write_text(format_conllu(read_conllu(source / "wo_wtb-ud-train.conllu")[:120]), encoding="utf-8")
    raw = read_conllu(source / "wo_wtb-ud-dev.conllu")[:30]
    for sentence in raw:
        for row in sentence.words:
            row[UPOS] = "X"
            row[6] = row[7] = "_"
    wrong = folder / "wrong-tags.conllu"
    wrong.write_text(format_conllu(raw), encoding="utf-8")
    model = folder / "model"
    assert main(["train", "--train", str(train), "--out", str(model), "--parsers", "graph1,eager",
                 "--tags", "predicted", *QUICK]) == 0
    return model, wrong


def test_parse_writes_the_predicted_tags(tagged_model: tuple[Path, Path], tmp_path: Path) -> None:
    model, wrong = tagged_model
    output, members = tmp_path / "out.conllu", tmp_path / "members"
    assert main(["parse", "--model", str(model), "--input", str(wrong), "--output", str(output),
                 "--per-parser-dir", str(members)]) == 0
    bundle = load_models(model)
    predicted = bundle.prepare([to_sentence(s) for s in read_conllu(wrong, check_trees=False)])
    expected = [s.upos[1:] for s in predicted]
    assert any(tag != "X" for tags in expected for tag in tags)
    for path in (output, members / "graph1.conllu", members / "eager.conllu"):
        written = [[row[UPOS] for row in s.words] for s in read_conllu(path, check_trees=False)]
        assert written == expected, path.name


def test_bundle_parses_carry_their_tags_only_when_predicted(tagged_model: tuple[Path, Path]) -> None:
    model, wrong = tagged_model
    bundle = load_models(model)
    sentences = [to_sentence(s) for s in read_conllu(wrong, check_trees=False)][:5]
    tags = [s.upos for s in bundle.prepare(sentences)]
    by_name, combined = bundle.parse_with_ensemble(sentences)
    assert [p.upos for p in combined] == tags
    assert all([p.upos for p in parses] == tags for parses in by_name.values())
    assert all(p.upos is None for p in bundle.parse(sentences, tags="gold")["graph1"])


def test_parsers_see_no_gold_morphology_with_predicted_tags(tagged_model: tuple[Path, Path],
                                                            ud_root: Path) -> None:
    """Raw text has no lemma, XPOS or FEATS: with predicted tags a parser never sees the
    file's (gold) ones, so the same words parse the same with or without them."""
    model, _ = tagged_model
    bundle = load_models(model)
    gold = [to_sentence(s) for s in read_conllu(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu")[:40]]
    assert any(f != "_" for s in gold for f in s.feats[1:])
    assert any(x != "_" for s in gold for x in s.lemmas[1:])
    seen = bundle.prepare(gold)
    assert all(set(s.lemmas[1:]) == set(s.xpos[1:]) == set(s.feats[1:]) == {"_"} for s in seen)
    blanked = [replace(s, lemmas=[s.lemmas[0]] + ["_"] * len(s), feats=[s.feats[0]] + ["_"] * len(s),
                       xpos=[s.xpos[0]] + ["_"] * len(s)) for s in gold]
    with_gold, without = bundle.parse(gold), bundle.parse(blanked)
    for name in ("graph1", "eager"):
        assert [(p.heads.tolist(), p.deprels) for p in with_gold[name]] == \
            [(p.heads.tolist(), p.deprels) for p in without[name]], name


def test_training_tags_are_jackknifed_without_gold_morphology(ud_root: Path) -> None:
    from parsing.conllu_io import load_sentences
    from parsing.tagger.training import train_tagger

    train = load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:60]
    tagger, (jackknifed,), dev = train_tagger(train[:50], train[50:], params={"max_iter": 2})
    assert dev is not None and len(jackknifed) == 50
    for seen in (*jackknifed, *dev):
        assert set(seen.lemmas[1:]) == set(seen.feats[1:]) == set(seen.xpos[1:]) == {"_"}
    _, (with_feats,), _ = train_tagger(train[:50], None, params={"max_iter": 2, "predict_feats": True})
    assert any(f != "_" for s in with_feats for f in s.feats[1:])  # predicted FEATS are kept
    assert all(set(s.lemmas[1:]) == {"_"} for s in with_feats)


def test_each_jackknife_seed_gives_the_members_differently_wrong_training_tags(ud_root: Path,
                                                                              tmp_path: Path) -> None:
    """``tagger.jackknife_seeds=2``: the sentences fall into other folds per seed, so the training
    tags differ somewhere while the trees do not; members take the seeds in turn (the manifest
    says which), and one seed gives exactly the single view of a plain run."""
    import json

    from parsing.conllu_io import load_sentences
    from parsing.pipeline import train_models
    from parsing.tagger.training import train_tagger

    train = load_sentences(ud_root / "UD_Wolof-WTB" / "wo_wtb-ud-train.conllu")[:80]
    _, views, _ = train_tagger(train, None, params={"max_iter": 2, "jackknife_seeds": 2})
    assert len(views) == 2
    assert [s.heads.tolist() for s in views[0]] == [s.heads.tolist() for s in views[1]]
    assert any(a.upos != b.upos for a, b in zip(*views, strict=True))
    _, (single,), _ = train_tagger(train, None, params={"max_iter": 2})
    assert [s.upos for s in single] == [s.upos for s in views[0]]
    with pytest.raises(ValueError, match="jackknife_seeds"):
        train_tagger(train, None, params={"jackknife_seeds": 0})

    train_models(train, None, tmp_path, names=["graph1", "eager"], tags="predicted",
                 params={"tagger": {"max_iter": 2, "jackknife_seeds": 2},
                         "graph1": {"max_iter": 1}, "eager": {"epochs": 1}})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["jackknife_seeds"] == {"graph1": 0, "eager": 1}
    assert set(load_models(tmp_path).parsers) == {"graph1", "eager"}
