"""Benchmark the ISBN member (``parsing.isbn``, issue #18) beside today's neural member.

For each treebank of ``../shared/ud``: train each member on train (dev picks the epoch), parse
test at the member's default beam, and score (CoNLL 2018 conventions: all words including
punctuation, universal part of DEPREL) with gold UPOS (the file's own columns). One BLAS thread;
parsing speed is words per second of process CPU time (what a free core would see when other
jobs share the machine) and of wall-clock time. The best member's gold-tag test LAS from the
README's ``bench/ensemble_speed.py`` table is printed beside.

    .venv/bin/python bench/member_isbn.py                                   # every treebank, isbn and neural
    .venv/bin/python bench/member_isbn.py --treebanks UD_Telugu-MTG --members isbn --beams 1,8

Appends one JSON line per (treebank, member, beam) to ``bench/results/member_isbn.jsonl`` and
prints a Markdown table.
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
from parsing.members import build_member  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "ud"
OUT = REPO / "bench" / "results" / "member_isbn.jsonl"
ORDER = ["UD_Telugu-MTG", "UD_Tamil-TTB", "UD_Wolof-WTB", "UD_Welsh-CCG", "UD_Afrikaans-AfriBooms",
         "UD_Irish-IDT"]
"""Smallest first, so a run cut short has measured the most treebanks."""

BEST_MEMBER = {  # README, bench/ensemble_speed.py table: best single member's test LAS, gold tags
    "UD_Afrikaans-AfriBooms": 83.98,
    "UD_Irish-IDT": 73.63,
    "UD_Tamil-TTB": 72.15,
    "UD_Telugu-MTG": 83.63,
    "UD_Welsh-CCG": 82.27,
    "UD_Wolof-WTB": 82.28,
}


def run(treebank: Path, member: str, beams: list[int] | None, seed: int) -> list[dict[str, object]]:
    """Train ``member`` once, then parse and score test at each beam (its default if None)."""
    train = load_sentences(next(treebank.glob("*-ud-train.conllu")))
    dev_path = next(treebank.glob("*-ud-dev.conllu"), None)
    dev = load_sentences(dev_path) if dev_path else None
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    parser = build_member(member, random_state=seed)
    wall, cpu = time.perf_counter(), time.process_time()
    parser.fit(train, dev)
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
    words = sum(len(sentence) for sentence in test)
    results: list[dict[str, object]] = []
    for beam in beams or [int(parser.get_params()["beam_size"])]:
        parser.set_params(beam_size=beam)
        wall, cpu = time.perf_counter(), time.process_time()
        parses = parser.predict(test)
        parse_wall, parse_cpu = time.perf_counter() - wall, time.process_time() - cpu
        scores = evaluate(test, parses)
        results.append({
            "treebank": treebank.name, "member": member, "tags": "gold", "beam": beam,
            "epochs": getattr(parser, "n_epochs_", None), "train_s": round(train_wall, 1),
            "train_cpu_s": round(train_cpu, 1), "words_per_s": round(words / parse_wall),
            "words_per_cpu_s": round(words / parse_cpu), "UAS": round(100 * scores.uas.f1, 2),
            "LAS": round(100 * scores.las.f1, 2), "best_member_LAS": BEST_MEMBER.get(treebank.name),
            "params": {key: value for key, value in parser.get_params().items() if key != "beam_size"},
        })  # fmt: skip
        print(json.dumps(results[-1]), flush=True)
    return results


def table(results: list[dict[str, object]]) -> str:
    """The results as a Markdown table."""
    columns = ["treebank", "member", "beam", "epochs", "train_s", "train_cpu_s", "words_per_s",
               "words_per_cpu_s", "UAS", "LAS", "best_member_LAS"]  # fmt: skip
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in results]
    return "\n".join(lines)


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    arguments.add_argument("--treebanks",
                           help="comma-separated folder names (default: all six, smallest first)")
    arguments.add_argument("--members", default="isbn,neural")
    arguments.add_argument("--beams", help="comma-separated beam sizes (default: each member's own)")
    arguments.add_argument("--seed", type=int, default=0)
    options = arguments.parse_args()
    names = options.treebanks.split(",") if options.treebanks else ORDER
    beams = [int(beam) for beam in options.beams.split(",")] if options.beams else None
    results: list[dict[str, object]] = []
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        for member in options.members.split(","):
            rows = run(UD / name, member, beams, options.seed)
            with OUT.open("a", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in rows)
            results += rows
    print(table(results))


if __name__ == "__main__":
    main()
