"""Benchmark the graph-based members (graph1, graph2) on every shared UD treebank, gold tags.

For each treebank folder with a train file: train each parser on train (dev picks the
epoch), parse test, and report UAS/LAS with the CoNLL 2018 conventions (every word,
punctuation included; universal part of DEPREL) via :func:`parsing.scorer.metrics.evaluate`,
next to UDPipe 1's gold-tag LAS and training time. Everything runs on one thread (BLAS/OpenMP
pinned to 1 before numpy loads). Times are given as CPU seconds of this process
(``time.process_time``), which on a shared machine measures the work done on one core; wall
seconds are reported too.

usage:
    .venv/bin/python bench/members_graph.py [--ud ../shared/ud] [--out bench/out]
        [--treebank NAME ...] [--member graph1|graph2 ...] [--param member.key=value ...]

Writes ``OUT/members_graph.jsonl`` (one line per treebank and member, appended) and prints a
Markdown table.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import ast  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.base import BaseParser  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.graph.first_order import FirstOrderParser  # noqa: E402
from parsing.graph.second_order import SecondOrderParser  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

ROOT_DIR = Path(__file__).resolve().parents[1]
PARSERS: dict[str, type[BaseParser]] = {"graph1": FirstOrderParser, "graph2": SecondOrderParser}
UDPIPE = {  # gold-tag test LAS and training seconds of UDPipe 1 (issue reference)
    "UD_Afrikaans-AfriBooms": (84.2, 620), "UD_Irish-IDT": (71.73, 461), "UD_Tamil-TTB": (69.53, 98),
    "UD_Telugu-MTG": (79.89, 45), "UD_Welsh-CCG": (81.6, 460), "UD_Wolof-WTB": (82.1, 392),
}


def run(treebank: Path, member: str, params: dict[str, object]) -> dict[str, object]:
    """Train and evaluate one member on one treebank."""
    train = load_sentences(next(treebank.glob("*-ud-train.conllu")))
    dev_path = next(treebank.glob("*-ud-dev.conllu"), None)
    dev = load_sentences(dev_path) if dev_path else None
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    cpu, wall = time.process_time(), time.perf_counter()
    parser = PARSERS[member](**params).fit(train, dev)
    train_cpu, train_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    parses = parser.predict(test)
    parse_cpu, parse_wall = time.process_time() - cpu, time.perf_counter() - wall
    scores = evaluate(test, parses)
    las, udpipe_s = UDPIPE.get(treebank.name, (float("nan"), float("nan")))
    return {
        "treebank": treebank.name, "member": member, "params": params,
        "UAS": round(100 * scores.uas.f1, 2), "LAS": round(100 * scores.las.f1, 2),
        "udpipe_LAS": las, "train_cpu_s": round(train_cpu, 1), "train_wall_s": round(train_wall, 1),
        "udpipe_train_s": udpipe_s, "words_per_cpu_s": round(scores.words / parse_cpu),
        "words_per_wall_s": round(scores.words / parse_wall), "test_words": scores.words,
        "epochs": getattr(parser, "n_iter_", None),
        "dev_uas": [round(100 * u, 2) for u in getattr(parser, "dev_uas_", [])],
    }  # fmt: skip


def row(result: dict[str, object]) -> str:
    """One Markdown table row."""
    keys = ("treebank", "member", "UAS", "LAS", "udpipe_LAS", "train_cpu_s", "udpipe_train_s",
            "words_per_cpu_s", "epochs")
    return "| " + " | ".join(str(result[key]) for key in keys) + " |"


def main() -> None:
    """Command-line entry point."""
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--ud", type=Path, default=ROOT_DIR.parent / "shared" / "ud")
    arguments.add_argument("--out", type=Path, default=ROOT_DIR / "bench" / "out")
    arguments.add_argument("--treebank", action="append", default=[])
    arguments.add_argument("--member", action="append", choices=sorted(PARSERS), default=[])
    arguments.add_argument("--param", action="append", default=[],
                           help="hyperparameter, e.g. graph2.prune_k=8 (value: a Python literal)")
    options = arguments.parse_args()
    params: dict[str, dict[str, object]] = {name: {} for name in PARSERS}
    for item in options.param:
        target, value = item.split("=", 1)
        member, key = target.split(".", 1)
        params[member][key] = ast.literal_eval(value)
    treebanks = sorted(path for path in options.ud.iterdir() if next(path.glob("*-ud-train.conllu"), None))
    if options.treebank:
        treebanks = [path for path in treebanks if path.name in options.treebank]
    options.out.mkdir(parents=True, exist_ok=True)
    print("| treebank | member | UAS | LAS | UDPipe LAS | train CPU s | UDPipe train s | words/CPU s "
          "| epochs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for treebank in treebanks:
        for member in options.member or sorted(PARSERS):
            result = run(treebank, member, params[member])
            with (options.out / "members_graph.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result) + "\n")
            print(row(result), flush=True)


if __name__ == "__main__":
    main()
