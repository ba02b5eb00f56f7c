"""Which members should a round train by default? Accuracy, training time and speed of member sets.

For each treebank of ``../shared/ud`` with a train file: train every member once (gold tags,
default hyperparameters, dev picks epochs, one thread), parse test with each, then combine
every member set named below with the measured default method
(:data:`parsing.ensemble.registry.DEFAULT_METHOD`, which needs no tuning data), so all sets
are compared on the same trained members in the same run. A set's round time is the sum of
its members' training seconds (what a round on one worker costs); its parse time is the sum
of its members' parse seconds plus the combination.

    .venv/bin/python bench/member_sets.py                          # the six treebanks (about 1 h)
    .venv/bin/python bench/member_sets.py --treebanks UD_Wolof-WTB
    .venv/bin/python bench/member_sets.py --report                 # table from bench/out/member_sets.jsonl

Writes one JSON line per (treebank, set) to ``bench/out/member_sets.jsonl``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

from members import REPO, SHARED, split_files  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD, fit_ensemble  # noqa: E402
from parsing.members import member_names  # noqa: E402
from parsing.pipeline import load_models, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

OUT = REPO / "bench" / "out"
SETS: dict[str, list[str]] = {
    "all nine": member_names(),
    "graph1,eager,hybrid (app default before)": ["graph1", "eager", "hybrid"],
    "graph1,graph2,eager,hybrid,neural": ["graph1", "graph2", "eager", "hybrid", "neural"],
    "graph1 + six transition": ["graph1", "eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl"],
}
TREEBANKS = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG",
             "UD_Welsh-CCG", "UD_Wolof-WTB")


def measure(treebank: str, models: Path) -> list[dict[str, object]]:
    """Train every member once, then score and time every set of :data:`SETS`."""
    train_file, dev_file, test_file = split_files(SHARED / "ud" / treebank)
    train, test = load_sentences(train_file), load_sentences(test_file)
    dev = load_sentences(dev_file) if dev_file else None
    out = models / treebank
    train_seconds = train_models(train, dev, out, names=member_names(), tags="gold")
    bundle = load_models(out)
    parses, parse_seconds = {}, {}
    for name in bundle.parsers:
        started = time.perf_counter()
        parses[name] = bundle.parsers[name].predict(test)
        parse_seconds[name] = time.perf_counter() - started
    words = sum(len(s) for s in test)
    rows = []
    for label, names in SETS.items():
        fitted = {name: bundle.parsers[name] for name in names}
        ensemble, used = fit_ensemble(DEFAULT_METHOD, fitted, train, dev)
        started = time.perf_counter()
        combined = ensemble.combine_all(test, [parses[name] for name in used])
        combine_s = time.perf_counter() - started
        scores = evaluate(test, combined)
        best = max(names, key=lambda name: evaluate(test, parses[name]).las.f1)
        rows.append({
            "treebank": treebank, "set": label, "members": names, "method": DEFAULT_METHOD,
            "las": round(100 * scores.las.f1, 2), "uas": round(100 * scores.uas.f1, 2),
            "best_member": best, "best_member_las": round(100 * evaluate(test, parses[best]).las.f1, 2),
            "round_train_s": round(sum(train_seconds[name] for name in names), 1),
            "parse_words_per_s": round(words / (sum(parse_seconds[name] for name in names) + combine_s)),
        })
    return rows


def report(path: Path) -> str:
    """Markdown: per treebank LAS, round training time and words/s of every set; then means."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = ["| treebank | set | test LAS | best member | round training s | words/s |",
             "|---|---|---|---|---|---|"]
    by_set: dict[str, list[dict[str, float]]] = defaultdict(list)
    for row in rows:
        lines.append(f"| {row['treebank']} | {row['set']} | {row['las']:.2f} | "
                     f"{row['best_member']} {row['best_member_las']:.2f} | {row['round_train_s']:.0f} | "
                     f"{row['parse_words_per_s']:,} |")
        by_set[row["set"]].append(row)
    lines += ["", "| set | mean test LAS | mean round training s | mean words/s | treebanks |",
              "|---|---|---|---|---|"]
    for label, found in by_set.items():
        lines.append(f"| {label} | {statistics.mean(r['las'] for r in found):.2f} | "
                     f"{statistics.mean(r['round_train_s'] for r in found):.0f} | "
                     f"{statistics.mean(r['parse_words_per_s'] for r in found):,.0f} | {len(found)} |")
    return "\n".join(lines)


def main() -> None:
    """Measure the chosen treebanks (appending to the JSON lines), or print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebanks", default=",".join(TREEBANKS))
    parser.add_argument("--models", type=Path, default=OUT / "member_sets_models")
    parser.add_argument("--out", type=Path, default=OUT / "member_sets.jsonl")
    parser.add_argument("--report", action="store_true", help="only print the table of --out")
    args = parser.parse_args()
    if not args.report:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        for treebank in args.treebanks.split(","):
            for row in measure(treebank, args.models):
                with args.out.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    print(report(args.out))


if __name__ == "__main__":
    main()
