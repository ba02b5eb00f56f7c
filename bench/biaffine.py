"""Benchmark of the ``biaffine`` member (issue #33): the joint tagger-parser alone, predicted tags
(its own), on the shared UD treebanks.

Per treebank: train on train (early stopping on dev, a wall-clock budget), parse dev and test, and
score the system files with the official CoNLL 2018 scorer (``udtools.udeval``): UPOS, XPOS,
UFeats, Lemmas, UAS, LAS; the project's scorer (:mod:`parsing.scorer`) gives LAS and UPOS beside
them as a cross-check. Also training seconds, parse words/s (one process, ``--threads`` torch
threads), the model file's size, and the committed baseline of the same treebank with predicted
tags (``bench/results/ensembles/predicted-*.jsonl``: today's tagger's UPOS, the best member's LAS,
UDPipe 1's LAS). One JSON line per treebank goes to ``--out``.

    OMP_NUM_THREADS=1 .venv/bin/python bench/biaffine.py --treebanks UD_Tamil-TTB,UD_Telugu-MTG \\
        --max-seconds 600 --out bench/results/biaffine.jsonl
    .venv/bin/python bench/biaffine.py --report bench/results/biaffine.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from udtools import udeval

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import REPO, UD, split_files  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.conllu_io import format_conllu, read_conllu, to_sentence, with_parse  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

METRICS = ("UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS")
BASELINES = sorted((REPO / "bench" / "results" / "ensembles").glob("predicted-*.jsonl"))
DEFAULT = "UD_Tamil-TTB,UD_Telugu-MTG,UD_Wolof-WTB,UD_Afrikaans-AfriBooms,UD_Welsh-CCG,UD_Irish-IDT"


def baseline(treebank: str) -> dict[str, Any]:
    """Today's predicted-tag numbers of ``treebank`` (test): tagger UPOS, best member, UDPipe 1."""
    rows = [json.loads(line) for path in BASELINES
            if path.name in ("predicted-five.jsonl", "predicted-irish.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for row in rows if row.get("treebank") == treebank and row.get("tags") == "predicted"]
    members = [row for row in rows if row.get("kind") == "member"]
    best = max(members, key=lambda row: row["LAS"]) if members else None
    tagger = next((row for row in rows if row.get("kind") == "tagger"), None)
    udpipe = next((row for row in rows if row.get("kind") == "udpipe1"), None)
    return {"tagger_UPOS": tagger and tagger["UPOS"], "best_member": best and best["parser"],
            "best_member_LAS": best and best["LAS"], "udpipe1_LAS": udpipe and udpipe["LAS"],
            "udpipe1_UPOS": udpipe and udpipe["UPOS"]}


def row_device(parser: BiaffineParser) -> str:
    """Where ``parser`` trained (``cpu`` or ``cuda``)."""
    return str(parser.history_["device"])


def score_split(parser: BiaffineParser, gold_path: Path, system_path: Path) -> dict[str, Any]:
    """Parse ``gold_path``'s sentences, write the system file, score it both ways."""
    raw = read_conllu(gold_path)
    gold = [to_sentence(sentence) for sentence in raw]
    started = time.perf_counter()
    parses = parser.predict(gold)
    seconds = time.perf_counter() - started
    written = (with_parse(r, p, tags=True) for r, p in zip(raw, parses, strict=True))
    system_path.write_text(format_conllu(written), encoding="utf-8")
    official = udeval.evaluate(udeval.load_conllu_file(str(gold_path)),
                               udeval.load_conllu_file(str(system_path)))
    ours = evaluate(gold, parses)
    words = sum(len(s) for s in gold)
    result: dict[str, Any] = {name: round(100 * official[name].f1, 2) for name in METRICS}
    result["project_LAS"] = round(100 * ours.las.f1, 2)
    result["project_UPOS"] = round(100 * ours.upos.f1, 2) if ours.upos is not None else None
    result["words"], result["parse_words_per_s"] = words, round(words / seconds)
    return result


def run(treebank: str, args: argparse.Namespace, params: dict[str, Any]) -> dict[str, Any]:
    train_path, dev_path, test_path = split_files(UD / treebank)
    train = [to_sentence(s) for s in read_conllu(train_path)]
    dev = [to_sentence(s) for s in read_conllu(dev_path)] if dev_path else None
    parser = BiaffineParser(random_state=args.seed, max_seconds=args.max_seconds, threads=args.threads,
                            device=args.device, verbose=True, **params)
    started = time.perf_counter()
    parser.fit(train, dev)
    train_seconds = time.perf_counter() - started
    out = Path(args.models) / f"{treebank}-seed{args.seed}{args.tag}"
    out.mkdir(parents=True, exist_ok=True)
    parser.save(out / "biaffine.model")
    row: dict[str, Any] = {"treebank": treebank, "tags": "predicted", "parser": "biaffine", "seed": args.seed,
                           "params": params, "max_seconds": args.max_seconds, "threads": args.threads,
                           "train_s": round(train_seconds, 1), "history": parser.history_,
                           "model_mb": round((out / "biaffine.model").stat().st_size / 2**20, 2),
                           "device": row_device(parser), "torch": torch.__version__,
                           "gpu": torch.cuda.get_device_name() if row_device(parser) == "cuda" else None}
    if dev_path:
        row["dev"] = score_split(parser, dev_path, out / "dev.conllu")
    row["test"] = score_split(parser, test_path, out / "test.conllu")
    row["baseline_test"] = baseline(treebank)
    return row


def report(paths: list[str]) -> None:
    """A markdown table of the JSON lines: dev and test metrics, and the gains on test."""
    rows = [json.loads(line) for path in paths
            for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    print("| treebank | split | " + " | ".join(METRICS)
          + " | best member LAS | Δ LAS | tagger UPOS | Δ UPOS |")
    print("|---" * (len(METRICS) + 6) + "|")
    for row in rows:
        base = row["baseline_test"]
        for split in ("dev", "test"):
            if split not in row:
                continue
            cells = [str(row[split][m]) for m in METRICS]
            extra = ["", "", "", ""]
            if split == "test" and base["best_member_LAS"] is not None:
                extra = [f"{base['best_member']} {base['best_member_LAS']}",
                         f"{row['test']['LAS'] - base['best_member_LAS']:+.2f}", str(base["tagger_UPOS"]),
                         f"{row['test']['UPOS'] - base['tagger_UPOS']:+.2f}"]
            print(f"| {row['treebank']} | {split} | " + " | ".join(cells + extra) + " |")


def _spread(values: np.ndarray[Any, Any]) -> str:
    """``mean ± sample sd`` of ``values`` (the value alone for one)."""
    return f"{values.mean():.2f} ± {values.std(ddof=1):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def seeds_report(paths: list[str]) -> None:
    """Per treebank and variant (device, settings) the seeds' test LAS and UPOS as mean ± sample
    standard deviation, against the best feature-based member and the tagger (each row: the
    stopping reasons, so a budget-bound run shows)."""
    rows = [json.loads(line) for path in paths
            for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["treebank"], row["device"], json.dumps(row["params"], sort_keys=True))
        groups.setdefault(key, []).append(row)
    print("| treebank | device | settings | seeds | test LAS | Δ best member | test UPOS | Δ tagger "
          "| stopped |")
    print("|---" * 9 + "|")
    gains: dict[tuple[str, str], list[float]] = {}
    for (treebank, device, params), group in sorted(groups.items()):
        las = np.array([row["test"]["LAS"] for row in group])
        upos = np.array([row["test"]["UPOS"] for row in group])
        base = group[0]["baseline_test"]
        gain = las.mean() - base["best_member_LAS"]
        gains.setdefault((device, params), []).append(gain)
        stops = ", ".join(sorted(row["history"]["stopped"] for row in group))
        seeds = ",".join(str(row["seed"]) for row in group)
        print(f"| {treebank} | {device} | {params} | {seeds} | {_spread(las)} | {gain:+.2f} | "
              f"{_spread(upos)} | {upos.mean() - base['tagger_UPOS']:+.2f} | {stops} |")
    for (device, params), values in sorted(gains.items()):
        print(f"\nmean Δ best member, {device} {params}: {np.mean(values):+.2f} over {len(values)} treebanks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default=DEFAULT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="auto, cpu or cuda (default cpu: comparable timings)")
    parser.add_argument("--param", action="append", default=[], help="member setting NAME=VALUE (JSON value)")
    parser.add_argument("--models", default=str(REPO / "bench" / "out" / "biaffine"))
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "biaffine.jsonl"))
    parser.add_argument("--tag", default="", help="suffix of the model folder (runs side by side)")
    parser.add_argument("--report", nargs="*")
    parser.add_argument("--seeds-report", nargs="*", help="JSON lines: mean ± sd over seeds per treebank")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return
    if args.seeds_report:
        seeds_report(args.seeds_report)
        return
    params = {key: json.loads(value) for key, value in (item.split("=", 1) for item in args.param)}
    for treebank in args.treebanks.split(","):
        row = run(treebank, args, params)
        with Path(args.out).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
