"""Warm rounds against cold retraining: does continuing last round's weights cost less and lose nothing?

usage: PYTHONPATH=. python bench/warm_rounds.py [UD_ROOT] [--only TREEBANK ...] [--members m1,m2]
           [--base 1000] [--added 50] [--warm-epochs 1,2] [--out FILE]
       python bench/warm_rounds.py --report [--out FILE]

For each treebank: the previous round's members are trained cold on the first ``--base``
training sentences (all but ``--added`` when the file has fewer), with dev picking the epochs,
and saved to disk as the app does. The next round adds the following ``--added`` sentences;
each member is then (a) retrained cold on all of them and (b) loaded from disk, switched to
``warm_start=True`` and fitted on the same sentences, once per ``--warm-epochs`` value and
``--warm-average`` way: ``continue`` loads the saved perceptron state as the app's rounds do
(:func:`parsing.member_fit.warm_member`) and goes on with the running average;
``restart`` loads the averaged weights only, so the warm epochs start a new average from them
(the old average, over every earlier epoch, no longer outweighs the new data). Every
model parses dev and test (gold tags; CoNLL 2018 scoring: all words, universal part of DEPREL);
dev also picks the epochs of the members that stop early, so test is the held-out figure. The
default ensemble, ``vote-uniform`` over the members (:mod:`parsing.ensemble.registry`), is
scored from the members' dev parses; its train seconds are the sum of its members'.

One JSON line per treebank, member (and ``"ensemble"``) and warm epochs is appended to
``--out`` (default ``bench/out/warm_rounds.jsonl``): train seconds (wall and CPU) and dev LAS
of the previous round, the cold and the warm round, the ratios warm/cold, and for graph
members the CPU seconds of refitting their arc labeller alone (a linear SVM: it has no warm
start). ``--report`` prints the markdown table of that file. One process, BLAS on one
thread; run it niced on a shared machine.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from parsing.base import BaseParser  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD, fit_ensemble  # noqa: E402
from parsing.labeller import ArcLabeller  # noqa: E402
from parsing.members import build_member, member_names  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

OUT = Path(__file__).parent / "out" / "warm_rounds.jsonl"


def split_round(train: Sequence[Sentence], base: int, added: int) -> tuple[list[Sentence], list[Sentence]]:
    """The previous round's training sentences and the next round's (those plus ``added``)."""
    before = min(base, len(train) - added)
    return list(train[:before]), list(train[: before + added])


def las(gold: Sequence[Sentence], parses: Sequence[Parse]) -> float:
    """Dev LAS in %."""
    return round(100 * evaluate(gold, parses).las.f1, 2)


def timed_fit(parser: BaseParser, train: Sequence[Sentence], dev: Sequence[Sentence]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``parser.fit(train, dev)``."""
    started, cpu = time.perf_counter(), time.process_time()
    parser.fit(train, dev)
    return time.perf_counter() - started, time.process_time() - cpu


def warm_kind(epochs: int, average: str) -> str:
    """The name of one warm variant: ``warm1``, ``warm2-restart``, ``warm`` (each member's own
    ``warm_epochs``: ``epochs`` 0), ..."""
    return f"warm{epochs or ''}" + ("" if average == "continue" else f"-{average}")


def run_treebank(folder: Path, members: list[str], base: int, added: int, warm_epochs: list[int],
                 out: Path, averages: Sequence[str] = ("continue",)) -> None:
    """Previous round, cold round and one warm round per ``warm_epochs`` value and averaging
    way (``averages``), per member."""
    train_path = next(folder.glob("*-ud-train.conllu"))
    dev = load_sentences(next(folder.glob("*-ud-dev.conllu")))
    test = load_sentences(next(folder.glob("*-ud-test.conllu")))
    previous, current = split_round(load_sentences(train_path), base, added)
    variants = [(k, average) for k in warm_epochs for average in averages]
    kinds = ["previous", "cold", *(warm_kind(k, average) for k, average in variants)]
    parses: dict[str, dict[str, list[Parse]]] = {kind: {} for kind in kinds}
    tested: dict[str, dict[str, float]] = {kind: {} for kind in kinds}  # test LAS per kind and member
    seconds: dict[str, dict[str, tuple[float, float]]] = {kind: {} for kind in kinds}
    labeller_s = None
    with tempfile.TemporaryDirectory() as scratch:
        for name in members:
            path = Path(scratch) / f"{name}.model"
            parser = build_member(name)
            seconds["previous"][name] = timed_fit(parser, previous, dev)
            parses["previous"][name] = parser.predict(dev)
            tested["previous"][name] = las(test, parser.predict(test))
            parser.save(path)
            del parser
            cold = build_member(name)
            seconds["cold"][name] = timed_fit(cold, current, dev)
            parses["cold"][name] = cold.predict(dev)
            tested["cold"][name] = las(test, cold.predict(test))
            labeller_c = cold.get_params().get("labeller_C")
            del cold
            for epochs, average in variants:
                kind = warm_kind(epochs, average)
                warm = BaseParser.load(path, warm=average == "continue")
                warm.set_params(warm_start=True, **({"warm_epochs": epochs} if epochs else {}))
                seconds[kind][name] = timed_fit(warm, current, dev)
                parses[kind][name] = warm.predict(dev)
                tested[kind][name] = las(test, warm.predict(test))
            row: dict[str, Any] = {"treebank": folder.name, "member": name,
                                   "previous_sentences": len(previous), "sentences": len(current)}
            if labeller_c is not None:
                if labeller_s is None:
                    started = time.process_time()
                    ArcLabeller(C=labeller_c).fit(current)
                    labeller_s = time.process_time() - started
                row["labeller_cpu_s"] = round(labeller_s, 1)
            for epochs, average in variants:
                write(out, {**row, **{f"{kind}_test_las": tested[kind][name] for kind in (
                    "previous", "cold", warm_kind(epochs, average))}}, seconds,
                      {kind: las(dev, parses[kind][name]) for kind in parses}, name, epochs, average)
        # vote-uniform needs no tuning and combines parses only: unfitted members stand in
        ensemble, names = fit_ensemble(DEFAULT_METHOD, {n: build_member(n) for n in members}, current, dev)
        ensemble_las = {
            kind: las(dev, ensemble.combine_all(dev, [parses[kind][n] for n in names])) for kind in parses
        }
        totals = {
            kind: {"ensemble": (sum(s[0] for s in values.values()), sum(s[1] for s in values.values()))}
            for kind, values in seconds.items()
        }
        row = {"treebank": folder.name, "member": f"ensemble ({DEFAULT_METHOD})",
               "previous_sentences": len(previous), "sentences": len(current)}
        for epochs, average in variants:
            write(out, dict(row), totals, ensemble_las, "ensemble", epochs, average)


def seed_spread(folder: Path, members: list[str], base: int, added: int, seeds: list[int], out: Path) -> None:
    """The cold round retrained at other ``random_state`` values (training order, exploration):
    how far the ensemble's dev LAS moves on the same sentences, the resolution against which
    a warm round's difference from one cold retrain can be read. One line per seed."""
    dev = load_sentences(next(folder.glob("*-ud-dev.conllu")))
    _, current = split_round(load_sentences(next(folder.glob("*-ud-train.conllu"))), base, added)
    for seed in seeds:
        parses: dict[str, list[Parse]] = {}
        cpu = 0.0
        for name in members:
            parser = build_member(name, random_state=seed)
            cpu += timed_fit(parser, current, dev)[1]
            parses[name] = parser.predict(dev)
        ensemble, names = fit_ensemble(DEFAULT_METHOD, {n: build_member(n) for n in members}, current, dev)
        row = {"treebank": folder.name, "member": f"ensemble ({DEFAULT_METHOD})", "kind": "cold_seed",
               "random_state": seed, "sentences": len(current), "cold_cpu_s": round(cpu, 1),
               "cold_las": las(dev, ensemble.combine_all(dev, [parses[n] for n in names])),
               "members": {name: las(dev, parses[name]) for name in members}}
        with out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def write(out: Path, row: dict[str, Any], seconds: dict[str, dict[str, tuple[float, float]]],
          scores: dict[str, float], name: str, warm_epochs: int, average: str = "continue") -> None:
    """Append one result line (the warm round with ``warm_epochs``, averaged ``average``) and
    echo it."""
    warm = warm_kind(warm_epochs, average)
    row.update({
        "warm_epochs": warm_epochs, "warm_average": average,
        "previous_s": round(seconds["previous"][name][0], 1), "cold_s": round(seconds["cold"][name][0], 1),
        "warm_s": round(seconds[warm][name][0], 1),
        "cold_cpu_s": round(seconds["cold"][name][1], 1), "warm_cpu_s": round(seconds[warm][name][1], 1),
        "ratio": round(seconds[warm][name][0] / seconds["cold"][name][0], 3),
        "cpu_ratio": round(seconds[warm][name][1] / seconds["cold"][name][1], 3),
        "previous_las": scores["previous"], "cold_las": scores["cold"], "warm_las": scores[warm],
        "delta_las": round(scores[warm] - scores["cold"], 2),
        "load_avg": round(os.getloadavg()[0], 1),
    })  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def report(out: Path) -> str:
    """The markdown table of the result file (the last line per treebank, member and warm
    epochs wins). Ratios are of CPU seconds, the fair measure on a shared machine."""
    rows: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    spread: dict[str, dict[int, float]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("kind") == "cold_seed":
            spread.setdefault(row["treebank"], {})[row["random_state"]] = row["cold_las"]
            continue
        row.setdefault("warm_average", "continue")
        rows[(row["treebank"], row["member"], row["warm_epochs"], row["warm_average"])] = row
    header = ("| treebank | member | sentences | warm epochs | average | cold cpu s | warm cpu s | "
              "warm/cold cpu | wall warm/cold | labeller cpu s | LAS before | LAS cold | LAS warm | "
              "warm − cold | test: cold, warm |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for row in rows.values():
        labeller = row.get("labeller_cpu_s")
        lines.append(
            f"| {row['treebank']} | {row['member']} | {row['previous_sentences']}→{row['sentences']} | "
            f"{row['warm_epochs'] or 'own'} | {row['warm_average']} | {row['cold_cpu_s']:.1f} | "
            f"{row['warm_cpu_s']:.1f} | "
            f"{100 * row['cpu_ratio']:.0f}% | {100 * row['ratio']:.0f}% | "
            f"{'' if labeller is None else f'{labeller:.1f}'} | {row['previous_las']:.2f} | "
            f"{row['cold_las']:.2f} | {row['warm_las']:.2f} | {row['delta_las']:+.2f} | {_tested(row)} |"
        )
    for treebank, by_seed in spread.items():
        cold = next((r["cold_las"] for key, r in rows.items() if key[0] == treebank
                     and key[1].startswith("ensemble")), None)
        values = {**({0: cold} if cold is not None else {}), **by_seed}
        listed = ", ".join(f"{las_:.2f} (seed {seed})" for seed, las_ in sorted(values.items()))
        mean = sum(values.values()) / len(values)
        against = "; ".join(
            f"{key[2]} epoch(s), {key[3]}: {r['warm_las'] - mean:+.2f}" for key, r in rows.items()
            if key[0] == treebank and key[1].startswith("ensemble"))
        lines.append(f"\n{treebank}: the ensemble's cold retrain at other seeds: {listed}; "
                     f"range {max(values.values()) - min(values.values()):.2f}, mean {mean:.2f} LAS. "
                     f"Warm − that mean: {against}")
    return "\n".join(lines)


def _tested(row: dict[str, Any]) -> str:
    """The row's test LAS, cold and warm (rows written before test was scored have none)."""
    warm = row.get(f"{warm_kind(row['warm_epochs'], row['warm_average'])}_test_las")
    return "" if warm is None else f"{row['cold_test_las']:.2f}, {warm:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_root = Path(__file__).resolve().parents[2] / "shared" / "ud"
    parser.add_argument("ud_root", nargs="?", default=str(default_root))
    parser.add_argument("--only", nargs="*", default=["UD_Wolof-WTB", "UD_Welsh-CCG"])
    parser.add_argument("--members", default=",".join(member_names()))
    parser.add_argument("--base", type=int, default=1000)
    parser.add_argument("--added", type=int, default=50)
    parser.add_argument("--warm-epochs", default="1,2",
                        help="warm rounds to run, by epochs (comma list; 0: each member's own warm_epochs)")
    parser.add_argument("--warm-average", default="continue,restart",
                        help="continue the running average, restart it from the averaged weights, or both")
    parser.add_argument("--seed-spread", help="only retrain the cold round at these random states "
                        "(comma list) and record the ensemble's dev LAS")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--report", action="store_true", help="print the markdown table of --out and stop")
    args = parser.parse_args()
    if args.report:
        print(report(Path(args.out)))
        return
    for treebank in args.only:
        if args.seed_spread:
            seed_spread(Path(args.ud_root) / treebank, member_names(args.members), args.base, args.added,
                        [int(s) for s in args.seed_spread.split(",")], Path(args.out))
            continue
        run_treebank(Path(args.ud_root) / treebank, member_names(args.members), args.base, args.added,
                     [int(k) for k in args.warm_epochs.split(",")], Path(args.out),
                     [a for a in args.warm_average.split(",") if a])


if __name__ == "__main__":
    main()
