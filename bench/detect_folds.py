"""Would the arc error detector gain from more tuning trees? Jackknifed parses of the training trees.

The detector learns from the ensemble's dev parses (``bench/detect.py``): 662 words on Telugu,
1,263 on Tamil. Here the training trees add more: train is split into ``--folds`` parts (seeded,
by sentence); for each part the members and the ensemble are trained again on the other parts, as
the full model's plan says (its manifest: members, settings, tags, ensemble method), and parse that
part. The detector is then fitted on the full model's dev parses alone and on those plus the
jackknifed training parses (each training tree counted by the detector but left out of its own
counts), and both score the full model's test parses, as ``bench/detect.py`` does.

    PYTHONPATH=. .venv/bin/python bench/detect.py --treebanks UD_Tamil-TTB --models-from M \
        --ensemble vote-tuned-labels --cache C          # the full model's dev and test parses
    PYTHONPATH=. .venv/bin/python bench/detect_folds.py --treebank UD_Tamil-TTB --cache C \
        --folds 2 --fold 0 && ... --fold 1              # one training per process (two cores)
    PYTHONPATH=. .venv/bin/python bench/detect_folds.py --treebank UD_Tamil-TTB --cache C --folds 2

Writes one JSON line per run (dev alone, dev + folds) to ``--out``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from detect import emit, scored_trees, write_parses, write_probabilities  # noqa: E402
from ud_files import UD, split_files  # noqa: E402

from parsing.conllu_io import read_conllu, to_sentence  # noqa: E402
from parsing.detect.bundle import confident_members, member_weights  # noqa: E402
from parsing.detect.counts import tree_events  # noqa: E402
from parsing.detect.evaluate import summary  # noqa: E402
from parsing.detect.model import ScoredTree, fit_detector, wrong_arcs  # noqa: E402
from parsing.pipeline import load_models, read_manifest, train_plan  # noqa: E402
from parsing.plan import TrainingPlan  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def fold_of(n_sentences: int, folds: int, seed: int) -> np.ndarray:  # type: ignore[type-arg]
    """Each training sentence's part, shape ``(n_sentences,)``: a seeded permutation cut in ``folds``."""
    part = np.empty(n_sentences, dtype=np.intp)
    part[np.random.default_rng(seed).permutation(n_sentences)] = np.arange(n_sentences) % folds
    return part


def parse_fold(treebank: Path, folder: Path, folds: int, fold: int, seed: int) -> Path:
    """Train the full model's plan without part ``fold`` of train and write that part's parses
    (every member's and the ensemble's, the confident members' probabilities) under
    ``folder/folds-F/fold-K``; skipped when already there."""
    out = folder / f"folds-{folds}" / f"fold-{fold}"
    if (out / "parsed.json").is_file():
        return out
    model = Path(json.loads((folder / "parsed.json").read_text())["model"])
    manifest = read_manifest(model)
    plan = TrainingPlan.from_json({**manifest["plan"], "ensemble": manifest["ensemble"]["method"]})
    train_path, dev_path, _ = split_files(treebank)
    assert dev_path is not None
    raw = read_conllu(train_path)
    part = fold_of(len(raw), folds, seed)
    train = [to_sentence(s) for s, p in zip(raw, part, strict=True) if p != fold]
    dev = [to_sentence(s) for s in read_conllu(dev_path)]
    started = time.perf_counter()
    train_plan(plan, train, dev, out / "model")
    trained_s = time.perf_counter() - started
    bundle = load_models(out / "model")
    held_raw = [s for s, p in zip(raw, part, strict=True) if p == fold]
    members, combined = bundle.parse_with_ensemble([to_sentence(s) for s in held_raw])
    (out / "train").mkdir(parents=True, exist_ok=True)
    write_parses(out / "train" / "ensemble.conllu", held_raw, combined)
    for name, parses in members.items():
        write_parses(out / "train" / f"{name}.conllu", held_raw, parses)
        if bundle.parsers[name].gives_arc_probabilities:
            write_probabilities(out / "train" / f"{name}.probabilities.json", parses)
    (out / "parsed.json").write_text(json.dumps({"train_s": round(trained_s, 1), "sentences": len(held_raw)}),
                                     encoding="utf-8")
    return out


def measure(treebank: Path, folder: Path, folds: int, seed: int, copies: int) -> list[dict[str, object]]:
    """The detector fitted on dev alone and on dev plus every fold's training parses, scored on
    the full model's test parses: one row each."""
    train_path, dev_path, test_path = split_files(treebank)
    assert dev_path is not None
    raw = read_conllu(train_path)
    train = [to_sentence(s) for s in raw]
    part = fold_of(len(raw), folds, seed)
    dev_gold = [to_sentence(s) for s in read_conllu(dev_path)]
    test_gold = [to_sentence(s) for s in read_conllu(test_path)]
    bundle = load_models(json.loads((folder / "parsed.json").read_text())["model"])
    names, weights = member_weights(bundle)
    confident = confident_members(bundle, names)
    dev_trees = scored_trees(folder, "dev", names)
    extra_trees: list[ScoredTree] = []
    extra_gold = []
    for fold in range(folds):
        held = [s for s, p in zip(train, part, strict=True) if p == fold]
        parsed = scored_trees(folder / f"folds-{folds}" / f"fold-{fold}", "train", names)
        for tree, gold in zip(parsed, held, strict=True):
            extra_trees.append(ScoredTree(tree.sentence, tree.heads, tree.deprels, tree.member_parses,
                                          own=tree_events(gold)))
            extra_gold.append(gold)
    test_trees = scored_trees(folder, "test", names)
    wrong = wrong_arcs(test_trees, test_gold)
    rows = []
    for label, tuning, gold in (("dev", dev_trees, dev_gold),
                                ("dev+folds", [*dev_trees, *extra_trees], [*dev_gold, *extra_gold])):
        started = time.perf_counter()
        detector = fit_detector(train, tuning, gold, names, weights, random_state=seed,
                                synthetic_copies=copies, confident=confident)
        fit_s = time.perf_counter() - started
        dev_words = np.zeros(len(detector.training_wrong), dtype=bool)
        dev_words[:sum(len(t.sentence) for t in dev_trees)] = True  # dev's words come first
        p = np.concatenate(detector.score(test_trees))
        rows.append({"treebank": treebank.name, "tuning": label, "folds": folds, "seed": seed,
                     "members": names, "confident": confident, "synthetic_copies": copies,
                     "tuning_words": int((~detector.training_given).sum()),
                     "dev_jackknifed": summary(detector.training_scores[dev_words],
                                               detector.training_wrong[dev_words]),
                     "detector": summary(p, wrong), "fit_s": round(fit_s, 1)})
    return rows


def main() -> None:
    """Parse one fold (``--fold``), or measure when every fold is parsed; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebank", required=True)
    parser.add_argument("--cache", type=Path, required=True, help="bench/detect.py's --cache, prepared")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--fold", type=int, help="train and parse this fold only, then stop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthetic-copies", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "detect-folds.jsonl")
    args = parser.parse_args()
    folder = args.cache / args.treebank
    if not (folder / "parsed.json").is_file():
        raise SystemExit(f"{folder} holds no parses: run bench/detect.py --cache {args.cache} first")
    if args.fold is not None:
        print(parse_fold(UD / args.treebank, folder, args.folds, args.fold, args.seed), file=sys.stderr)
        return
    for fold in range(args.folds):
        parse_fold(UD / args.treebank, folder, args.folds, fold, args.seed)
    for row in measure(UD / args.treebank, folder, args.folds, args.seed, args.synthetic_copies):
        emit(row, args.out)


if __name__ == "__main__":
    main()
