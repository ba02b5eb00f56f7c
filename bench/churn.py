"""Round churn: how many pool sentences' ensemble trees a round rewrites after a few more trees,
and what keeping previous arcs (:func:`parsing.ensemble.stability.keep_previous`) saves and costs.

usage: PYTHONPATH=. python bench/churn.py [UD_ROOT] [--only TREEBANK ...] [--base 270] [--added 5]
           [--pool 100] [--members m1,m2] [--margins 0,0.1,...] [--warm] [--out FILE]
       python bench/churn.py --report [--out FILE]

For each treebank (the six of ``../shared/ud`` with a train file, or ``--only``): round 1 trains
the members and the default ensemble (gold tags, dev tuning, seed 0, as the app's rounds do) on
the first ``--base`` training sentences; round 2 on those plus the next ``--added`` (2% of 270 is
5: issue #30's bound). The following ``--pool`` training sentences play the unannotated pool;
their gold trees only score it. Both rounds parse the pool and dev. For every margin, round 2's
tree is kept-previous against round 1's (margin ``none``: round 2's tree as it is) and the line
records the share of sentences whose tree (heads or labels) changed, and the LAS of round 2's
trees on the pool and on dev. Choose the margin on dev; the pool is the check.

One JSON line per treebank and margin is appended to ``--out`` (default ``bench/out/churn.jsonl``);
``--report`` prints the markdown table. One process, BLAS on one thread; run it niced.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.ud_files import UD, split_files  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.stability import keep_previous, with_previous_votes  # noqa: E402
from parsing.ensemble.voting import ensemble_vote_weights  # noqa: E402
from parsing.members import member_names  # noqa: E402
from parsing.pipeline import ModelBundle, load_models, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

OUT = Path(__file__).parent / "out" / "churn.jsonl"
MARGINS = (0.0, 0.2, 0.34, 0.5, 0.6, 0.67, 0.75, 0.85, 1.0)


def train_round(train: Sequence[Sentence], dev: Sequence[Sentence], names: Sequence[str], out: Path,
                warm_from: Path | None = None) -> tuple[ModelBundle, float]:
    """A round's bundle trained as the app trains one (gold tags, default ensemble; ``warm_from``:
    continued from that round's weights where a member can), and its seconds."""
    start = time.perf_counter()
    train_models(train, dev, out, names=names, tags="gold", ensemble="vote-uniform", warm_from=warm_from)
    return load_models(out), time.perf_counter() - start


def parse(bundle: ModelBundle, sentences: Sequence[Sentence]) -> tuple[dict[str, list[Parse]], list[Parse]]:
    """Every member's parses and the ensemble's."""
    by_name, combined = bundle.parse_with_ensemble(sentences)
    return dict(by_name), list(combined)


def stabilised(weights: Sequence[float], members: dict[str, list[Parse]], combined: Sequence[Parse],
               previous: Sequence[Parse], margin: float | None, earlier: dict[str, list[Parse]],
               share: float) -> list[Parse]:
    """Round 2's trees, kept-previous against ``previous`` at ``margin`` (None: as they are);
    ``weights``: the members' vote weights, in ``members``' order; ``earlier``: round 1's member
    parses, given ``share`` of the vote (:func:`with_previous_votes`)."""
    if margin is None:
        return list(combined)
    names = list(members)
    out = []
    for i in range(len(combined)):
        voters, vote = with_previous_votes([members[name][i] for name in names], weights,
                                           [earlier[name][i] for name in names], weights, share)
        out.append(keep_previous(voters, vote, combined[i], previous[i].heads, previous[i].deprels, margin))
    return out


def changed_arcs(before: Sequence[Parse], after: Sequence[Parse]) -> float:
    """Fraction of words whose head or label differs."""
    changed = words = 0
    for a, b in zip(before, after, strict=True):
        changed += sum(int(a.heads[d]) != int(b.heads[d]) or a.deprels[d] != b.deprels[d]
                       for d in range(1, len(a.heads)))
        words += len(a.heads) - 1
    return changed / max(1, words)


def _parses_to_json(pair: tuple[dict[str, list[Parse]], list[Parse]]) -> dict[str, Any]:
    members, combined = pair
    def one(parses: Sequence[Parse]) -> list[list[Any]]:
        return [[p.heads.tolist(), list(p.deprels)] for p in parses]
    return {"members": {name: one(parses) for name, parses in members.items()}, "ensemble": one(combined)}


def _parses_from_json(data: dict[str, Any]) -> tuple[dict[str, list[Parse]], list[Parse]]:
    def one(rows: list[list[Any]]) -> list[Parse]:
        return [Parse(np.array(heads, dtype=np.intp), list(deprels)) for heads, deprels in rows]
    return {name: one(rows) for name, rows in data["members"].items()}, one(data["ensemble"])


def changed_share(before: Sequence[Parse], after: Sequence[Parse]) -> float:
    """Fraction of sentences whose heads or labels differ."""
    changed = sum(list(a.heads) != list(b.heads) or list(a.deprels) != list(b.deprels)
                  for a, b in zip(before, after, strict=True))
    return changed / max(1, len(before))


def las(gold: Sequence[Sentence], parses: Sequence[Parse]) -> float:
    return round(100 * evaluate(gold, parses).las.f1, 2)


def measure(name: str, files: dict[str, Path], args: argparse.Namespace) -> list[dict[str, Any]]:
    train = load_sentences(files["train"])
    dev = load_sentences(files["dev"])
    first, second = train[: args.base], train[: args.base + args.added]
    pool = train[args.base + args.added: args.base + args.added + args.pool]
    names = member_names(args.members)
    warm = "-warm" if args.warm else ""
    cache = args.out.parent / "churn-cache" / f"{name}-{args.base}+{args.added}{warm}.json"
    if cache.exists():  # the two rounds' parses of an earlier run: only the margins are redone
        saved = json.loads(cache.read_text())
        seconds1, seconds2, weights = saved["train_s"][0], saved["train_s"][1], saved["weights"]
        parsed = {where: (_parses_from_json(pair[0]), _parses_from_json(pair[1]))
                  for where, pair in saved["parsed"].items()}
    else:
        with tempfile.TemporaryDirectory() as folder:
            bundle1, seconds1 = train_round(first, dev, names, Path(folder) / "r1")
            bundle2, seconds2 = train_round(second, dev, names, Path(folder) / "r2",
                                            Path(folder) / "r1" if args.warm else None)
            parsed = {where: (parse(bundle1, data), parse(bundle2, data))
                      for where, data in (("pool", pool), ("dev", dev))}
            by_name = ensemble_vote_weights(bundle2.ensemble, list(bundle2.ensemble_members), list(names))
            weights = [by_name[member] for member in names]
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"train_s": [seconds1, seconds2], "weights": weights, "parsed": {
            where: [_parses_to_json(one) for one in pair] for where, pair in parsed.items()}}))
    gold = {"pool": pool, "dev": dev}
    lines = []
    for share, margin in [(0.0, None), *((share, m) for share in args.previous_shares for m in args.margins)]:
        line: dict[str, Any] = {"treebank": name, "members": names, "base": len(first), "added": args.added,
                                "warm": args.warm, "previous_share": share,
                                "margin": margin, "train_s": [round(seconds1, 1), round(seconds2, 1)]}
        for where, ((earlier, before), (members, combined)) in parsed.items():
            after = stabilised(weights, members, combined, before, margin, earlier, share)
            line[f"{where}_sentences"] = len(after)
            line[f"{where}_changed"] = round(100 * changed_share(before, after), 1)
            line[f"{where}_arcs_changed"] = round(100 * changed_arcs(before, after), 2)
            line[f"{where}_las_round1"] = las(gold[where], before)
            line[f"{where}_las"] = las(gold[where], after)
        lines.append(line)
        print(json.dumps(line), flush=True)
    return lines


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = ["| treebank | margin | pool sentences changed % | pool words changed % | pool LAS (round 1 → 2) "
           "| dev sentences changed % | dev LAS (round 1 → 2) |",
           "|---|---|---|---|---|---|---|"]
    for row in rows:
        margin = "none" if row["margin"] is None else f"{row['margin']:g}"
        margin += f", previous {row['previous_share']:g}" if row.get("previous_share") else ""
        margin += " (warm)" if row.get("warm") else ""
        out.append(f"| {row['treebank']} | {margin} | {row['pool_changed']} "
                   f"| {row.get('pool_arcs_changed', '')} "
                   f"| {row['pool_las_round1']} → "
                   f"{row['pool_las']} | {row['dev_changed']} | {row['dev_las_round1']} → {row['dev_las']} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ud_root", nargs="?", default=str(UD))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--base", type=int, default=270)
    parser.add_argument("--added", type=int, default=5)
    parser.add_argument("--pool", type=int, default=100)
    parser.add_argument("--members", default=None)
    parser.add_argument("--previous-shares", type=lambda text: [float(x) for x in text.split(",")],
                        default=[0.0, 0.4], help="shares of the vote given to round 1's members")
    parser.add_argument("--warm", action="store_true", help="round 2 continues from round 1's weights")
    parser.add_argument("--margins", type=lambda text: [float(x) for x in text.split(",")],
                        default=list(MARGINS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if args.report:
        print(report(args.out))
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for folder in sorted(Path(args.ud_root).glob("UD_*")):
        if args.only and not any(wanted in folder.name for wanted in args.only):
            continue
        try:
            train, dev, _ = split_files(folder)
        except StopIteration:
            continue  # no train file
        if dev is None:
            continue
        name, files = folder.name, {"train": train, "dev": dev}
        with args.out.open("a") as handle:
            for line in measure(name, files, args):
                handle.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
