"""The neural members' warm fits at several learning rates: which ``warm_rate`` should a warm round use?

usage: PYTHONPATH=. python bench/warm_rate.py [--treebanks T1,T2] [--members biaffine,lstm-hybrid]
           [--rates 1,0.3,0.1] [--base 1000] [--added 50] [--out FILE]
       python bench/warm_rate.py --report [--out FILE]

For each treebank and member, the previous round's model is fitted cold on the first ``--base``
training sentences (all but ``--added`` when the file has fewer; gold tags, dev picking the
epoch) and kept under ``--cache`` (a rerun reuses it). The next round adds the following
``--added`` sentences: the saved model is loaded and fitted warm (``warm_start=True``, its own
``warm_epochs``) once per ``warm_rate`` in ``--rates`` (the warm epochs' learning rate is that
times the member's ``learning_rate``). One JSON line per fit goes to ``--out``: CPU seconds, the
chosen epoch (0: the starting weights stayed), decoded dev and test LAS (CoNLL 2018 scoring), and
the previous model's. Dev chooses the default; test is the held-out check. One process, one
thread; ``--report`` prints the table and each rate's mean dev LAS per member.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from parsing.base import BaseParser  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.members import build_member  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Sentence  # noqa: E402

HERE = Path(__file__).parent
OUT = HERE / "out" / "warm_rate.jsonl"


def las(parser: BaseParser, sentences: list[Sentence]) -> float:
    """Decoded LAS in %."""
    return round(100 * evaluate(sentences, parser.predict(sentences)).las.f1, 2)


def run(folder: Path, member: str, rates: list[float], base: int, added: int, cache: Path,
        out: Path) -> None:
    """The previous model (cached), then one warm fit per rate; a line each."""
    train = load_sentences(next(folder.glob("*-ud-train.conllu")))
    dev = load_sentences(next(folder.glob("*-ud-dev.conllu")))
    test = load_sentences(next(folder.glob("*-ud-test.conllu")))
    before = min(base, len(train) - added)
    path = cache / f"{member}-{folder.name}-{before}.model"
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        build_member(member).fit(train[:before], dev).save(path)
    previous = BaseParser.load(path)
    row: dict[str, Any] = {"treebank": folder.name, "member": member, "previous_sentences": before,
                           "sentences": before + added, "previous_dev": las(previous, dev),
                           "previous_test": las(previous, test)}
    for rate in rates:
        warm = BaseParser.load(path, warm=True)
        warm.set_params(warm_start=True, warm_rate=rate)
        started = time.process_time()
        warm.fit(train[:before + added], dev)
        line = {**row, "warm_rate": rate, "warm_epochs": warm.warm_epochs,
                "cpu_s": round(time.process_time() - started, 1), "best_epoch": warm.history_["best_epoch"],
                "dev": las(warm, dev), "test": las(warm, test)}
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        print(json.dumps(line), flush=True)


def report(out: Path) -> str:
    """One row per treebank, member and rate (the last line wins), then each rate's mean dev LAS
    per member over the treebanks."""
    rows: dict[tuple[str, str, float], dict[str, Any]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[(row["treebank"], row["member"], row["warm_rate"])] = row
    lines = ["| treebank | member | trees | warm_rate | CPU s | epoch kept | dev LAS (before) "
             "| test LAS (before) |", "|---|---|---|---|---|---|---|---|"]
    means: dict[tuple[str, float], list[float]] = defaultdict(list)
    for (treebank, member, rate), row in sorted(rows.items()):
        lines.append(f"| {treebank} | {member} | {row['previous_sentences']}→{row['sentences']} | {rate:g} | "
                     f"{row['cpu_s']:.1f} | {row['best_epoch']} | "
                     f"{row['dev']:.2f} ({row['previous_dev']:.2f}) | "
                     f"{row['test']:.2f} ({row['previous_test']:.2f}) |")
        means[(member, rate)].append(row["dev"])
    lines.append("")
    lines += [f"{member}, warm_rate {rate:g}: mean dev LAS {sum(v) / len(v):.2f} over {len(v)} treebanks"
              for (member, rate), v in sorted(means.items())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ud-root", default=str(HERE.resolve().parents[1] / "shared" / "ud"))
    parser.add_argument("--treebanks", default="UD_Telugu-MTG,UD_Tamil-TTB")
    parser.add_argument("--members", default="biaffine,lstm-hybrid")
    parser.add_argument("--rates", default="1,0.3,0.1")
    parser.add_argument("--base", type=int, default=1000)
    parser.add_argument("--added", type=int, default=50)
    parser.add_argument("--cache", default=str(HERE / "out" / "warm_rate"),
                        help="the previous rounds' models")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--report", action="store_true", help="print the table of --out and stop")
    args = parser.parse_args()
    if args.report:
        print(report(Path(args.out)))
        return
    for treebank in args.treebanks.split(","):
        for member in args.members.split(","):
            run(Path(args.ud_root) / treebank, member, [float(r) for r in args.rates.split(",")],
                args.base, args.added, Path(args.cache), Path(args.out))


if __name__ == "__main__":
    main()
