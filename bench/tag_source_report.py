"""Whose tags the members parse with (issue #33): the same models parsed with the tagger's UPOS and
with the model's choice (the neural member's where it tags dev better, :mod:`parsing.tag_source`).

Reads two ``bench/ensembles.py`` JSONL files of the same models (predicted tags): one run with
``--tag-source tagger``, one with the default (``auto``). Per treebank: dev UPOS of the tagger
and of the member (the manifest's ``dev_upos``), the source chosen, test UPOS the members parsed
with, the mean test LAS of the feature-based members and the ensembles' test LAS, each with the
tagger's tags and with the chosen ones.

    .venv/bin/python bench/tag_source_report.py --tagger bench/results/ensembles/predicted-taggertags.jsonl \\
        --chosen bench/results/ensembles/predicted-tagsource.jsonl --methods vote-tuned-labels,vote-uniform
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def read(path: Path) -> dict[tuple[str, str], Row]:
    """The last row per (treebank, parser) of a JSONL file (members, ensembles and the tagger row)."""
    rows: dict[tuple[str, str], Row] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if row and row.get("kind") in ("member", "ensemble", "tagger"):
            rows[(row["treebank"], row["parser"])] = row
    return rows


def feature_members(rows: dict[tuple[str, str], Row], treebank: str) -> list[Row]:
    """The members of ``treebank`` that parse with the input tags (every one but the self-tagging)."""
    return [row for (bank, _), row in rows.items() if bank == treebank and row["kind"] == "member"
            and not row["parser"].startswith("biaffine")]


def table(tagger: dict[tuple[str, str], Row], chosen: dict[tuple[str, str], Row], methods: list[str]) -> str:
    """The markdown table and the mean changes."""
    treebanks = sorted({bank for bank, _ in chosen} & {bank for bank, _ in tagger})
    head = ["treebank", "dev UPOS tagger / biaffine (/ combined)", "source", "test UPOS",
            "feature members (mean LAS)", *[f"{method} LAS" for method in methods]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    deltas: dict[str, list[float]] = {"upos": [], "members": [], **{m: [] for m in methods}}
    for bank in treebanks:
        before, after = tagger[(bank, "tagger")], chosen[(bank, "tagger")]
        dev = after.get("dev_upos") or {}
        dev_text = " / ".join(f"{100 * float(v):.2f}" for v in dev.values()) if dev else "—"
        old = statistics.fmean(r["LAS"] for r in feature_members(tagger, bank))
        new = statistics.fmean(r["LAS"] for r in feature_members(chosen, bank))
        cells = [bank.removeprefix("UD_"), dev_text, after["source"],
                 f"{before['UPOS']:.2f} → {after['UPOS']:.2f}", f"{old:.2f} → {new:.2f}"]
        deltas["upos"].append(after["UPOS"] - before["UPOS"])
        deltas["members"].append(new - old)
        for method in methods:
            a, b = tagger[(bank, method)]["LAS"], chosen[(bank, method)]["LAS"]
            cells.append(f"{a:.2f} → {b:.2f} ({b - a:+.2f})")
            deltas[method].append(b - a)
        lines.append("| " + " | ".join(cells) + " |")
    summary = ", ".join(f"{name} {statistics.fmean(values):+.2f}"
                        for name, values in deltas.items() if values)
    return "\n".join(lines) + f"\n\nmean change over {len(treebanks)}: {summary}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tagger", type=Path, required=True, help="the run with --tag-source tagger")
    parser.add_argument("--chosen", type=Path, required=True, help="the run with the model's choice")
    parser.add_argument("--methods", default="vote-tuned-labels,vote-uniform")
    args = parser.parse_args()
    print(table(read(args.tagger), read(args.chosen), args.methods.split(",")))


if __name__ == "__main__":
    main()
