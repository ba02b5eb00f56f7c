"""Benchmark every ensemble method beside its members, the oracle and UDPipe 1, in one run.

For each treebank of ``../shared/ud`` with a train file and each tag mode: train every member
once on train (dev picks epochs), parse dev and test with each (timed, one thread), then fit
every combination method on the members' dev parses (``Method.from_fitted``: tuning data is
dev, never test) and score it on test (CoNLL 2018 conventions: all words, universal DEPREL).
Stacking is measured twice: level 1 fitted on the dev parses of all members (``stack-dev``),
and as Martins et al. (2008) describe it, level 1 fitted on train with level-0 trees from
2-fold jackknifing (``stack-jk``, one level-0 member; gold tags, where the training tags are
the ones the members saw). UDPipe 1 trains and parses in a second process at the same time.

Rows (``bench/out/ensembles.jsonl``, one JSON object per line, ``kind``):
``member`` (train s, parse words/s, dev UAS, test UAS/LAS: the members' table),
``ensemble`` (test UAS/LAS, combination seconds, words/s of members + combination),
``oracle`` (a word is right when any member is right), ``udpipe1`` and ``calibration``
(arc accuracy per vote-share bucket on dev and on test, per method).

    .venv/bin/python bench/ensembles.py                                  # everything (long)
    .venv/bin/python bench/ensembles.py --treebanks UD_Telugu-MTG --tags gold
    .venv/bin/python bench/ensembles.py --report bench/out/ensembles.jsonl   # tables only
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ensemble_tables import Row, tables  # noqa: E402
from members import SHARED, finish_peer, split_files, start_peer  # noqa: E402

from parsing.base import BaseParser  # noqa: E402
from parsing.commands.parsers import parse_overrides  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble import ArcVoting, FuzzyPosVoting, MetaClassifier, MinimumBayesRisk, ScoreSum  # noqa: E402
from parsing.ensemble.base import Ensemble, stack_heads  # noqa: E402
from parsing.ensemble.confidence import calibration_report  # noqa: E402
from parsing.ensemble.stacking import Stacking  # noqa: E402
from parsing.members import is_self_tagging, member_names  # noqa: E402
from parsing.pipeline import load_models, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
Factory = Callable[[list[BaseParser], list[str]], Ensemble | None]


def _graph_only(parsers: list[BaseParser], names: list[str]) -> list[BaseParser]:
    return [p for p, n in zip(parsers, names, strict=True) if n.startswith("graph")]


METHODS: dict[str, tuple[Factory, dict[str, Any]]] = {
    "vote-uniform": (lambda p, n: ArcVoting(p, weighting="uniform"), {}),
    "vote-accuracy": (lambda p, n: ArcVoting(p, weighting="accuracy"), {}),
    "vote-power": (lambda p, n: ArcVoting(p, weighting="power", exponent=10.0), {}),
    "vote-tuned-labels": (lambda p, n: ArcVoting(p, weighting="tuned", labels="tuned"), {}),
    "vote-rank": (lambda p, n: ArcVoting(p, weighting="rank"), {}),
    "vote-tuned": (lambda p, n: ArcVoting(p, weighting="tuned"), {}),
    "fuzzy-pos": (lambda p, n: FuzzyPosVoting(p), {}),
    "score-sum": (lambda p, n: ScoreSum(_graph_only(p, n)) if len(_graph_only(p, n)) > 1 else None,
                  {"graph_only": True}),
    "meta-svm": (lambda p, n: MetaClassifier(p), {}),
    "mbr": (lambda p, n: MinimumBayesRisk(p, weighting="uniform"), {}),
    "mbr-power": (lambda p, n: MinimumBayesRisk(p, weighting="power", exponent=10.0), {}),
    "stack-dev": (lambda p, n: Stacking(p, preset="E"), {}),
}
"""Methods compared over one set of fitted members, each fitted on the members' dev parses."""


def score(gold: Sequence[Sentence], parses: Sequence[Parse]) -> tuple[float, float]:
    """(UAS, LAS) in percent, CoNLL 2018 conventions."""
    result = evaluate(gold, parses)
    return round(100 * result.uas.f1, 2), round(100 * result.las.f1, 2)


def own_upos(gold: Sequence[Sentence], parses: Sequence[Parse]) -> float:
    """UPOS accuracy (percent) of a self-tagging member's own tags (``Parse.upos``) on ``gold``."""
    pairs = [(g, t) for sentence, parse in zip(gold, parses, strict=True) if parse.upos is not None
             for g, t in zip(sentence.upos[1:], parse.upos[1:], strict=True)]
    return round(100 * sum(g == t for g, t in pairs) / max(len(pairs), 1), 2)


def oracle_parses(gold: Sequence[Sentence], member_parses: Sequence[Sequence[Parse]]) -> list[Parse]:
    """Per word, a member's head and label that is right if any member's is (else member 0's).

    Labelled oracle: a member counts only when head and universal label are both right,
    falling back to a member with the right head. Not a tree in general (an upper bound).
    """
    out: list[Parse] = []
    for i, sentence in enumerate(gold):
        parses = [member[i] for member in member_parses]
        heads = stack_heads(parses)
        chosen_heads = heads[0].copy()
        chosen_labels = list(parses[0].deprels)
        for dep in range(1, len(sentence.heads)):
            gold_label = sentence.deprels[dep].split(":")[0]
            right_head = np.flatnonzero(heads[:, dep] == sentence.heads[dep])
            if right_head.size == 0:
                continue
            full = [m for m in right_head.tolist() if parses[m].deprels[dep].split(":")[0] == gold_label]
            pick = full[0] if full else int(right_head[0])
            chosen_heads[dep] = heads[pick, dep]
            chosen_labels[dep] = parses[pick].deprels[dep]
        out.append(Parse(heads=chosen_heads, deprels=chosen_labels))
    return out


def timed_predict(parser: BaseParser, sentences: Sequence[Sentence]) -> tuple[list[Parse], float]:
    started = time.perf_counter()
    parses = parser.predict(sentences)
    return parses, time.perf_counter() - started


def run_one(treebank: Path, mode: str, names: list[str], work: Path, stack_member: str | None,
            methods: list[str] | None = None, subsets: dict[str, list[str]] | None = None,
            params: dict[str, dict[str, Any]] | None = None, variant: str = "", jobs: int = 1,
            tag_source: str = "auto") -> list[Row]:
    """Train members once, then measure members, oracle and every method on test.

    A model directory already in ``work`` (from an earlier run with ``--models``) is reused:
    its training seconds come from its manifest.
    """
    train_path, dev_path, test_path = split_files(treebank)
    train, test = load_sentences(train_path), load_sentences(test_path)
    dev = load_sentences(dev_path) if dev_path else None
    if dev is None:
        raise SystemExit(f"{treebank.name} has no dev split; the ensembles tune on dev")
    base = {"treebank": treebank.name, "tags": mode, **({"variant": variant} if variant else {})}
    model_dir = work / (f"{treebank.name}-{mode}" + (f"-{variant}" if variant else ""))
    manifest = model_dir / "manifest.json"
    if manifest.is_file() and set(names) <= set(json.loads(manifest.read_text())["parsers"]):
        seconds = json.loads(manifest.read_text())["train_seconds"]
    else:
        seconds = train_models(train, dev, model_dir, names=names, tags=mode,  # type: ignore[arg-type]
                               params=params, jobs=jobs)
    bundle = load_models(model_dir, names)
    if tag_source == "tagger":  # the tagger's tags even where the model chose a member's
        bundle.tag_source = None
    dev_in, test_in = bundle.prepare(dev), bundle.prepare(test)
    test_words = sum(len(s) for s in test)
    rows: list[Row] = []

    def emit(row: Row) -> None:
        rows.append({**base, **row})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)

    if mode == "predicted":
        folds = bundle.manifest.get("member_folds")  # the members' training tags from the member's folds
        fold_seconds = float(folds["seconds"]) if folds else 0.0
        right = sum(g == t for gold, seen in zip(test, test_in, strict=True)
                    for g, t in zip(gold.upos[1:], seen.upos[1:], strict=True))
        emit({"kind": "tagger", "parser": "tagger", "UPOS": round(100 * right / test_words, 2),
              "source": bundle.tag_source or "tagger", "dev_upos": bundle.manifest.get("dev_upos"),
              "member_folds": folds, "round_train_s": round(sum(seconds.values()) + fold_seconds, 1)})
    parsers = [bundle.parsers[name] for name in names]
    dev_parses, test_parses, member_seconds = [], [], []
    for name, parser in zip(names, parsers, strict=True):
        on_dev, _ = timed_predict(parser, dev_in)
        on_test, spent = timed_predict(parser, test_in)
        dev_parses.append(on_dev)
        test_parses.append(on_test)
        member_seconds.append(spent)
        uas, las = score(test, on_test)
        dev_uas, dev_las = score(dev, on_dev)
        own_tags = {"UPOS": own_upos(test, on_test)} if is_self_tagging(name) else {}
        emit({"kind": "member", "parser": name, "UAS": uas, "LAS": las, "dev_UAS": dev_uas,
              "dev_LAS": dev_las, "train_s": round(seconds[name] + seconds.get("tagger", 0.0), 1),
              "parse_words_per_s": round(test_words / spent), **own_tags})
    uas, las = score(test, oracle_parses(test, test_parses))
    emit({"kind": "oracle", "parser": "oracle", "UAS": uas, "LAS": las})

    groups = {"": list(range(len(names)))} | {
        label: [names.index(n) for n in chosen if n in names] for label, chosen in (subsets or {}).items()}
    for label, indices in groups.items():
        for method, (factory, options) in METHODS.items():
            if methods and method not in methods:
                continue
            sub = [names[i] for i in indices]
            try:
                rows_for = _run_method(method, factory, options, sub, [parsers[i] for i in indices], dev_in,
                                       dev, [dev_parses[i] for i in indices], test_in, test,
                                       [test_parses[i] for i in indices],
                                       [member_seconds[i] for i in indices], test_words)
            except Exception as error:  # noqa: BLE001 - one method failing must not lose the run
                traceback.print_exc()
                rows_for = [{"kind": "error", "parser": method, "error": repr(error)}]
            for row in rows_for:
                emit({**row, "parser": f"{row['parser']}[{label}]" if label else row["parser"]})

    if stack_member and mode == "gold" and stack_member in names and (not methods or "stack-jk" in methods):
        emit(_stack_jackknifed(stack_member, bundle.parsers[stack_member], train, dev, test_in, test,
                               member_seconds[names.index(stack_member)], test_words))
    return rows


def _run_method(method: str, factory: Factory, options: dict[str, Any], names: list[str],
                parsers: list[BaseParser], dev_in: list[Sentence], dev: list[Sentence],
                dev_parses: list[list[Parse]], test_in: list[Sentence], test: list[Sentence],
                test_parses: list[list[Parse]], member_seconds: list[float], test_words: int) -> list[Row]:
    keep = [i for i, n in enumerate(names) if n.startswith("graph")] if options.get("graph_only") \
        else list(range(len(names)))
    chosen = [parsers[i] for i in keep]
    prototype = factory(parsers, names)
    if prototype is None:
        return []
    params = {k: v for k, v in prototype.get_params(deep=False).items() if k != "members"}
    started = time.perf_counter()
    ensemble = type(prototype).from_fitted(chosen, dev_in, [dev_parses[i] for i in keep], **params)
    fit_s = time.perf_counter() - started
    started = time.perf_counter()
    on_test = ensemble.combine_all(test_in, [test_parses[i] for i in keep])
    combine_s = time.perf_counter() - started
    on_dev = ensemble.combine_all(dev_in, [dev_parses[i] for i in keep])
    uas, las = score(test, on_test)
    total_s = combine_s + sum(member_seconds[i] for i in keep)
    rows: list[Row] = [{"kind": "ensemble", "parser": method, "UAS": uas, "LAS": las,
                        "members": [names[i] for i in keep], "fit_s": round(fit_s, 2),
                        "combine_words_per_s": round(test_words / combine_s),
                        "parse_words_per_s": round(test_words / total_s), "dev_UAS": score(dev, on_dev)[0],
                        "dev_LAS": score(dev, on_dev)[1]}]
    for split, gold, parses, member_parses in (("dev", dev, on_dev, [dev_parses[i] for i in keep]),
                                               ("test", test, on_test, [test_parses[i] for i in keep])):
        buckets = calibration_report(gold, parses, member_parses)
        rows.append({"kind": "calibration", "parser": method, "split": split,
                     "buckets": [b.to_dict() for b in buckets]})
    return rows


def _stack_jackknifed(name: str, fitted: BaseParser, train: list[Sentence], dev: list[Sentence],
                      test_in: list[Sentence], test: list[Sentence], member_s: float, words: int) -> Row:
    """Martins et al.'s stacking: level 0 ``name`` jackknifed (L=2) on train, level 1 fitted there."""
    started = time.perf_counter()
    stack = Stacking([name], preset="E", tuning_folds=2, random_state=0)
    level0 = stack.jackknife_parses(train)
    stack.members_ = [fitted]
    stack.level1_ = stack._level1().fit_stacked(train, level0, dev, stack.member_predict(dev))
    fit_s = time.perf_counter() - started
    on_test_members = stack.member_predict(test_in)
    started = time.perf_counter()
    on_test = stack.combine_all(test_in, on_test_members)
    combine_s = time.perf_counter() - started
    uas, las = score(test, on_test)
    return {"kind": "ensemble", "parser": f"stack-jk({name})", "UAS": uas, "LAS": las, "members": [name],
            "fit_s": round(fit_s, 1), "combine_words_per_s": round(words / combine_s),
            "parse_words_per_s": round(words / (combine_s + member_s))}


# --------------------------------------------------------------------------- report


def main() -> None:
    """Run the benchmark (or only print the tables of earlier runs); see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", help="comma-separated folder names (default: all with train)")
    parser.add_argument("--tags", default="gold,predicted", help="gold, predicted or both")
    parser.add_argument("--parsers", help="comma-separated members (default: all)")
    parser.add_argument("--stack-member", default="eager", help="level 0 of stack-jk ('' to skip)")
    parser.add_argument("--no-peer", action="store_true", help="skip UDPipe 1")
    parser.add_argument("--peer-out", type=Path, default=REPO.parent / "peer-out",
                        help="UDPipe 1's models and outputs (kept for bench/ensemble_speed.py)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "ensembles.jsonl")
    parser.add_argument("--report", type=Path, nargs="+",
                        help="print the tables of these JSONL files and stop")
    parser.add_argument("--calibrate", default="vote-uniform", help="method of the calibration table")
    parser.add_argument("--models", type=Path, help="keep (and reuse) the trained models in this folder")
    parser.add_argument("--methods", help="comma-separated methods to run (default: all, and stack-jk)")
    parser.add_argument("--subsets", default="",
                        help="also combine member subsets: 'LABEL=a,b,c;LABEL2=...' (method[LABEL] rows)")
    parser.add_argument("--set", action="append", default=[], metavar="MEMBER.PARAM=VALUE",
                        help="training hyperparameters, as `python -m parsing train --set` "
                             "(e.g. tagger.jackknife_seeds=3); give a --variant with them")
    parser.add_argument("--jobs", type=int, default=1,
                        help="train the members in this many processes (wall time; train s stay per member)")
    parser.add_argument("--variant", default="",
                        help="name of a training variant: its models go to TREEBANK-TAGS-VARIANT and "
                             "its rows carry it (tables show it beside the tags)")
    parser.add_argument("--tag-source", choices=("auto", "tagger"), default="auto",
                        help="predicted tags: the model's choice (the neural member's UPOS where it tagged "
                             "dev better) or always the tagger's; same models, parse only")
    args = parser.parse_args()
    if args.set and not args.variant:
        parser.error("--set changes training: name the variant with --variant")
    overrides = parse_overrides(args.set)
    if args.report:
        rows = [json.loads(line) for path in args.report
                for line in path.read_text(encoding="utf-8").splitlines() if line]
        print(tables(rows, args.calibrate))
        return
    names = member_names(args.parsers)
    subsets = {label: member_names(members) for label, _, members in
               (item.partition("=") for item in args.subsets.split(";") if item.strip())}
    chosen = args.treebanks.split(",") if args.treebanks else None
    available = [t for t in sorted((SHARED / "ud").iterdir())
                 if t.is_dir() and any(t.glob("*-ud-train.conllu"))]
    treebanks = [t for name in chosen for t in available if t.name == name] if chosen else available
    all_rows: list[Row] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, args.out.open("a", encoding="utf-8") as log:
        work = args.models or Path(tmp)
        for mode in args.tags.split(","):
            for treebank in treebanks:
                peer = None if args.no_peer else start_peer(treebank, mode, args.peer_out / treebank.name)
                rows = run_one(treebank, mode, names, work, args.stack_member or None,
                               args.methods.split(",") if args.methods else None, subsets,
                               overrides, args.variant, args.jobs, args.tag_source)
                if peer is not None:
                    rows.append({"kind": "udpipe1", **finish_peer(peer, treebank, mode)})
                for row in rows:
                    log.write(json.dumps(row) + "\n")
                log.flush()
                all_rows.extend(rows)
    print(tables(all_rows, args.calibrate))


if __name__ == "__main__":
    main()
