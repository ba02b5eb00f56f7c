"""Prediction speed of the transition parsers: lockstep batches vs one sentence at a time.

usage: python bench/transition_speed.py [--models DIR] [--test FILE] [--names eager,swap,...] [--rounds N]

For each saved model, parses the test file with the original sentence-by-sentence algorithm
(``TransitionParser._predict_one_by_one``) and with ``predict`` (lockstep batches), checks
that heads, labels and arc scores are identical, and prints words per second of both as a
Markdown table. The machine may be loaded, so the two are timed interleaved, ``--rounds``
times each (old, new, old, new, ...), and the ratio compares the best CPU time
(``process_time``) of each in the same run. One core: BLAS/OpenMP threads are set to 1.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.persist import load_model  # noqa: E402
from parsing.transition import TransitionParser  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "bench" / "out" / "models" / "UD_Afrikaans-AfriBooms-gold" / "parsers"
TEST = ROOT.parent / "shared" / "ud" / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-test.conllu"


def timed(run: Callable[[], list[Parse]]) -> tuple[list[Parse], float, float]:
    """The parses, CPU seconds and wall-clock seconds of ``run()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    parses = run()
    return parses, time.process_time() - cpu, time.perf_counter() - wall


def identical(old: Sequence[Parse], new: Sequence[Parse]) -> bool:
    """Same heads, labels and arc scores (NaN equal to NaN) for every sentence."""
    return len(old) == len(new) and all(
        a.heads.tolist() == b.heads.tolist()
        and a.deprels == b.deprels
        and a.arc_scores is not None
        and b.arc_scores is not None
        and np.array_equal(a.arc_scores, b.arc_scores, equal_nan=True)
        for a, b in zip(old, new, strict=True)
    )


def measure(parser: TransitionParser, sentences: list[Sentence], rounds: int) -> dict[str, float | bool]:
    """Best CPU and wall seconds of old and new over interleaved rounds, and whether they agree."""
    best = {"old_cpu": np.inf, "new_cpu": np.inf, "old_wall": np.inf, "new_wall": np.inf}
    same = True
    for _ in range(rounds):
        old, old_cpu, old_wall = timed(lambda: parser._predict_one_by_one(sentences))
        new, new_cpu, new_wall = timed(lambda: parser.predict(sentences))
        same = same and identical(old, new)
        for key, value in (("old_cpu", old_cpu), ("new_cpu", new_cpu),
                           ("old_wall", old_wall), ("new_wall", new_wall)):  # fmt: skip
            best[key] = min(best[key], value)
    return {**best, "identical": same}


def main() -> None:
    arguments = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    arguments.add_argument("--models", default=str(MODELS))
    arguments.add_argument("--test", default=str(TEST))
    arguments.add_argument("--names", default="eager,swap,hybrid,eager-rtl")
    arguments.add_argument("--rounds", type=int, default=3)
    options = arguments.parse_args()
    sentences = load_sentences(options.test)
    words = sum(len(s) for s in sentences)
    print(f"{len(sentences)} sentences, {words} words from {options.test}\n")
    print("| model | old words/s | new words/s | new/old (CPU) | new/old (wall) | identical |")
    print("|---|---:|---:|---:|---:|---|")
    for name in options.names.split(","):
        parser = load_model(Path(options.models) / f"{name}.model", TransitionParser)
        result = measure(parser, sentences, options.rounds)
        cpu_ratio = result["old_cpu"] / result["new_cpu"]
        wall_ratio = result["old_wall"] / result["new_wall"]
        print(
            f"| {name} | {words / result['old_cpu']:,.0f} | {words / result['new_cpu']:,.0f} "
            f"| {cpu_ratio:.2f}x | {wall_ratio:.2f}x | {'yes' if result['identical'] else 'NO'} |",
            flush=True,
        )
        del parser


if __name__ == "__main__":
    main()
