"""The ``lstm-hybrid`` member trained with an annealing phase (``anneal``), gold tags: its best
greedy dev LAS before the phase and after it, from one training (the first phase is the training
without it), and the beam-search dev and test LAS of the model kept. One JSON line per treebank.

    OMP_NUM_THREADS=1 .venv/bin/python bench/lstm_hybrid_anneal.py --treebanks UD_Telugu-MTG,UD_Tamil-TTB \\
        --anneal 10 --seed 0 --out bench/results/lstm-hybrid-anneal.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import UD, split_files  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.lstm_transition.member import LSTMTransitionParser  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402


def run(treebank: str, anneal: int, seed: int) -> dict[str, object]:
    """Train on the treebank's train file (dev picks the epoch) and report both phases."""
    train_path, dev_path, test_path = split_files(UD / treebank)
    if dev_path is None:
        raise SystemExit(f"{treebank} has no dev file: the annealing phase is chosen on dev")
    train, dev, test = (load_sentences(path) for path in (train_path, dev_path, test_path))
    started = time.perf_counter()
    parser = LSTMTransitionParser(anneal=anneal, random_state=seed).fit(train, dev)
    history = parser.history_
    first = history["annealed_after"] or len(history["dev_las"])
    return {"treebank": treebank, "anneal": anneal, "seed": seed,
            "best_before": max(history["dev_las"][:first]), "best": max(history["dev_las"]),
            "epochs": len(history["dev_las"]), "annealed_after": history["annealed_after"],
            "best_epoch": history["best_epoch"],
            "dev_LAS_beam": round(100 * evaluate(dev, parser.predict(dev)).las.f1, 2),
            "test_LAS_beam": round(100 * evaluate(test, parser.predict(test)).las.f1, 2),
            "train_s": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default="UD_Telugu-MTG,UD_Tamil-TTB")
    parser.add_argument("--anneal", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("bench/results/lstm-hybrid-anneal.jsonl"))
    args = parser.parse_args()
    for treebank in args.treebanks.split(","):
        row = run(treebank, args.anneal, args.seed)
        print(json.dumps(row), flush=True)
        with args.out.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
