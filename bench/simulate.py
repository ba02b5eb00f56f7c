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
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from parsing.charts import line_chart_svg  # noqa: E402
from parsing.semi.selection import STRATEGIES  # noqa: E402
from parsing.semi.self_training import SELECTIONS  # noqa: E402
from parsing.semi.simulate import DEFAULT_PARSERS, SELF_TRAINING  # noqa: E402

UD = Path(os.environ.get("ARCVOTE_UD_ROOT") or REPO.parent / "shared" / "ud")
OUT = REPO / "bench" / "out"
TREEBANKS = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG", "UD_Welsh-CCG",
             "UD_Wolof-WTB")
Row = dict[str, Any]


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


PARTIAL = "+partial-"
"""A strategy written ``STRATEGY+partial-THRESHOLD`` runs ``--strategy STRATEGY --partial THRESHOLD``
(the oracle annotates only words whose head vote share is below THRESHOLD)."""


def strategy_parts(label: str) -> tuple[str, str | None]:
    """``"expected-errors+partial-0.8"`` -> ``("expected-errors", "0.8")``; no partial -> None.

    Examples:
        >>> strategy_parts("random"), strategy_parts("entropy+partial-0.8")
        (('random', None), ('entropy', '0.8'))
    """
    strategy, _, threshold = label.partition(PARTIAL)
    return strategy, threshold or None


def _strategy_order(label: str) -> tuple[int, str]:
    strategy, threshold = strategy_parts(label)
    return (STRATEGIES.index(strategy) if strategy in STRATEGIES else len(STRATEGIES), threshold or "")


def _label(source: str, select: str) -> str:
    return "none" if source == "none" else f"{source}:{select}"


def _job(args: argparse.Namespace, treebank: str, strategy: str, setting: tuple[str, str], seed: int
         ) -> tuple[Path, list[str]]:
    """The result path and the command of one simulation."""
    train, dev = _files(args.ud / treebank)
    source, select = setting
    base, threshold = strategy_parts(strategy)
    name = f"{treebank}-n{args.seed_trees}-{strategy}-{_label(source, select).replace(':', '-')}-s{seed}"
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
    return out, command


def run(args: argparse.Namespace) -> None:
    """Every simulation of the grid, ``--jobs`` at a time; one JSON line each."""
    settings = [_setting(s, args.select) for s in args.self_training.split(",") if s]
    grid = [(tb, strategy, setting, seed)
            for tb in args.treebanks.split(",") for strategy in args.strategies.split(",")
            for setting in settings for seed in (int(s) for s in args.seeds.split(","))]
    unknown = sorted({strategy_parts(strategy)[0] for _, strategy, _, _ in grid} - set(STRATEGIES))
    if unknown:
        raise SystemExit(f"unknown strategies {', '.join(unknown)}; known: {', '.join(STRATEGIES)}")
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


# --------------------------------------------------------------------------- report


def read_rows(path: Path) -> list[Row]:
    """The JSON lines; a run recorded twice counts once (the last line wins)."""
    rows: dict[tuple[Any, ...], Row] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[_key(row) + (row["strategy"], row["seed"])] = row
    return list(rows.values())


def _key(row: Row) -> tuple[Any, ...]:
    """What makes two runs comparable: treebank, seed trees, batch size, members, warm, setting."""
    config = row["config"]
    return (row["treebank"], config["seed_trees"], config["per_round"], tuple(config["parsers"]),
            bool(config.get("warm")), _label(row["self_training"], row["select"]))


def tokens_to_reach(rounds: Sequence[Row], target: float, key: str = "dev_las") -> float | None:
    """Annotated tokens at which the LAS-vs-tokens curve first reaches ``target`` (linear
    interpolation between rounds), or ``None`` if it never does.

    Examples:
        >>> curve = [{"annotated_tokens": 100, "dev_las": 60.0}, {"annotated_tokens": 200, "dev_las": 70.0}]
        >>> tokens_to_reach(curve, 65.0), tokens_to_reach(curve, 59.0), tokens_to_reach(curve, 71.0)
        (150.0, 100.0, None)
    """
    previous: Row | None = None
    for r in rounds:
        if r[key] >= target:
            if previous is None or r[key] == previous[key]:
                return float(r["annotated_tokens"])
            fraction = (target - previous[key]) / (r[key] - previous[key])
            return float(previous["annotated_tokens"] + fraction * (r["annotated_tokens"]
                                                                     - previous["annotated_tokens"]))
        previous = r
    return None


def _mean(values: Iterable[float]) -> float | None:
    listed = list(values)
    return float(np.mean(listed)) if listed else None


def _share_cell(tried: int, shares: Sequence[float], short: Sequence[tuple[float, float]]) -> str:
    """A table cell: the mean share, or how far runs that never reached the target got
    (their last round's tokens as % of random's, and LAS behind the target)."""
    if tried == 0:
        return "—"
    if not shares:
        tokens, behind = (float(np.mean([value[i] for value in short])) for i in (0, 1))
        return f"not reached ({tokens:.0f}% of tokens: {behind:+.2f} LAS)"
    return f"{np.mean(shares):.1f}%" + (f" ({len(shares)}/{tried})" if len(shares) < tried else "")


def token_share_table(rows: Sequence[Row]) -> str:
    """% of random's tokens each strategy needs to reach random's final dev LAS (no self-training).

    Both sides are first arrivals at that LAS (linear interpolation), so random is 100%."""
    runs: dict[tuple[Any, ...], dict[str, dict[int, Row]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        if row["self_training"] == "none":
            runs[_key(row)][row["strategy"]][row["seed"]] = row
    strategies = sorted({s for by in runs.values() for s in by}, key=_strategy_order)
    lines = ["| treebank | seed trees | " + " | ".join(strategies) + " |",
             "|---|---|" + "---|" * len(strategies)]
    per_strategy: dict[str, list[float]] = defaultdict(list)
    for key in sorted(runs):
        by_strategy = runs[key]
        if "random" not in by_strategy:
            continue
        cells = []
        for strategy in strategies:
            shares, tried = [], 0
            short: list[tuple[float, float]] = []
            for seed, baseline in by_strategy["random"].items():
                run_ = by_strategy.get(strategy, {}).get(seed)
                if run_ is None:
                    continue
                tried += 1
                target = baseline["rounds"][-1]["dev_las"]
                # random's own first arrival (a noisy curve can touch its final LAS earlier)
                cost = tokens_to_reach(baseline["rounds"], target)
                needed = tokens_to_reach(run_["rounds"], target)
                if needed is not None and cost:
                    shares.append(100.0 * needed / cost)
                elif cost:
                    last = run_["rounds"][-1]
                    short.append((100.0 * last["annotated_tokens"] / cost, last["dev_las"] - target))
            mean = _mean(shares)
            if mean is not None:
                per_strategy[strategy].append(mean)
            cells.append(_share_cell(tried, shares, short))
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    means = [_mean(per_strategy[s]) for s in strategies]
    lines.append("| **mean** | | " + " | ".join("—" if m is None else f"**{m:.1f}%**" for m in means) + " |")
    return "\n".join(lines)


def self_training_table(rows: Sequence[Row]) -> str:
    """Final-round LAS gain of each self-training setting over none (same strategy and seed)."""
    baseline = {(_key(r)[:5], r["strategy"], r["seed"]): r for r in rows if r["self_training"] == "none"}
    gains: dict[tuple[Any, ...], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    members: list[str] = []
    for row in rows:
        if row["self_training"] == "none":
            continue
        base = baseline.get((_key(row)[:5], row["strategy"], row["seed"]))
        if base is None:
            continue
        final, before = row["rounds"][-1], base["rounds"][-1]
        group = (row["treebank"], row["config"]["seed_trees"], row["strategy"], _key(row)[5])
        gains[group]["ensemble"].append(final["dev_las"] - before["dev_las"])
        for name, scores in final["members"].items():
            if name in before["members"]:
                gains[group][name].append(scores["las"] - before["members"][name]["las"])
                members += [name] if name not in members else []
    if not gains:
        return "(no self-training runs with a matching run without it)"
    columns = ["ensemble", *members]
    lines = ["| treebank | seed trees | strategy | self-training | " + " | ".join(columns) + " |",
             "|---|---|---|---|" + "---|" * len(columns)]
    overall: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for group in sorted(gains):
        cells = []
        for column in columns:
            mean = _mean(gains[group].get(column, []))
            cells.append("—" if mean is None else f"{mean:+.2f}")
            if mean is not None:
                overall[group[3]][column].append(mean)
        lines.append(f"| {group[0]} | {group[1]} | {group[2]} | {group[3]} | " + " | ".join(cells) + " |")
    for setting in sorted(overall):
        cells = [f"**{m:+.2f}**" if (m := _mean(overall[setting].get(c, []))) is not None else "—"
                 for c in columns]
        lines.append(f"| **mean** | | | {setting} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _mean_curve(runs: Sequence[Row]) -> list[tuple[float, float]]:
    """Mean annotated tokens and ensemble LAS per round over seeds (rounds all runs reached)."""
    length = min(len(r["rounds"]) for r in runs)
    return [(float(np.mean([r["rounds"][i]["annotated_tokens"] for r in runs])),
             float(np.mean([r["rounds"][i]["dev_las"] for r in runs]))) for i in range(length)]


def draw_curves(rows: Sequence[Row], folder: Path) -> list[Path]:
    """One SVG per treebank and setting (a line per strategy) and per strategy (a line per
    self-training setting, when there are several)."""
    folder.mkdir(parents=True, exist_ok=True)
    by_setting: dict[tuple[Any, ...], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    by_strategy: dict[tuple[Any, ...], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = _key(row)
        by_setting[key][row["strategy"]].append(row)
        by_strategy[(*key[:5], row["strategy"])][key[5]].append(row)
    written = []
    for key, groups in sorted(by_setting.items()):
        path = folder / f"curves-{key[0]}-n{key[1]}-{key[5].replace(':', '-')}.svg"
        series = {s: _mean_curve(groups[s]) for s in sorted(groups, key=_strategy_order)}
        path.write_text(line_chart_svg(series, width=760, title=f"{key[0]}: ensemble dev LAS ({key[5]})",
                                       x_label="annotated tokens", y_label="dev LAS (%)",
                                       highlight="random"), encoding="utf-8")
        written.append(path)
    for key, settings in sorted(by_strategy.items()):
        if len(settings) < 2:
            continue
        path = folder / f"self-training-{key[0]}-n{key[1]}-{key[5]}.svg"
        series = {label: _mean_curve(runs) for label, runs in sorted(settings.items())}
        path.write_text(line_chart_svg(series, width=760,
                                       title=f"{key[0]}: self-training ({key[5]} selection)",
                                       x_label="annotated tokens", y_label="dev LAS (%)",
                                       highlight="none"), encoding="utf-8")
        written.append(path)
    return written


def report(path: Path, folder: Path) -> str:
    """The markdown report of the JSON lines at ``path``; curves drawn into ``folder``."""
    if not path.is_file():
        raise SystemExit(f"no results at {path}: run the simulations first")
    rows = read_rows(path)
    curves = draw_curves(rows, folder)
    return "\n".join([
        f"## Simulated annotation ({len(rows)} runs, {path})", "",
        "### Tokens needed to reach random selection's final dev LAS (% of random's tokens)", "",
        token_share_table(rows), "",
        "### Self-training: final-round dev LAS gain over no self-training (points)", "",
        self_training_table(rows), "",
        "Curves: " + ", ".join(str(p.relative_to(REPO) if p.is_relative_to(REPO) else p) for p in curves),
    ])


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
    parser.add_argument("--per-round", type=int, default=50)
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
