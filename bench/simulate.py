"""Simulated annotation over the shared UD treebanks: which selection strategy learns fastest,
and does self-training help? (issue #11)

Runs the ``python -m parsing simulate`` contract once per treebank x strategy x seed x
self-training setting, in ``--jobs`` parallel processes (each one BLAS thread). Every run
writes its RESULT.json to ``bench/out/simulate/`` (an existing one is reused unless
``--force``, so an interrupted run resumes) and appends one JSON line (``treebank``,
``strategy``, ``self_training``, ``select``, ``seed`` and the result's ``config`` and
``rounds``) to ``bench/out/simulate.jsonl``.

``--report`` prints markdown tables from the JSON lines and draws SVG curves beside them:

* per treebank and mean: for each strategy, the % of random selection's annotated tokens it
  needs to reach random's final dev LAS (linear interpolation on its LAS-vs-tokens curve;
  "not reached" when it never does), averaged over seeds (without self-training);
* self-training gains: final-round LAS of the ensemble and of every member minus the same
  run without self-training (same treebank, strategy, seed), averaged over seeds;
* ``curves-TREEBANK-N-SETTING.svg``: mean ensemble LAS against mean annotated tokens, one
  line per strategy (and ``self-training-TREEBANK-N-STRATEGY.svg``, one line per setting).

Partial annotation is written into the strategy: ``expected-errors+partial-0.8`` (labelled vote
share below 0.8), ``expected-errors+partial-0.8+flagged-0.5`` (below 0.8 or the round's arc error
detector's ``p_wrong >= 0.5``), ``expected-errors+flagged-0.5`` (the detector alone); see
``simulate_report.py`` for the other endings.

Self-training settings are ``none``, ``own`` or ``ensemble``, optionally with the selection:
``ensemble:agreement``, ``own:random`` (default selection: ``--select``).

    .venv/bin/python bench/simulate.py --jobs 2                          # everything (long)
    .venv/bin/python bench/simulate.py --treebanks UD_Wolof-WTB --seeds 0 --rounds 2 \\
        --seed-trees 20 --per-round 10 --member-params eager.epochs=1 --member-params hybrid.epochs=1 \\
        --member-params graph1.max_iter=1                                 # a quick check
    .venv/bin/python bench/simulate.py --report                           # tables and curves only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from simulate_report import (  # noqa: E402
    PER_ROUND,
    flag_threshold,
    is_interactive,
    is_oracle_fill,
    is_refill,
    label,
    report,
    strategy_parts,
)

from parsing.commands.parsers import parse_overrides  # noqa: E402
from parsing.members import member_names  # noqa: E402
from parsing.semi.selection import STRATEGIES  # noqa: E402
from parsing.semi.self_training import SELECTIONS  # noqa: E402
from parsing.semi.simulate import DEFAULT_PARSERS, SELF_TRAINING, SimulationConfig  # noqa: E402

UD = Path(os.environ.get("ARCVOTE_UD_ROOT") or REPO.parent / "shared" / "ud")
OUT = REPO / "bench" / "out"
TREEBANKS = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG", "UD_Welsh-CCG",
             "UD_Wolof-WTB")



# --------------------------------------------------------------------------- running


def _files(treebank: Path) -> tuple[Path, Path]:
    """(train, dev) of a UD treebank folder."""
    train = next(treebank.glob("*-ud-train.conllu"), None)
    dev = next(treebank.glob("*-ud-dev.conllu"), None)
    if train is None or dev is None:
        raise SystemExit(f"{treebank} needs a train and a dev file")
    return train, dev


def _setting(text: str, default_select: str) -> tuple[str, str]:
    """``"ensemble:agreement"`` -> ``("ensemble", "agreement")``; the selection defaults."""
    source, _, select = text.partition(":")
    select = select or default_select
    if source not in SELF_TRAINING or select not in SELECTIONS:
        raise SystemExit(f"self-training setting {text!r}: expected one of {', '.join(SELF_TRAINING)}, "
                         f"optionally :{'|'.join(SELECTIONS)}")
    return source, select


def _job(args: argparse.Namespace, treebank: str, strategy: str, setting: tuple[str, str], seed: int
         ) -> tuple[Path, list[str]]:
    """The result path and the command of one simulation."""
    train, dev = _files(args.ud / treebank)
    source, select = setting
    base, threshold = strategy_parts(strategy)
    batch = "" if args.per_round == PER_ROUND else f"-b{args.per_round}"
    written = label(source, select).replace(":", "-")
    name = f"{treebank}-n{args.seed_trees}{batch}-{strategy}-{written}-s{seed}"
    out = args.out_dir / f"{name}.json"
    command = [sys.executable, "-m", "parsing", "simulate", "--train", str(train), "--dev", str(dev),
               "--seed-trees", str(args.seed_trees), "--per-round", str(args.per_round),
               "--rounds", str(args.rounds), "--strategy", base, "--self-training", source,
               "--select", select, "--parsers", args.parsers, "--seed", str(seed), "--out", str(out),
               "--plot", str(out.with_suffix(".svg"))]
    for item in args.member_params:
        command += ["--member-params", item]
    if args.warm:
        command.append("--warm")
    if args.diversity:
        command.append("--diversity")
    if threshold:
        command += ["--partial", threshold]
    if flag := flag_threshold(strategy):
        command += ["--flag-detector", flag]
    if is_interactive(strategy):
        command.append("--interactive")
    if is_refill(strategy):
        command.append("--refill")
    if is_oracle_fill(strategy):
        command.append("--oracle-fill")
    return out, command


def check_plan(args: argparse.Namespace) -> None:
    """Refuse a member, setting or method the runs would refuse, once and before any run: the
    :class:`~parsing.plan.TrainingPlan` every simulation builds (:meth:`SimulationConfig.plan`)."""
    try:
        SimulationConfig(seed_trees=1, per_round=1, rounds=0, parsers=tuple(member_names(args.parsers)),
                         member_params=parse_overrides(args.member_params), warm=args.warm).plan()
    except ValueError as error:
        raise SystemExit(f"--parsers/--member-params: {error}") from None


def run(args: argparse.Namespace) -> None:
    """Every simulation of the grid, ``--jobs`` at a time; one JSON line each."""
    settings = [_setting(s, args.select) for s in args.self_training.split(",") if s]
    grid = [(tb, strategy, setting, seed)
            for tb in args.treebanks.split(",") for strategy in args.strategies.split(",")
            for setting in settings for seed in (int(s) for s in args.seeds.split(","))]
    unknown = sorted({strategy_parts(strategy)[0] for _, strategy, _, _ in grid} - set(STRATEGIES))
    if unknown:
        raise SystemExit(f"unknown strategies {', '.join(unknown)}; known: {', '.join(STRATEGIES)}")
    check_plan(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO)}

    def one(item: tuple[str, str, tuple[str, str], int]) -> None:
        treebank, strategy, setting, seed = item
        out, command = _job(args, treebank, strategy, setting, seed)
        if args.force or not out.is_file():
            done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                with lock:
                    print(f"FAILED {out.name}: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                return
        result = json.loads(out.read_text(encoding="utf-8"))
        row = {"treebank": treebank, "strategy": strategy, "self_training": setting[0],
               "select": setting[1], "seed": seed, "result": str(out), **result}
        with lock:
            with args.jsonl.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            final = result["rounds"][-1]
            print(f"{out.stem}: final LAS {final['dev_las']:.2f} with {final['annotated_tokens']} tokens",
                  file=sys.stderr)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, grid))


def main() -> None:
    """Run the grid and/or print the report; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated UD folders")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated strategies")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (0,1,2)")
    parser.add_argument("--self-training", default="none",
                        help="comma-separated settings: none, own, ensemble[:SELECT] (default: none)")
    parser.add_argument("--select", default="confidence", choices=SELECTIONS,
                        help="self-training selection when a setting names none")
    parser.add_argument("--seed-trees", type=int, default=100)
    parser.add_argument("--per-round", type=int, default=PER_ROUND)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parsers", default=",".join(DEFAULT_PARSERS))
    parser.add_argument("--member-params", action="append", default=[], metavar="MEMBER.PARAM=VALUE")
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--diversity", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="simulations run in parallel processes")
    parser.add_argument("--force", action="store_true", help="rerun simulations whose result exists")
    parser.add_argument("--ud", type=Path, default=UD, help=f"UD treebanks folder ({UD})")
    parser.add_argument("--out-dir", type=Path, default=OUT / "simulate", help="RESULT.json and SVG folder")
    parser.add_argument("--jsonl", type=Path, default=OUT / "simulate.jsonl", help="one JSON line per run")
    parser.add_argument("--report", action="store_true", help="only print the report of --jsonl")
    args = parser.parse_args()
    if not args.report:
        run(args)
    print(report(args.jsonl, args.out_dir))


if __name__ == "__main__":
    main()
