"""Benchmark the neural transition parser (``parsing.neural``) on every UD treebank with a train file.

For each treebank of ``../shared/ud``: train on train (dev picks the epoch), parse test with
beam 1 and with the default beam, and score (CoNLL 2018 conventions: all words including
punctuation, universal part of DEPREL) with gold UPOS. Times are for one thread; parsing
speed is given both from wall-clock time and from the process's CPU time (which is what a
free core would see when other jobs share the machine). UDPipe 1's training time and
gold-tag LAS on the same treebanks are printed beside ours for reference.

    .venv/bin/python bench/member_neural.py                            # every treebank
    .venv/bin/python bench/member_neural.py --treebanks UD_Telugu-MTG --beams 1,4,8 --feats

Appends one JSON line per (treebank, beam) to ``bench/out/member_neural.jsonl`` and prints a
Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.neural import NeuralTransitionParser  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "ud"
OUT = REPO / "bench" / "out" / "member_neural.jsonl"

UDPIPE = {  # UDPipe 1: training seconds, gold-tag LAS
    "UD_Afrikaans-AfriBooms": (620, 84.2),
    "UD_Irish-IDT": (461, 71.73),
    "UD_Tamil-TTB": (98, 69.53),
    "UD_Telugu-MTG": (45, 79.89),
    "UD_Welsh-CCG": (460, 81.6),
    "UD_Wolof-WTB": (392, 82.1),
}


def run(treebank: Path, beams: list[int], seed: int, feats: bool) -> list[dict[str, object]]:
    """Train once, then parse and score test at each beam size."""
    train = load_sentences(next(treebank.glob("*-ud-train.conllu")))
    dev_path = next(treebank.glob("*-ud-dev.conllu"), None)
    dev = load_sentences(dev_path) if dev_path else None
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    wall, cpu = time.perf_counter(), time.process_time()
    parser = NeuralTransitionParser(use_feats=feats, random_state=seed).fit(train, dev)
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
    words = sum(len(sentence) for sentence in test)
    results: list[dict[str, object]] = []
    for beam in beams:
        parser.set_params(beam_size=beam)
        wall, cpu = time.perf_counter(), time.process_time()
        parses = parser.predict(test)
        parse_wall, parse_cpu = time.perf_counter() - wall, time.process_time() - cpu
        scores = evaluate(test, parses)
        udpipe_s, udpipe_las = UDPIPE.get(treebank.name, (None, None))
        results.append(
            {
                "treebank": treebank.name,
                "feats": feats,
                "beam": beam,
                "epochs": parser.n_epochs_,
                "train_s": round(train_wall, 1),
                "train_cpu_s": round(train_cpu, 1),
                "udpipe_train_s": udpipe_s,
                "words_per_s": round(words / parse_wall),
                "words_per_cpu_s": round(words / parse_cpu),
                "UAS": round(100 * scores.uas.f1, 2),
                "LAS": round(100 * scores.las.f1, 2),
                "udpipe_LAS": udpipe_las,
            }
        )
        print(json.dumps(results[-1]), flush=True)
    return results


def table(results: list[dict[str, object]]) -> str:
    """The results as a Markdown table."""
    columns = ["treebank", "feats", "beam", "epochs", "train_s", "train_cpu_s", "udpipe_train_s",
               "words_per_s", "words_per_cpu_s", "UAS", "LAS", "udpipe_LAS"]  # fmt: skip
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in results]
    return "\n".join(lines)


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    arguments.add_argument("--treebanks", help="comma-separated folder names (default: all with train)")
    arguments.add_argument("--beams", default=f"1,{NeuralTransitionParser().beam_size}")
    arguments.add_argument("--seed", type=int, default=0)
    arguments.add_argument("--feats", action="store_true", help="also embed gold FEATS (use_feats=True)")
    options = arguments.parse_args()
    names = options.treebanks.split(",") if options.treebanks else None
    treebanks = [
        folder
        for folder in sorted(UD.iterdir())
        if any(folder.glob("*-ud-train.conllu")) and (names is None or folder.name in names)
    ]
    beams = [int(beam) for beam in options.beams.split(",")]
    results: list[dict[str, object]] = []
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for treebank in treebanks:
        rows = run(treebank, beams, options.seed, options.feats)
        with OUT.open("a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        results += rows
    print(table(results))


if __name__ == "__main__":
    main()
