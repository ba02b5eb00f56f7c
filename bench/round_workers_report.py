"""The table of ``bench/round_workers.py``'s records (``--report``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def report_table(records: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of the records (in run order); training speed-up against the latest 1-worker run
    of the same setting so far (the one of the same invocation when ``--workers 1,2`` ran them)."""
    def setting(record: dict[str, Any]) -> tuple[Any, ...]:
        return (record["treebank"], record["tags"], tuple(record["members"]), record["pool_sentences"],
                record["backend"], record["fast"])
    one_worker: dict[tuple[Any, ...], dict[str, Any]] = {}
    lines = ["| treebank | tags | members | workers | queue+db | train trees / words | pool sents / words "
             "| total s | train s | train speed-up | pre-annotate s | sents/s | words/s | dev LAS "
             "| member train s (processes) | tagger fits: summed / wall s (processes) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r["workers"] == 1:
            one_worker[setting(r)] = r
        base = one_worker.get(setting(r))
        speedup = f"{base['train_s'] / r['train_s']:.2f}x" if base else ""
        seconds = ", ".join(f"{name} {value:.1f}" for name, value in r["member_seconds"].items())
        las = "" if r.get("dev_las") is None else f"{r['dev_las']:.2f}"
        members = f"{len(r['members'])}: {','.join(r['members'])}" + (" (fast)" if r["fast"] else "")
        lines.append(
            f"| {r['treebank']} | {r['tags']} | {members} | {r['workers']} | {r['backend']} "
            f"| {r['train_sentences']:,} / {r['train_words']:,} "
            f"| {r['pool_sentences']:,} / {r['pool_words']:,} "
            f"| {r['total_s']:.1f} | {r['train_s']:.1f} | {speedup} | {r['preannotate_s']:.1f} "
            f"| {r['sentences_per_s']:.1f} | {r['words_per_s']:.0f} | {las} "
            f"| {seconds} ({r['worker_processes_used']}) | {tagger_cell(r)} |")
    return "\n".join(lines)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of ``path``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tagger_cell(record: dict[str, Any]) -> str:
    """A predicted-tags round's tagger fits: summed seconds / wall seconds (worker processes)."""
    if "tagger_fits_s" not in record:
        return ""
    processes = len(set(record["tagger_fit_workers"].values()))
    return f"{record['tagger_fits_s']:.1f} / {record['tagger_wall_s']:.1f} ({processes})"
