"""The arc error detector (``parsing.detect``) and ``python -m parsing detect`` on a Telugu slice."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.cli import main
from parsing.conllu_io import format_conllu, load_sentences, read_conllu, to_sentence, with_parse
from parsing.detect import ArcDetector, TreebankCounts
from parsing.detect.boosting import BoostedTrees
from parsing.detect.bundle import DETECTOR_FILE, load_detector, rank_arcs
from parsing.detect.counts import tree_events
from parsing.detect.evaluate import corrupt, roc_auc, share_in_top, top_inclusion
from parsing.detect.model import jackknife_rows
from parsing.persist import read_header
from parsing.trees import is_tree
from parsing.types import Parse, Sentence

QUICK = ["--set", "graph1.max_iter=2", "--set", "eager.epochs=2", "--set", "hybrid.epochs=2"]


@pytest.fixture(scope="module")
def slices(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Telugu train (first 300 sentences), dev (first 90: the detector's), held-out (the rest of
    dev) with trees and without (HEAD and DEPREL blanked)."""
    folder = tmp_path_factory.mktemp("telugu-detect")
    source = ud_root / "UD_Telugu-MTG"
    train = read_conllu(source / "te_mtg-ud-train.conllu")[:300]
    dev = read_conllu(source / "te_mtg-ud-dev.conllu")
    paths = {name: folder / f"{name}.conllu" for name in ("train", "dev", "held", "raw")}
    paths["train"].write_text(format_conllu(train), encoding="utf-8")
    paths["dev"].write_text(format_conllu(dev[:90]), encoding="utf-8")
    paths["held"].write_text(format_conllu(dev[90:]), encoding="utf-8")
    paths["raw"].write_text("".join(
        line if line.startswith("#") or not line.strip() else "\t".join([*line.split("\t")[:6], "_", "_",
                                                                         *line.split("\t")[8:]])
        for line in format_conllu(dev[90:]).splitlines(keepends=True)), encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def model_dir(slices: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three members (gold tags) and their detector."""
    out = tmp_path_factory.mktemp("detect-model")
    assert main(["train", "--train", str(slices["train"]), "--dev", str(slices["dev"]), "--out", str(out),
                 "--parsers", "graph1,eager,hybrid", "--tags", "gold", *QUICK]) == 0
    assert main(["fit-detector", "--model", str(out), "--train", str(slices["train"]),
                 "--dev", str(slices["dev"])]) == 0
    return out


def _ranking(model_dir: Path, source: Path, out: Path) -> list[dict[str, object]]:
    assert main(["detect", "--model", str(model_dir), "--input", str(source), "--out", str(out)]) == 0
    arcs: list[dict[str, object]] = json.loads(out.read_text(encoding="utf-8"))["arcs"]
    return arcs


def test_detect_ranks_every_parsed_arc_highest_first(model_dir: Path, slices: dict[str, Path],
                                                     tmp_path: Path) -> None:
    arcs = _ranking(model_dir, slices["raw"], tmp_path / "ranking.json")
    held = load_sentences(slices["held"])
    assert len(arcs) == sum(len(s) for s in held)
    assert {(a["sent_id"], a["word"]) for a in arcs} == {(s.sent_id, d) for s in held
                                                          for d in range(1, len(s) + 1)}
    p = [float(a["p_wrong"]) for a in arcs]  # type: ignore[arg-type]
    assert p == sorted(p, reverse=True)
    assert 0.0 <= min(p) and max(p) <= 1.0 and max(p) > min(p)


def test_detect_scores_given_trees_and_finds_planted_errors(model_dir: Path, slices: dict[str, Path],
                                                           tmp_path: Path) -> None:
    raws = read_conllu(slices["held"])
    gold = [to_sentence(r) for r in raws]
    corrupted, changed = corrupt(gold, 0.08, seed=3)
    assert sum(int(c.sum()) for c in changed) == round(0.08 * sum(len(s) for s in gold))
    source = tmp_path / "corrupted.conllu"
    source.write_text(format_conllu(with_parse(r, Parse(s.heads, s.deprels)) for r, s in zip(raws, corrupted,
                                                                                             strict=True)),
                      encoding="utf-8")
    arcs = _ranking(model_dir, source, tmp_path / "ranking.json")
    p = {(a["sent_id"], a["word"]): float(a["p_wrong"]) for a in arcs}  # type: ignore[arg-type]
    planted = [p[(s.sent_id, d)] for s, c in zip(corrupted, changed, strict=True) for d in np.flatnonzero(c)]
    others = [p[(s.sent_id, d)] for s, c in zip(corrupted, changed, strict=True)
              for d in range(1, len(s) + 1) if not c[d]]
    assert np.mean(planted) > np.mean(others) + 0.1
    flags = [bool(c[d]) for s, c in zip(corrupted, changed, strict=True) for d in range(1, len(s) + 1)]
    scores = [p[(s.sent_id, d)] for s in corrupted for d in range(1, len(s) + 1)]
    assert roc_auc(scores, flags) > 0.75


def test_the_detector_is_calibrated_and_jackknifed_on_dev(model_dir: Path, slices: dict[str, Path]) -> None:
    detector = load_detector(model_dir)
    dev_words = sum(len(s) for s in load_sentences(slices["dev"]))
    assert detector.training_scores.shape == detector.training_wrong.shape == detector.training_given.shape
    assert int((~detector.training_given).sum()) == dev_words  # plus corrupted copies of dev (given trees)
    assert detector.training_given.sum() == 3 * dev_words
    assert np.all((detector.training_scores >= 0) & (detector.training_scores <= 1))
    # Platt's curve is fitted on these very scores: their mean matches the error rate
    assert abs(detector.training_scores.mean() - detector.training_wrong.mean()) < 0.03
    parsed = ~detector.training_given
    assert roc_auc(detector.training_scores[parsed], detector.training_wrong[parsed]) > 0.7
    manifest = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["detector"]["dev_words"] == dev_words
    assert read_header(model_dir / DETECTOR_FILE)["class"] == "ArcDetector"  # arrays + JSON, no pickle
    assert detector.trees.n_features == len(detector.feature_names)


def test_a_model_without_a_detector_is_refused_clearly(slices: dict[str, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model"
    assert main(["train", "--train", str(slices["train"]), "--out", str(out), "--parsers", "graph1",
                 "--tags", "gold", "--set", "graph1.max_iter=1"]) == 0
    capsys.readouterr()
    status = main(["detect", "--model", str(out), "--input", str(slices["raw"]),
                   "--out", str(tmp_path / "r.json")])
    message = capsys.readouterr().err
    assert status == 2 and "no arc detector" in message and "fit-detector" in message
    assert not (tmp_path / "r.json").exists()


def test_jackknife_never_scores_a_word_with_a_model_trained_on_it() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), rng.integers(1, 6, size=20))
    x = np.column_stack([np.arange(len(groups)), groups]).astype(np.float64)  # row id, sentence
    y = rng.random(len(groups)) < 0.5
    seen_together: list[tuple[set[int], set[int]]] = []

    def fit(train_x: np.ndarray, train_y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        trained = set(train_x[:, 0].astype(int).tolist())

        def score(rows: np.ndarray) -> np.ndarray:
            scored = set(rows[:, 0].astype(int).tolist())
            seen_together.append((trained, scored))
            return np.asarray([1.0 if int(i) in trained else 0.0 for i in rows[:, 0]])
        return score

    scores = jackknife_rows(x, y, groups, fit, folds=4)
    assert np.all(scores == 0.0)  # every word was scored by a model that never saw it
    assert len(seen_together) == 4
    scored_rows = set().union(*(scored for _, scored in seen_together))
    assert scored_rows == set(range(len(groups)))
    for trained, scored in seen_together:  # whole sentences go to one side
        assert not ({int(groups[i]) for i in trained} & {int(groups[i]) for i in scored})


def test_boosted_trees_equal_sklearn_and_survive_saving(tmp_path: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from parsing.persist import load_model, save_model

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 5))
    x[rng.random(x.shape) < 0.1] = np.nan
    y = (np.nan_to_num(x[:, 0]) + 0.5 * np.nan_to_num(x[:, 1]) ** 2 + rng.normal(scale=0.5, size=400)) > 0.3
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(x, y)
    trees = BoostedTrees.from_sklearn(model)
    probe = rng.normal(size=(100, 5))
    probe[rng.random(probe.shape) < 0.1] = np.nan
    np.testing.assert_allclose(trees.decision_function(probe), model.decision_function(probe), rtol=1e-10)
    save_model(trees, tmp_path / "trees.model")
    again = load_model(tmp_path / "trees.model", BoostedTrees)
    np.testing.assert_array_equal(again.decision_function(probe), trees.decision_function(probe))
    with pytest.raises(ValueError, match="5 features"):
        trees.decision_function(probe[:, :4])


def test_counts_leave_a_counted_tree_out(ud_root: Path) -> None:
    trees = load_sentences(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-dev.conllu")[:30]
    counts = TreebankCounts.build(trees)
    events = list(tree_events(trees[0]))
    arcs = [e for e in events if not e.startswith("S|")]  # S: kept only for pairs some tree links
    assert np.all(counts.lookup(arcs) >= 1)
    linked = {e.split("|", 1)[1] for e in events if e.startswith("K|")}
    assert np.all(counts.lookup([f"S|{key}" for key in linked]) >= 1)
    alone = TreebankCounts.build(trees[:1])
    assert np.all(alone.lookup(events, own=tree_events(trees[0])) == 0)
    # the same tree counted once more elsewhere still counts once when itself is left out
    twice = TreebankCounts.build([trees[0], trees[0]])
    assert np.all(twice.lookup(events, own=tree_events(trees[0])) == alone.lookup(events))


def test_a_detector_fitted_before_a_column_existed_reads_the_columns_it_knows(
        model_dir: Path, slices: dict[str, Path]) -> None:
    from dataclasses import replace

    from parsing.detect.model import ScoredTree

    detector = load_detector(model_dir)
    gold = load_sentences(slices["held"])[:5]
    trees = [ScoredTree(s, s.heads, list(s.deprels), {name: Parse(s.heads, list(s.deprels))
                                                      for name in detector.members}) for s in gold]
    x = detector.matrix(trees)
    known = [name for name in detector.feature_names if not name.startswith(("form_tag", "head_form_tag"))]
    older = replace(detector, feature_names=known[::-1])
    np.testing.assert_array_equal(older.matrix(trees),
                                  x[:, [detector.feature_names.index(name) for name in known[::-1]]])
    with pytest.raises(ValueError, match="fit-detector"):
        replace(detector, feature_names=[*known, "retired_column"]).matrix(trees)


def test_corrupted_trees_stay_trees(ud_root: Path) -> None:
    gold = load_sentences(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-dev.conllu")
    corrupted, changed = corrupt(gold, 0.02, seed=7)
    again, _ = corrupt(gold, 0.02, seed=7)
    assert all(is_tree(s.heads) for s in corrupted)
    assert all(int(np.sum(s.heads == 0)) == 1 for s in corrupted)
    words = sum(len(s) for s in gold)
    assert sum(int(c.sum()) for c in changed) == round(0.02 * words)
    differ = sum(int(np.sum((s.heads != g.heads) | np.array([a != b for a, b in zip(s.deprels, g.deprels,
                                                                                       strict=True)])))
                 for s, g in zip(corrupted, gold, strict=True))
    assert differ == round(0.02 * words)  # each planted error changes its arc, nothing else changes
    assert [s.heads.tolist() for s in again] == [s.heads.tolist() for s in corrupted]


def test_rankings_count_ties_fairly() -> None:
    assert top_inclusion([0.9, 0.5, 0.5, 0.1], 0.5).tolist() == [1.0, 0.5, 0.5, 0.0]
    assert share_in_top([1, 1, 1, 1], [1, 0, 0, 0], 0.25) == pytest.approx(0.25)
    assert share_in_top([0.2, 0.9, 0.1, 0.1], [0, 1, 0, 0], 0.25) == 1.0
    sentences = [Sentence.from_words(["x", "y"], sent_id="a"), Sentence.from_words(["z"])]
    ranking = rank_arcs(sentences, [np.array([0.2, 0.9]), np.array([0.9])])
    assert [(r["sent_id"], r["word"]) for r in ranking] == [("a", 2), ("2", 1), ("a", 1)]


def test_loaded_detector_scores_like_the_fitted_one(model_dir: Path) -> None:
    detector = load_detector(model_dir)
    again = ArcDetector.load(model_dir / DETECTOR_FILE)
    x = np.random.default_rng(0).normal(size=(50, len(detector.feature_names)))
    np.testing.assert_array_equal(detector.predict_proba(x), again.predict_proba(x))


def test_a_given_tree_with_a_head_outside_its_sentence_is_refused(
        model_dir: Path, slices: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raws = read_conllu(slices["held"])[:3]
    broken = to_sentence(raws[1])
    broken.heads[2] = len(broken) + 5
    source = tmp_path / "broken.conllu"
    changed = with_parse(raws[1], Parse(broken.heads, broken.deprels))
    source.write_text(format_conllu([raws[0], changed, raws[2]]), encoding="utf-8")
    capsys.readouterr()
    status = main(["detect", "--model", str(model_dir), "--input", str(source),
                   "--out", str(tmp_path / "r.json")])
    message = capsys.readouterr().err  # where and why: the file, its line, the head
    assert status == 2 and "broken.conllu, line" in message and "HEAD" in message
    assert not (tmp_path / "r.json").exists()


def test_the_detector_strategy_ranks_by_expected_wrong_arcs() -> None:
    from parsing.semi.selection import rank_sentences

    sentences = [Sentence.from_words(["a", "b"]), Sentence.from_words(["c"]), Sentence.from_words(["d", "e"])]
    p_wrong = [np.array([0.1, 0.2]), np.array([0.9]), np.array([0.5, 0.5])]
    assert rank_sentences("detector", sentences, [], [], p_wrong=p_wrong) == [2, 1, 0]  # sums 1.0, 0.9, 0.3
    with pytest.raises(ValueError, match="p_wrong"):
        rank_sentences("detector", sentences, [], [])


def test_simulate_selects_by_a_detector_fitted_each_round(ud_root: Path, tmp_path: Path) -> None:
    source = ud_root / "UD_Telugu-MTG"
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(format_conllu(read_conllu(source / "te_mtg-ud-train.conllu")[:40]), "utf-8")
    dev.write_text(format_conllu(read_conllu(source / "te_mtg-ud-dev.conllu")[:40]), "utf-8")
    out = tmp_path / "result.json"
    assert main(["simulate", "--train", str(train), "--dev", str(dev), "--seed-trees", "20",
                 "--per-round", "5", "--rounds", "1", "--strategy", "detector", "--out", str(out),
                 "--parsers", "graph1,eager",
                 "--member-params", "graph1.max_iter=1", "--member-params", "eager.epochs=1"]) == 0
    rounds = json.loads(out.read_text(encoding="utf-8"))["rounds"]
    chosen = set(rounds[1]["selected_ids"])
    assert len(chosen) == 5 and not chosen & set(rounds[0]["selected_ids"])


def _noisy(sentence: Sentence, rng: np.random.Generator, rate: float) -> np.ndarray:  # type: ignore[type-arg]
    heads = sentence.heads.copy()
    for d in range(1, len(sentence) + 1):
        if rng.random() < rate:
            heads[d] = int(rng.choice([h for h in range(len(sentence) + 1) if h != d]))
    return heads


def test_a_confident_members_arc_probabilities_are_read(ud_root: Path, tmp_path: Path) -> None:
    """A member whose arc probabilities tell right from wrong (as the neural member's do) adds
    the ``p:`` columns; the detector ranks the tree's errors better with them, keeps them in its
    file, and still scores a parse stored without its probabilities."""
    from parsing.detect.evaluate import roc_auc
    from parsing.detect.model import ScoredTree, fit_detector, wrong_arcs

    source = ud_root / "UD_Telugu-MTG"
    train = load_sentences(source / "te_mtg-ud-train.conllu")[:300]
    gold = [s for s in load_sentences(source / "te_mtg-ud-dev.conllu") if len(s) > 1]
    rng = np.random.default_rng(4)
    trees = []
    for sentence in gold:
        tree = _noisy(sentence, rng, 0.25)
        sure = tree.copy()  # both members agree with the tree: only the probabilities tell
        right = sure == sentence.heads
        p = np.clip(np.where(right, 0.85, 0.35) + rng.normal(0, 0.1, size=right.shape), 0.01, 0.99)
        parses = {"plain": Parse(tree, list(sentence.deprels)),
                  "sure": Parse(sure, list(sentence.deprels), arc_scores=p)}
        trees.append(ScoredTree(sentence, tree, list(sentence.deprels), parses))
    half = len(trees) // 2
    fitted = {confident: fit_detector(train, trees[:half], gold[:half], ["plain", "sure"], [1.0, 1.0],
                                      synthetic_copies=0, confident=confident)
              for confident in ((), ("sure",))}
    plain, sure = fitted[()], fitted[("sure",)]
    assert sure.confident == ["sure"]
    assert sure.feature_names[-3:] == ["p:sure", "p_agrees:sure", "p_differs:sure"]
    assert plain.confident == [] and len(sure.feature_names) == len(plain.feature_names) + 3
    wrong = wrong_arcs(trees[half:], gold[half:])
    auc = {name: roc_auc(np.concatenate(d.score(trees[half:])), wrong) for name, d in
           (("plain", plain), ("sure", sure))}
    assert auc["sure"] > auc["plain"] + 0.02  # random heads are rare arcs: the counts find most
    loaded = _reloaded_alike(sure, trees[half:], tmp_path / "detector.model")  # without probabilities too
    assert loaded.confident == ["sure"]
    with pytest.raises(ValueError, match="not among the members"):
        fit_detector(train, trees[:half], gold[:half], ["plain"], [1.0], confident=["sure"])


def test_a_members_own_tags_show_the_errors_every_member_parsed_with(ud_root: Path, tmp_path: Path) -> None:
    """Every member parses with the same tags, so a wrong tag's arc errors are shared and the vote
    cannot see them; the neural member's own UPOS (and how sure it is) can. A detector reading
    the tag columns ranks those errors better, keeps the columns in its file, and a detector
    fitted without them (or one saved before them) scores as before."""
    from parsing.detect.evaluate import roc_auc
    from parsing.detect.model import ScoredTree, fit_detector, wrong_arcs

    source = ud_root / "UD_Telugu-MTG"
    train = load_sentences(source / "te_mtg-ud-train.conllu")[:300]
    gold = [s for s in load_sentences(source / "te_mtg-ud-dev.conllu") if len(s) > 1]
    common = [tag for tag, _ in Counter(t for s in train for t in s.upos[1:]).most_common(2)]
    rng = np.random.default_rng(7)
    trees = []
    for sentence in gold:
        n = len(sentence)
        mistagged = np.concatenate([[False], rng.random(n) < 0.15])
        parsed_with = [t if not bad else common[0] if t != common[0] else common[1]  # a likely confusion
                       for t, bad in zip(sentence.upos, mistagged, strict=True)]
        tagged = Sentence(sentence.forms, sentence.lemmas, parsed_with, sentence.xpos, sentence.feats,
                          sentence.heads, sentence.deprels, sentence.sent_id)
        tree = sentence.heads.copy()
        for d in range(1, n + 1):  # a wrong tag misleads every member alike
            if rng.random() < (0.7 if mistagged[d] else 0.08):
                tree[d] = _other_head(tree, d, rng)
        sure = np.where(mistagged, rng.uniform(0.3, 0.8, n + 1), rng.uniform(0.6, 1.0, n + 1))
        extras: dict[str, object] = {"upos": list(sentence.upos), "upos_p": [1.0, *sure[1:].tolist()],
                                     "label_p": [1.0, *rng.uniform(0.5, 1.0, n).tolist()]}
        parses = {"plain": Parse(tree, list(sentence.deprels)),
                  "sure": Parse(tree.copy(), list(sentence.deprels), arc_scores=np.full(n + 1, 0.7),
                                extras=extras)}
        trees.append(ScoredTree(tagged, tree, list(sentence.deprels), parses))
    half = len(trees) // 2
    fitted = {read: fit_detector(train, trees[:half], gold[:half], ["plain", "sure"], [1.0, 1.0],
                                 synthetic_copies=0, confident=["sure"], read_outputs=read)
              for read in (False, True)}
    without, reading = fitted[False], fitted[True]
    assert without.outputs == [] and reading.outputs == ["sure"]
    assert reading.feature_names[-7:] == ["upos_p:sure", "head_upos_p:sure", "upos_differs:sure",
                                          "head_upos_differs:sure", "label_p:sure", "p_tree:sure",
                                          "p_other:sure"]
    wrong = wrong_arcs(trees[half:], gold[half:])
    auc = {read: roc_auc(np.concatenate(d.score(trees[half:])), wrong) for read, d in fitted.items()}
    # seeded: 0.943 against 0.934 (0.921 before the form-tag columns, which see some of it too)
    assert auc[True] > auc[False] + 0.005
    loaded = _reloaded_alike(reading, trees[half:], tmp_path / "detector.model")  # without extras too
    assert loaded.outputs == ["sure"]


def _other_head(heads: np.ndarray, word: int, rng: np.random.Generator) -> int:  # type: ignore[type-arg]
    """A plausible wrong head for ``word``: a word near its own head or near itself (the tree need
    not stay a tree here), so that rare configurations do not give it away."""
    near = {h for base in (word, int(heads[word])) for h in range(base - 3, base + 4)}
    choices = sorted(h for h in near if 1 <= h < len(heads) and h not in (word, heads[word]))
    return int(rng.choice(choices)) if choices else 0


def _reloaded_alike(detector: ArcDetector, trees: list[Any], path: Path) -> ArcDetector:
    """``detector`` saved and loaded again: it scores ``trees`` as before, and scores them too
    when the member ``sure``'s parses come bare (stored trees: no probabilities, no extras; their
    columns are ``nan``)."""
    from parsing.detect.model import ScoredTree

    detector.save(path)
    loaded = ArcDetector.load(path)
    np.testing.assert_allclose(np.concatenate(loaded.score(trees)), np.concatenate(detector.score(trees)))
    bare = [ScoredTree(t.sentence, t.heads, t.deprels,
                       {**t.member_parses, "sure": Parse(t.member_parses["sure"].heads, t.deprels)})
            for t in trees]
    assert all(np.isfinite(p).all() for p in loaded.score(bare))
    return loaded
