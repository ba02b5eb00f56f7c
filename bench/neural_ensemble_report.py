"""Tables of issue #33's ensemble with neural members, from ``bench/ensembles.py`` lines.

Reads JSONL files written by ``bench/ensembles.py --variant biaffine`` (the nine members plus
``biaffine``, and ``biaffine-b`` and ``lstm-hybrid`` where they were trained), keeps the last line of
each (treebank, row), and prints per treebank: the best feature-based member on test, the neural
members, the nine-member vote (the old default), the ensembles over the nine plus the neural
member(s), UDPipe 1 (trained in the same run where it was) and UDPipe 2's published LAS
(``../shared/research/anchors/modern-parsers.md``, UD 2.17 models with multilingual BERT).

    .venv/bin/python bench/neural_ensemble_report.py bench/results/ensembles/predicted-biaffine.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

UDPIPE2_LAS = {"UD_Afrikaans-AfriBooms": 87.76, "UD_Irish-IDT": 82.20, "UD_Tamil-TTB": 68.63,
               "UD_Telugu-MTG": 85.16, "UD_Welsh-CCG": 82.61, "UD_Wolof-WTB": 80.16}
"""UDPipe 2's published test LAS, gold tokenization (the anchors file; Irish is not comparable:
the shared Irish train file is not the full one)."""
CLASSIC = ("graph1", "graph2", "eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl", "neural")
NEURAL = ("biaffine", "biaffine-b", "lstm-hybrid")


def latest_rows(paths: list[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """The last line of each (treebank, parser) among the ``member``, ``ensemble`` and ``udpipe1`` rows."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("kind") in ("member", "ensemble", "udpipe1", "tagger"):
                    rows[(row["treebank"], row["parser"])] = row
    return rows


def table(rows: dict[tuple[str, str], dict[str, Any]], methods: list[str]) -> str:
    """The Markdown table: one line per treebank, then the mean differences."""
    treebanks = sorted({treebank for treebank, _ in rows})
    head = ["treebank", "best classic member", *NEURAL, "nine: vote-uniform", *methods,
            "UDPipe 1", "UDPipe 2"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    gains: dict[str, list[float]] = {m: [] for m in ["vs best neural", "vs UDPipe 2"]}
    neural_gains: list[float] = []  # the best neural member against the best classic one
    for treebank in treebanks:
        def las(name: str, treebank: str = treebank) -> float | None:
            row = rows.get((treebank, name))
            return None if row is None else float(row["LAS"])
        classic = [(las(n), n) for n in CLASSIC if las(n) is not None]
        best = max(classic) if classic else None
        neural = [las(n) for n in NEURAL]
        ensembles = [las(m) for m in methods]
        cells = [treebank.removeprefix("UD_"), f"{best[1]} {best[0]:.2f}" if best else "—",
                 *(f"{x:.2f}" if x is not None else "—" for x in neural),
                 f"{las('vote-uniform[nine]'):.2f}" if las("vote-uniform[nine]") is not None else "—",
                 *(f"{x:.2f}" if x is not None else "—" for x in ensembles),
                 f"{las('udpipe1'):.2f}" if las("udpipe1") is not None else "—",
                 f"{UDPIPE2_LAS.get(treebank, float('nan')):.2f}"]
        out.append("| " + " | ".join(cells) + " |")
        first = ensembles[0] if ensembles else None
        known = [x for x in neural if x is not None]
        if first is not None and known:
            gains["vs best neural"].append(first - max(known))
        if best is not None and known:
            neural_gains.append(max(known) - best[0])
        if first is not None and treebank in UDPIPE2_LAS and treebank != "UD_Irish-IDT":
            gains["vs UDPipe 2"].append(first - UDPIPE2_LAS[treebank])
    if neural_gains:
        mean = statistics.mean(neural_gains)
        out.append(f"\nbest neural member vs best classic member: mean {mean:+.2f} over "
                   f"{len(neural_gains)} ({', '.join(f'{v:+.2f}' for v in neural_gains)})")
    for label, values in gains.items():
        if values:
            out.append(f"\n{methods[0]} {label}: mean {statistics.mean(values):+.2f} over {len(values)} "
                       f"({', '.join(f'{v:+.2f}' for v in values)})")
    return "\n".join(out)


def main() -> None:
    """Print the table; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--methods", default="vote-tuned,vote-tuned-labels,vote-uniform,meta-svm",
                        help="ensembles over the nine plus the neural member(s), the first one summarised")
    args = parser.parse_args()
    print(table(latest_rows(args.files), args.methods.split(",")))


if __name__ == "__main__":
    main()
