"""The Markdown tables of ``bench/ensembles.py``: members, ensemble methods, calibration.

Rows are the JSON lines the benchmark writes (``kind`` = member, ensemble, oracle, udpipe1,
calibration, tagger), so ``ensembles.py --report FILE...`` prints them again from old runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from members import SHARED

Row = dict[str, Any]
BASELINES = SHARED / "bench" / "BASELINES.md"


def baseline_las() -> dict[tuple[str, str], float]:
    """UDPipe 1's LAS from ``../shared/bench/BASELINES.md`` by (treebank, tags): its accuracy is
    deterministic (the same run gives the same LAS), so modes run with ``--no-peer`` compare
    LAS with it; times are only ever compared within one run."""
    found: dict[tuple[str, str], float] = {}
    if not BASELINES.is_file():
        return found
    for line in BASELINES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 9 and cells[0].startswith("UD_"):
            found[(cells[0], "gold")] = float(cells[2])
            found[(cells[0], "predicted")] = float(cells[7])
    return found


def _mode(row: Row) -> str:
    """The tags column: ``gold``, ``predicted``, or ``predicted VARIANT`` for a ``--variant`` run."""
    return f"{row['tags']} {row['variant']}" if row.get("variant") else str(row["tags"])


def _groups(rows: list[Row]) -> list[tuple[str, str, list[Row]]]:
    keys = sorted({(r["treebank"], _mode(r)) for r in rows}, key=lambda k: (k[1] != "gold", k))
    return [(t, m, [r for r in rows if r["treebank"] == t and _mode(r) == m]) for t, m in keys]


def _peer_las(group: list[Row], treebank: str, tags: str) -> tuple[float | None, str]:
    peer = next((r for r in group if r["kind"] == "udpipe1"), None)
    if peer:
        return float(peer["LAS"]), "same run"
    known = baseline_las().get((treebank, tags.split()[0]))
    return known, "BASELINES.md" if known is not None else ""


def members_table(rows: list[Row]) -> str:
    """Markdown: every member per treebank and mode beside UDPipe 1 (LAS, train and parse time)."""
    lines = ["| treebank | tags | member | UAS | LAS | LAS − UDPipe | train s | train / UDPipe | words/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for treebank, tags, group in _groups(rows):
        peer = next((r for r in group if r["kind"] == "udpipe1"), None)
        peer_las, _ = _peer_las(group, treebank, tags)
        for r in [r for r in group if r["kind"] == "member"] + ([peer] if peer else []):
            delta = f"{r['LAS'] - peer_las:+.2f}" if peer_las is not None else "—"
            ratio = f"{r['train_s'] / peer['train_s']:.2f}" if peer else "—"
            lines.append(f"| {treebank} | {tags} | {r['parser']} | {r['UAS']} | {r['LAS']} | {delta} "
                         f"| {r['train_s']} | {ratio} | {r['parse_words_per_s']} |")
    return "\n".join(lines)


def methods_table(rows: list[Row]) -> str:
    """Markdown: LAS of every method per treebank and mode, the best member, the oracle and
    UDPipe 1, then each method's mean gain over the best member per tag mode."""
    groups = _groups(rows)
    methods = list(dict.fromkeys(r["parser"] for r in rows if r["kind"] == "ensemble"))
    head = "| treebank | tags | best member | " + " | ".join(methods) + " | oracle | UDPipe 1 |"
    lines = [head, "|" + "---|" * (5 + len(methods))]
    gains: dict[str, dict[str, list[float]]] = {}
    for treebank, tags, group in groups:
        members = [r for r in group if r["kind"] == "member"]
        if not members:
            continue
        best = max(members, key=lambda r: r["LAS"])
        by_method = {r["parser"]: r["LAS"] for r in group if r["kind"] == "ensemble"}
        oracle = next((r["LAS"] for r in group if r["kind"] == "oracle"), "—")
        peer_las, source = _peer_las(group, treebank, tags)
        cells = [f"{by_method[m]:.2f}" if m in by_method else "—" for m in methods]
        peer_cell = f"{peer_las:.2f}" + ("" if source == "same run" else "*") if peer_las is not None else "—"
        lines.append(f"| {treebank} | {tags} | {best['parser']} {best['LAS']:.2f} | " + " | ".join(cells)
                     + f" | {oracle} | {peer_cell} |")
        for m in methods:
            if m in by_method:
                gains.setdefault(tags, {}).setdefault(m, []).append(by_method[m] - best["LAS"])
    for tags, by_name in gains.items():
        lines.append(f"| **mean Δ best member ({tags})** | | | " + " | ".join(
            f"{np.mean(by_name[m]):+.2f} ({len(by_name[m])})" if by_name.get(m) else "—" for m in methods)
            + " | | |")
    return "\n".join(lines)


def calibration_table(rows: list[Row], method: str, split: str = "dev") -> str:
    """Markdown: ``method``'s arc accuracy per vote-share bucket, pooled over treebanks, per mode."""
    lines = [f"| tags | vote share ({method}, {split}) | words | head accuracy |", "|---|---|---|---|"]
    for tags in ("gold", "predicted"):
        pooled: dict[tuple[float, float], list[int]] = {}
        for r in rows:
            wanted = r["kind"] == "calibration" and r["parser"] == method and not r.get("variant")
            if wanted and r["split"] == split and r["tags"] == tags:
                for b in r["buckets"]:
                    total = pooled.setdefault((b["lower"], b["upper"]), [0, 0])
                    total[0] += b["words"]
                    total[1] += b["correct"]
        for (lower, upper), (words, correct) in sorted(pooled.items()):
            accuracy = f"{100 * correct / words:.1f}" if words else "—"
            lines.append(f"| {tags} | {lower:.1f}–{upper:.1f} | {words} | {accuracy} |")
    return "\n".join(lines)


def tables(rows: list[Row], method: str = "vote-uniform") -> str:
    """All three tables (members, methods, calibration of ``method``) as one Markdown text."""
    return "\n\n".join(["## Members\n", members_table(rows), "## Ensemble methods (test LAS)\n",
                        methods_table(rows) + "\n\n\\* UDPipe 1 LAS from ../shared/bench/BASELINES.md",
                        "## Calibration\n", calibration_table(rows, method)])
