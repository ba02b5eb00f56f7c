"""The arc error detector (``parsing.detect``) on the shared UD treebanks, predicted tags.

For each treebank: the default members and ensemble are trained on train with predicted tags
(``parsing.pipeline.train_models``, dev picks the members' epochs), dev and test are parsed by
every member and the ensemble (cached under ``--cache``, so a rerun only refits the detector).
The detector is fitted on the dev parses (its configuration and variation counts on the
training trees) and scores the test parses:

* ROC AUC of ``p_wrong`` for LAS errors of the ensemble's test trees, the share of wrong arcs
  among the 30% of words it ranks highest, and the recall (same 30% cut) among wrong arcs whose
  vote share is >= 0.8 -- beside the baseline ``1 - head vote share`` in the same run;
* on the GOLD test trees with 2% of the arcs corrupted at random (seeded; a new head or a new
  label, the tree kept a tree), the share of the corrupted arcs in its top 5%.

    nice -n 5 .venv/bin/python bench/detect.py --treebanks UD_Telugu-MTG,UD_Tamil-TTB

Writes one JSON line per treebank to ``bench/results/detect.jsonl`` (``--out``).
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
from ud_files import UD, split_files  # noqa: E402

from parsing.conllu_io import format_conllu, read_conllu, to_sentence, with_parse  # noqa: E402
from parsing.detect.bundle import confident_members, member_weights  # noqa: E402
from parsing.detect.evaluate import corrupt, share_in_top, summary  # noqa: E402
from parsing.detect.model import (  # noqa: E402
    DEFAULT_PARAMS,
    SYNTHETIC_COPIES,
    ScoredTree,
    fit_detector,
    wrong_arcs,
)
from parsing.ensemble.registry import fit_ensemble, save_ensemble  # noqa: E402
from parsing.ensemble.voting import vote_share  # noqa: E402
from parsing.pipeline import ENSEMBLE_FILE, MANIFEST, load_models, read_manifest, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate as las_of  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TREEBANKS = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG",
                     "UD_Welsh-CCG", "UD_Wolof-WTB")


def prepare(treebank: Path, cache: Path, models_from: Path | None = None,
            ensemble: str = "vote-uniform", members: list[str] | None = None) -> Path:
    """Train the default members (predicted tags) and write every member's and the ensemble's
    dev and test parses as CoNLL-U under ``cache/TREEBANK`` (skipped when already there).

    ``models_from``: a folder of ``bench/ensembles.py --models`` runs; its predicted-tag model
    directory of the treebank (``TREEBANK-predicted*``) is used instead of training (its members,
    the neural ones among them, trained once for both benchmarks), with ``ensemble`` fitted over
    ``members`` (default: all of them) unless it has that ensemble already."""
    out = cache / treebank.name
    done = out / "parsed.json"
    if done.is_file():
        return out
    train_path, dev_path, test_path = split_files(treebank)
    if dev_path is None:
        raise ValueError(f"{treebank.name} has no dev split to fit the detector on")
    model = out / "model"
    if models_from is not None:
        model = reused_model(treebank, models_from, ensemble, dev_path, members)
    elif not (model / "manifest.json").is_file() or "ensemble" not in read_manifest(model):
        started = time.perf_counter()
        train = [to_sentence(s) for s in read_conllu(train_path)]
        dev = [to_sentence(s) for s in read_conllu(dev_path)]
        seconds = train_models(train, dev, model, tags="predicted", ensemble="vote-uniform",
                               progress=lambda message, fraction: print(f"  {treebank.name}: {message}",
                                                                        file=sys.stderr))
        (out / "train_seconds.json").write_text(json.dumps(
            {**seconds, "wall": time.perf_counter() - started}), encoding="utf-8")
    bundle = load_models(model, members)
    for split, path in (("dev", dev_path), ("test", test_path)):
        raw = read_conllu(path)
        sentences = [to_sentence(s) for s in raw]
        members, combined = bundle.parse_with_ensemble(sentences)
        (out / split).mkdir(parents=True, exist_ok=True)
        write_parses(out / split / "ensemble.conllu", raw, combined)
        for name, parses in members.items():
            write_parses(out / split / f"{name}.conllu", raw, parses)
            if bundle.parsers[name].gives_arc_probabilities:  # the detector reads them
                write_probabilities(out / split / f"{name}.probabilities.json", parses)
                write_output_extras(out / split / f"{name}.extras.json", parses)
    done.write_text(json.dumps({"members": list(bundle.parsers), "model": str(model),
                                "ensemble": bundle.ensemble_method}), encoding="utf-8")
    return out


def reused_model(treebank: Path, models_from: Path, ensemble: str, dev_path: Path,
                 members: list[str] | None = None) -> Path:
    """The predicted-tag model directory of ``treebank`` under ``models_from``, with ``ensemble``
    fitted over ``members`` (default: all; dev tagged by its tagger) and saved there, unless it
    holds that ensemble over them already.

    Raises:
        FileNotFoundError: no such directory, or more than one (name the one to use).
    """
    found = sorted(path for path in models_from.glob(f"{treebank.name}-predicted*")
                   if (path / "manifest.json").is_file())
    if len(found) != 1:
        raise FileNotFoundError(f"{models_from} holds {len(found)} predicted-tag model directories of "
                                f"{treebank.name} ({', '.join(p.name for p in found) or 'none'}); need one")
    model = found[0]
    manifest = read_manifest(model)
    wanted = members or list(manifest["parsers"])
    if manifest.get("ensemble") == {"method": ensemble, "members": wanted}:
        return model
    bundle = load_models(model, wanted)
    dev = bundle.prepare([to_sentence(s) for s in read_conllu(dev_path)])
    started = time.perf_counter()
    combination, combined = fit_ensemble(ensemble, bundle.parsers, dev, dev)
    save_ensemble(combination, combined, model / ENSEMBLE_FILE)
    manifest["ensemble"] = {"method": ensemble, "members": combined}
    manifest["train_seconds"]["ensemble"] = time.perf_counter() - started
    (model / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return model


def write_parses(path: Path, raw: list, parses: list[Parse]) -> None:  # type: ignore[type-arg]
    """``raw`` with ``parses``' heads, labels and tags."""
    path.write_text(format_conllu(with_parse(r, p, tags=True) for r, p in zip(raw, parses, strict=True)),
                    encoding="utf-8")


def write_probabilities(path: Path, parses: list[Parse]) -> None:
    """Each parse's ``arc_scores`` (a confident member's probabilities; ROOT's as null), as JSON."""
    path.write_text(json.dumps([[None if not np.isfinite(x) else round(float(x), 6) for x in p.arc_scores]
                                if p.arc_scores is not None else None for p in parses]), encoding="utf-8")


OUTPUT_EXTRAS = ("upos", "upos_p", "label_p", "head_top")
"""The parse extras the detector's output columns read (``parsing.detect.features.output_features``)."""


def write_output_extras(path: Path, parses: list[Parse]) -> None:
    """Each parse's :data:`OUTPUT_EXTRAS` that it has, as JSON."""
    kept = [{key: p.extras[key] for key in OUTPUT_EXTRAS if key in p.extras} for p in parses]
    path.write_text(json.dumps(kept),
                    encoding="utf-8")


def read_parses(path: Path) -> list[Sentence]:
    """Parses written by :func:`write_parses`, as sentences (their tags are the parser's)."""
    return [to_sentence(s) for s in read_conllu(path)]


def scored_trees(folder: Path, split: str, names: list[str], gold: list[Sentence] | None = None
                 ) -> list[ScoredTree]:
    """The ensemble's trees of ``split`` (or the ``gold`` trees, tagged as given) with every
    member's parse, from the cache."""
    ensemble = read_parses(folder / split / "ensemble.conllu")
    members = {name: read_parses(folder / split / f"{name}.conllu") for name in names}
    probabilities = {name: json.loads(path.read_text()) for name in names
                     if (path := folder / split / f"{name}.probabilities.json").is_file()}
    extras = {name: json.loads(path.read_text()) for name in names
              if (path := folder / split / f"{name}.extras.json").is_file()}
    trees = []
    for i, tree in enumerate(ensemble if gold is None else gold):
        parses = {name: Parse(members[name][i].heads, members[name][i].deprels,
                              arc_scores=_scores(probabilities[name][i]) if name in probabilities else None,
                              extras=dict(extras[name][i]) if name in extras else {})
                  for name in names}
        trees.append(ScoredTree(tree, tree.heads, list(tree.deprels), parses, given=gold is not None))
    return trees


def _scores(values: list[float | None] | None) -> np.ndarray | None:  # type: ignore[type-arg]
    return None if values is None else np.array([np.nan if x is None else x for x in values])


def head_shares(trees: list[ScoredTree], names: list[str], weights: list[float]) -> np.ndarray:  # type: ignore[type-arg]
    """Each scored word's head vote share, shape ``(W,)``."""
    return np.concatenate([
        vote_share(np.stack([t.member_parses[n].heads for n in names]), weights, t.heads)[1:] for t in trees])


def labelled_shares(trees: list[ScoredTree], names: list[str], weights: list[float]) -> np.ndarray:  # type: ignore[type-arg]
    """Each scored word's head + universal label vote share, shape ``(W,)``."""
    from parsing.detect.features import vote_features

    return np.concatenate([vote_features(np.stack([t.member_parses[n].heads for n in names]),
                                         [t.member_parses[n].deprels for n in names], weights,
                                         t.heads, t.deprels)[:, 1] for t in trees])


def measure(treebank: Path, folder: Path, params: dict[str, object], seed: int,
            copies: int, confident: list[str] | None = None, outputs: bool = False) -> dict[str, object]:
    """Fit on dev, evaluate on test (ensemble trees and corrupted gold trees); one result row.
    ``confident``: the members whose arc probabilities are read (``None``: every member that gives
    them; ``[]``: none); ``outputs``: their own tags and probabilities too (the output columns).

    Raises:
        ValueError: a ``confident`` name that is not a member giving arc probabilities."""
    train_path, dev_path, test_path = split_files(treebank)
    assert dev_path is not None
    train = [to_sentence(s) for s in read_conllu(train_path)]
    dev_gold = [to_sentence(s) for s in read_conllu(dev_path)]
    test_gold = [to_sentence(s) for s in read_conllu(test_path)]
    bundle = load_models(json.loads((folder / "parsed.json").read_text()).get("model", folder / "model"))
    names, weights = member_weights(bundle)
    started = time.perf_counter()
    dev_trees = scored_trees(folder, "dev", names)
    giving = confident_members(bundle, names)
    if confident is None:
        confident = giving
    elif strangers := sorted(set(confident) - set(giving)):
        raise ValueError(f"{', '.join(strangers)}: not among the members that give arc probabilities "
                         f"({', '.join(giving)})")
    detector = fit_detector(train, dev_trees, dev_gold, names, weights, params=params, random_state=seed,
                            synthetic_copies=copies, confident=confident, read_outputs=outputs)
    fit_s = time.perf_counter() - started
    parsed = ~detector.training_given
    test_trees = scored_trees(folder, "test", names)
    started = time.perf_counter()
    p = np.concatenate(detector.score(test_trees))
    score_s = time.perf_counter() - started
    wrong = wrong_arcs(test_trees, test_gold)
    shares = head_shares(test_trees, names, weights)
    labelled = labelled_shares(test_trees, names, weights)
    las = las_of(test_gold, [Parse(t.heads, t.deprels) for t in test_trees]).las.f1
    row: dict[str, object] = {
        "treebank": treebank.name, "members": names, "ensemble": bundle.ensemble_method, "tags": bundle.tags,
        "params": {**DEFAULT_PARAMS, **params}, "seed": seed, "confident": confident,
        "outputs": detector.outputs,
        "synthetic_copies": copies,
        "dev_words": int(parsed.sum()), "dev_wrong": int(detector.training_wrong[parsed].sum()),
        "dev_jackknifed": summary(detector.training_scores[parsed], detector.training_wrong[parsed]),
        "test_las": round(100 * las, 2),
        "detector": summary(p, wrong, shares=shares),
        "baseline_1_minus_head_share": summary(1.0 - shares, wrong, shares=shares),
        "baseline_1_minus_labelled_share": summary(1.0 - labelled, wrong, shares=shares),
        "mean_p_wrong": round(float(p.mean()), 4), "test_error_rate": round(float(wrong.mean()), 4),
        "fit_s": round(fit_s, 1), "score_s": round(score_s, 1),
    }
    corrupted, changed = corrupt(test_gold, 0.02, seed=seed, labels=detector.labels)
    gold_trees = scored_trees(folder, "test", names, gold=corrupted)
    flags = np.concatenate([c[1:] for c in changed])
    p_gold = np.concatenate(detector.score(gold_trees))
    gold_labelled = labelled_shares(gold_trees, names, weights)
    row["corrupted"] = {"rate": 0.02, "arcs": int(flags.sum()),
                        "detector_in_top5": round(share_in_top(p_gold, flags, 0.05), 4),
                        "baseline_1_minus_labelled_share_in_top5":
                            round(share_in_top(1 - gold_labelled, flags, 0.05), 4),
                        "detector_auc": summary(p_gold, flags)["auc"]}
    return row


def main() -> None:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default=",".join(DEFAULT_TREEBANKS))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/arcvote-detect"))
    parser.add_argument("--models-from", type=Path,
                        help="use the members bench/ensembles.py --models trained here (TREEBANK-predicted*)")
    parser.add_argument("--ensemble", default="vote-uniform",
                        help="with --models-from: the method fitted over them when they have none")
    reading = parser.add_mutually_exclusive_group()
    reading.add_argument("--no-confidence", action="store_true",
                         help="leave out the arc probabilities of the members that give them")
    reading.add_argument("--confident",
                         help="read only these members' arc probabilities (comma-separated; default: "
                              "every member that gives them)")
    parser.add_argument("--outputs", action="store_true",
                        help="also read their own tags and probabilities (the output columns)")
    parser.add_argument("--members",
                        help="with --models-from: the members to load and combine (default: all)")
    parser.add_argument("--prepare-only", action="store_true", help="train and parse, do not evaluate")
    parser.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                        help="a boosting setting over DEFAULT_PARAMS (value read as JSON)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthetic-copies", type=int, default=SYNTHETIC_COPIES,
                        help="corrupted copies of the dev trees the detector also learns from (0: none)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "detect.jsonl")
    args = parser.parse_args()
    params = {key: json.loads(value) for key, _, value in (item.partition("=") for item in args.set)}
    for name in args.treebanks.split(","):
        started = time.perf_counter()
        folder = prepare(UD / name, args.cache, args.models_from, args.ensemble,
                         args.members.split(",") if args.members else None)
        print(f"{name}: prepared in {time.perf_counter() - started:.0f}s", file=sys.stderr)
        if args.prepare_only:
            continue
        confident = [] if args.no_confidence else args.confident.split(",") if args.confident else None
        emit(measure(UD / name, folder, params, args.seed, args.synthetic_copies, confident, args.outputs),
             args.out)


def emit(row: dict[str, object], out: Path) -> None:
    """Print a result row as a JSON line and append it to ``out``."""
    print(json.dumps(row), flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as log:
        log.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
