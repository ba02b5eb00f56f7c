"""Training speed of the neural members with the BiLSTM run without packing and a fused Adam
(``parsing.biaffine.recurrent``, ``parsing.biaffine.runtime.adam``) against the code before
(a ``PackedSequence`` through ``nn.LSTM``, Adam's per-tensor loop), in the same process.

``--mode epochs`` (default): per treebank, ``biaffine`` (predicted-tag setting: forms only) and
``lstm-hybrid`` each train ``--epochs`` epochs (no early stop) with each code path in turn,
``--repeats`` times alternating, one thread; each run's seconds per epoch and its dev parse's
words/s. The report gives the median per path and the ratio before / now.

``--mode full``: ``biaffine`` trained with its defaults (early stopping on dev) once per path:
dev and test LAS by the official scorer, epochs, training seconds, so a change in accuracy shows
beside the change in time (the paths draw different dropout masks and round differently, so the
weights differ as another seed's would).

    OMP_NUM_THREADS=1 nice .venv/bin/python bench/lstm_speed.py --treebanks UD_Wolof-WTB,UD_Tamil-TTB \\
        --out bench/results/lstm_speed.jsonl
    OMP_NUM_THREADS=1 nice .venv/bin/python bench/lstm_speed.py --mode full --treebanks UD_Telugu-MTG \\
        --out bench/results/lstm_speed-full.jsonl
    .venv/bin/python bench/lstm_speed.py --report bench/results/lstm_speed.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import parsing.biaffine.network as biaffine_network  # noqa: E402
import parsing.biaffine.runtime as runtime  # noqa: E402
import parsing.biaffine.training as biaffine_training  # noqa: E402
import parsing.lstm_transition.network as transition_network  # noqa: E402
from bench.biaffine import score_split  # noqa: E402
from bench.ud_files import UD, split_files  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.recurrent import packed_bilstm  # noqa: E402
from parsing.conllu_io import read_conllu, to_sentence  # noqa: E402
from parsing.lstm_transition.member import LSTMTransitionParser  # noqa: E402

PATHS = ("packed", "unpacked")


def loop_adam(parameters: Any, rate: float) -> torch.optim.Adam:
    """The optimizer before: Adam's per-tensor loop."""
    return torch.optim.Adam(parameters, lr=rate, betas=(0.9, 0.9))


@contextmanager
def code_path(name: str) -> Iterator[None]:
    """Run the members with the code before (``packed``: the packed LSTM in training too, Adam's
    loop) or as it is now (``unpacked``)."""
    saved = (biaffine_network.run_bilstm, transition_network.run_bilstm, biaffine_training.adam, runtime.adam)
    if name == "packed":
        biaffine_network.run_bilstm = transition_network.run_bilstm = packed_bilstm
        biaffine_training.adam = runtime.adam = loop_adam
    try:
        yield
    finally:
        (biaffine_network.run_bilstm, transition_network.run_bilstm, biaffine_training.adam,
         runtime.adam) = saved


def epochs_run(member: str, train: list[Any], dev: list[Any], epochs: int) -> dict[str, float]:
    """Seconds per epoch of ``member`` over ``epochs`` epochs, and its dev parse's words/s."""
    parser: Any
    if member == "biaffine":
        parser = BiaffineParser(max_epochs=epochs, patience=epochs + 1, max_seconds=1e9)
    else:
        parser = LSTMTransitionParser(max_epochs=epochs, patience=epochs + 1, max_seconds=1e9)
    started = time.perf_counter()
    parser.fit(train, dev)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    parser.predict(dev)
    words = sum(len(s) for s in dev)
    return {"seconds_per_epoch": round(seconds / epochs, 2),
            "parse_words_per_s": round(words / (time.perf_counter() - started))}


def run_epochs(treebank: str, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    train_path, dev_path, _ = split_files(UD / treebank)
    train = [to_sentence(s) for s in read_conllu(train_path)]
    dev = [to_sentence(s) for s in read_conllu(dev_path)]
    for member in ("biaffine", "lstm-hybrid"):
        for repeat in range(args.repeats):
            for path in PATHS if repeat % 2 == 0 else PATHS[::-1]:
                with code_path(path):
                    result = epochs_run(member, train, dev, args.epochs)
                row = {"mode": "epochs", "treebank": treebank, "member": member, "path": path,
                       "repeat": repeat, "epochs": args.epochs, "torch": torch.__version__, **result}
                print(json.dumps(row), flush=True)
                yield row


def run_full(treebank: str, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    train_path, dev_path, test_path = split_files(UD / treebank)
    train = [to_sentence(s) for s in read_conllu(train_path)]
    dev = [to_sentence(s) for s in read_conllu(dev_path)]
    for path in PATHS:
        with code_path(path), tempfile.TemporaryDirectory() as folder:
            parser = BiaffineParser(random_state=args.seed)
            started = time.perf_counter()
            parser.fit(train, dev)
            seconds = time.perf_counter() - started
            history = parser.history_
            row = {"mode": "full", "treebank": treebank, "member": "biaffine", "path": path,
                   "seed": args.seed, "train_s": round(seconds, 1), "epochs": len(history["dev_las"]),
                   "best_epoch": history["best_epoch"], "stopped": history["stopped"],
                   "dev": score_split(parser, dev_path, Path(folder) / "dev.conllu"),
                   "test": score_split(parser, test_path, Path(folder) / "test.conllu"),
                   "torch": torch.__version__}
        print(json.dumps(row), flush=True)
        yield row


def report(path: Path) -> None:
    """Markdown tables of a results file: median seconds per epoch and the ratio; full runs."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        if row["mode"] == "epochs":
            by_path = groups.setdefault((row["treebank"], row["member"]), {})
            by_path.setdefault(row["path"], []).append(row)
    if groups:
        print("| treebank | member | s/epoch before | s/epoch now | before / now | "
              "parse words/s before | now |")
        print("|---|---|---|---|---|---|---|")
    for (treebank, member), paths in groups.items():
        before = statistics.median(r["seconds_per_epoch"] for r in paths["packed"])
        now = statistics.median(r["seconds_per_epoch"] for r in paths["unpacked"])
        parse_before = statistics.median(r["parse_words_per_s"] for r in paths["packed"])
        parse_now = statistics.median(r["parse_words_per_s"] for r in paths["unpacked"])
        print(f"| {treebank} | {member} | {before:.2f} | {now:.2f} | {before / now:.2f} | "
              f"{parse_before:.0f} | {parse_now:.0f} |")
    full = [row for row in rows if row["mode"] == "full"]
    if full:
        print("\n| treebank | path | epochs (best) | stopped | train s | dev LAS | test LAS | test UPOS |")
        print("|---|---|---|---|---|---|---|---|")
    for row in full:
        print(f"| {row['treebank']} | {row['path']} | {row['epochs']} ({row['best_epoch']}) | "
              f"{row['stopped']} | {row['train_s']} | {row['dev']['LAS']} | {row['test']['LAS']} | "
              f"{row['test']['UPOS']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebanks", default="UD_Wolof-WTB,UD_Tamil-TTB")
    parser.add_argument("--mode", choices=("epochs", "full"), default="epochs")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("bench/out/lstm_speed.jsonl"))
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return
    torch.set_num_threads(1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    run = run_epochs if args.mode == "epochs" else run_full
    for treebank in args.treebanks.split(","):
        for row in run(treebank, args):
            with args.out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
