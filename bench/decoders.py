"""Throughput of the tree decoders on random scores, on one core.

For every decoder and sentence length ``n`` it decodes a fixed set of random score
matrices, repeats the timing a few times, and reports the median sentences per second.

    .venv/bin/python bench/decoders.py                # n = 10, 20, 40, 80
    .venv/bin/python bench/decoders.py --lengths 20 --repeats 7

Prints a Markdown table and one JSON line (``{"bench": "decoders", ...}``).
Goal (issue): Eisner >= 500 sentences/s at n = 20.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

from parsing.decoders.first_order import chu_liu_edmonds, eisner  # noqa: E402
from parsing.decoders.second_order import eisner_second_order  # noqa: E402

Decoder = Callable[[NDArray[np.float64], NDArray[np.float64]], object]

DECODERS: dict[str, Decoder] = {
    "eisner": lambda arcs, sibs: eisner(arcs),
    "chu_liu_edmonds": lambda arcs, sibs: chu_liu_edmonds(arcs),
    "chu_liu_edmonds (multi-root)": lambda arcs, sibs: chu_liu_edmonds(arcs, single_root=False),
    "eisner_second_order": lambda arcs, sibs: eisner_second_order(arcs, sibs),
}


def sentences_per_second(
    decoder: Decoder, inputs: list[tuple[NDArray[np.float64], NDArray[np.float64]]], repeats: int
) -> float:
    """Median over ``repeats`` runs of ``len(inputs) / seconds``."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for arcs, sibs in inputs:
            decoder(arcs, sibs)
        rates.append(len(inputs) / (time.perf_counter() - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="10,20,40,80", help="comma-separated n values")
    parser.add_argument("--sentences", type=int, default=40, help="matrices per length")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    lengths = [int(value) for value in args.lengths.split(",")]
    rng = np.random.default_rng(args.seed)
    results: dict[str, dict[str, float]] = {name: {} for name in DECODERS}
    for n in lengths:
        inputs = [
            (rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3))
            for _ in range(args.sentences)
        ]
        for name, decoder in DECODERS.items():
            decoder(*inputs[0])  # warm-up
            results[name][str(n)] = sentences_per_second(decoder, inputs, args.repeats)
    print("| decoder | " + " | ".join(f"n = {n}" for n in lengths) + " |")
    print("|---|" + "---:|" * len(lengths))
    for name, row in results.items():
        print(f"| {name} | " + " | ".join(f"{row[str(n)]:,.0f}" for n in lengths) + " |")
    print("\n(sentences per second, one core, median of", args.repeats, "repeats)")
    summary = {"bench": "decoders", "unit": "sentences/s", "repeats": args.repeats}
    print(json.dumps({**summary, "results": results}, sort_keys=True))


if __name__ == "__main__":
    main()
