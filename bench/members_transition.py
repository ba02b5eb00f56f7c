"""Benchmark the six transition-based members on every UD treebank with a train file.

usage: python bench/members_transition.py [UD_ROOT] [--only NAME ...] [--members m1,m2] [--out FILE]

For each treebank (smallest first) and member: train on train with gold tags (dev picks
the epoch), parse test, score with the CoNLL 2018 conventions (all words, punctuation
included, universal part of DEPREL). One core: BLAS/OpenMP threads are set to 1 before
numpy loads. Wall-clock and CPU (``process_time``) seconds are both reported: on a
shared, loaded machine the CPU figures are the fair one-core measure. Prints a table and
appends one JSON line per run to ``--out`` (default ``bench/out/members_transition.jsonl``).
Parse speed counts predict() only.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.transition import MEMBERS, make_member  # noqa: E402

UDPIPE = {  # gold-tag LAS on test and train seconds of UDPipe 1 (the reference)
    "UD_Afrikaans-AfriBooms": (84.2, 620),
    "UD_Irish-IDT": (71.73, 461),
    "UD_Tamil-TTB": (69.53, 98),
    "UD_Telugu-MTG": (79.89, 45),
    "UD_Welsh-CCG": (81.6, 460),
    "UD_Wolof-WTB": (82.1, 392),
}


def treebanks(root: Path, only: list[str] | None) -> list[tuple[str, Path, Path, Path]]:
    found = []
    for folder in sorted(root.iterdir()):
        train = next(folder.glob("*-ud-train.conllu"), None)
        if train is None or (only and folder.name not in only):
            continue
        dev = next(folder.glob("*-ud-dev.conllu"))
        test = next(folder.glob("*-ud-test.conllu"))
        found.append((folder.name, train, dev, test))
    return sorted(found, key=lambda t: t[1].stat().st_size)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_root = Path(__file__).resolve().parents[2] / "shared" / "ud"
    parser.add_argument("ud_root", nargs="?", default=str(default_root))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--members", default=",".join(MEMBERS))
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default=str(Path(__file__).parent / "out" / "members_transition.jsonl"))
    args = parser.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = ("UAS", "LAS", "UDPipe", "train s", "cpu s", "UDP s", "words/s", "w/cpu s")
    print(f"{'treebank':24} {'member':11} " + " ".join(f"{c:>8}" for c in columns) + " ep", flush=True)
    for name, train_path, dev_path, test_path in treebanks(Path(args.ud_root), args.only):
        train, dev, test = (load_sentences(p) for p in (train_path, dev_path, test_path))
        words = sum(len(s) for s in test)
        for member in args.members.split(","):
            model = make_member(member, epochs=args.epochs)
            start, cpu = time.perf_counter(), time.process_time()
            model.fit(train, dev)
            train_s, train_cpu = time.perf_counter() - start, time.process_time() - cpu
            start, cpu = time.perf_counter(), time.process_time()
            parses = model.predict(test)
            parse_s, parse_cpu = time.perf_counter() - start, time.process_time() - cpu
            result = evaluate(test, parses)
            las_ref, train_ref = UDPIPE.get(name, (float("nan"), float("nan")))
            row = {
                "treebank": name,
                "member": member,
                "UAS": round(100 * result.uas.f1, 2),
                "LAS": round(100 * result.las.f1, 2),
                "udpipe_LAS": las_ref,
                "train_s": round(train_s, 1),
                "udpipe_train_s": train_ref,
                "words_per_s": round(words / parse_s),
                "train_cpu_s": round(train_cpu, 1),
                "words_per_cpu_s": round(words / parse_cpu),
                "epochs": model.epochs_,
                "test_words": words,
                "load_avg": round(os.getloadavg()[0], 1),
            }
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            print(
                f"{name:24} {member:11} {row['UAS']:8.2f} {row['LAS']:8.2f} {las_ref:8.2f} "
                f"{train_s:8.1f} {train_cpu:8.1f} {train_ref:8} {row['words_per_s']:8} "
                f"{row['words_per_cpu_s']:8} {model.epochs_}",
                flush=True,
            )


if __name__ == "__main__":
    main()
