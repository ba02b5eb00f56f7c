"""Benchmark every member parser beside UDPipe 1 trained in the same run on the same data.

For each treebank of ``../shared/ud`` with a train file, and each tag mode (gold UPOS, or
UPOS predicted by our tagger with jackknifed training tags): train every member on train
(dev picks epochs), parse test, score it (CoNLL 2018 conventions: all words, universal
DEPREL), and time training and parsing (one thread). UDPipe 1 runs in a second process at
the same time (one core each), through ``../shared/bench/peer_udpipe.py`` in ``../peer``.

    .venv/bin/python bench/members.py                       # everything (long: ~1-2 h)
    .venv/bin/python bench/members.py --treebanks UD_Telugu-MTG --tags gold --parsers graph1,eager

Writes ``bench/out/members.jsonl`` (one line per result) and prints a Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ud_files import split_files  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.members import member_names  # noqa: E402
from parsing.pipeline import load_models, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PEER_PYTHON = REPO.parent / "peer" / "bin" / "python"



def start_peer(treebank: Path, mode: str, out_dir: Path) -> subprocess.Popen[str] | None:
    """Start UDPipe 1 on ``treebank`` in the background (None when ../peer is missing)."""
    if not PEER_PYTHON.exists():
        print(f"peer not installed at {PEER_PYTHON}: see ../shared/bench/README.md", file=sys.stderr)
        return None
    command = [str(PEER_PYTHON), str(SHARED / "bench" / "peer_udpipe.py"), str(treebank), str(out_dir), mode]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


def finish_peer(peer: subprocess.Popen[str], treebank: Path, mode: str) -> dict[str, object]:
    """Wait for a run :func:`start_peer` began; its result as a ``udpipe1`` row."""
    output, _ = peer.communicate()
    measured = json.loads(output.strip().splitlines()[-1])
    return {"treebank": treebank.name, "tags": mode, "parser": "udpipe1",
            "UAS": measured["UAS"], "LAS": measured["LAS"], "UPOS": measured.get("UPOS"),
            "train_s": measured["train_s"],
            "parse_words_per_s": measured["parse_words_per_s"]}


def run_members(treebank: Path, mode: str, names: list[str], work: Path) -> list[dict[str, object]]:
    """Train, parse and score each member; one result dict per member."""
    train_path, dev_path, test_path = split_files(treebank)
    train, test = load_sentences(train_path), load_sentences(test_path)
    dev = load_sentences(dev_path) if dev_path else None
    model_dir = work / f"{treebank.name}-{mode}"
    seconds = train_models(train, dev, model_dir, names=names, tags=mode)  # type: ignore[arg-type]
    bundle = load_models(model_dir)
    prepared = bundle.prepare(test)
    words = sum(len(s) for s in test)
    results: list[dict[str, object]] = []
    for name in names:
        started = time.perf_counter()
        parses = bundle.parsers[name].predict(prepared)
        spent = time.perf_counter() - started
        scores = evaluate(test, parses)
        results.append({"treebank": treebank.name, "tags": mode, "parser": name,
                        "UAS": round(100 * scores.uas.f1, 2), "LAS": round(100 * scores.las.f1, 2),
                        "train_s": round(seconds[name] + seconds.get("tagger", 0.0), 1),
                        "parse_words_per_s": round(words / spent)})
        print(json.dumps(results[-1]), file=sys.stderr)
    return results


def table(rows: list[dict[str, object]]) -> str:
    """Markdown table of results, with the peer's LAS and time ratios per treebank and mode."""
    peers = {(r["treebank"], r["tags"]): r for r in rows if r["parser"] == "udpipe1"}
    lines = ["| treebank | tags | parser | UAS | LAS | LAS - UDPipe | train s | train / UDPipe "
             "| words/s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        peer = peers.get((r["treebank"], r["tags"]))
        delta = f"{float(r['LAS']) - float(peer['LAS']):+.2f}" if peer else "—"  # type: ignore[arg-type]
        ratio = f"{float(r['train_s']) / float(peer['train_s']):.2f}" if peer else "—"  # type: ignore[arg-type]
        lines.append(f"| {r['treebank']} | {r['tags']} | {r['parser']} | {r['UAS']} | {r['LAS']} | {delta} "
                     f"| {r['train_s']} | {ratio} | {r['parse_words_per_s']} |")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--treebanks", help="comma-separated folder names (default: all with train)")
    parser.add_argument("--tags", default="gold,predicted", help="gold, predicted or both")
    parser.add_argument("--parsers", help="comma-separated members (default: all)")
    parser.add_argument("--no-peer", action="store_true", help="skip UDPipe 1")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "members.jsonl")
    args = parser.parse_args()
    names = member_names(args.parsers)
    chosen = args.treebanks.split(",") if args.treebanks else None
    treebanks = [t for t in sorted((SHARED / "ud").iterdir())
                 if t.is_dir() and any(t.glob("*-ud-train.conllu")) and (not chosen or t.name in chosen)]
    rows: list[dict[str, object]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, args.out.open("a", encoding="utf-8") as log:
        for treebank in treebanks:
            for mode in args.tags.split(","):
                peer = None if args.no_peer else start_peer(treebank, mode, Path(tmp) / "peer")
                results = run_members(treebank, mode, names, Path(tmp))
                if peer is not None:
                    results.append(finish_peer(peer, treebank, mode))
                for result in results:
                    log.write(json.dumps(result) + "\n")
                log.flush()
                rows.extend(results)
    print(table(rows))


if __name__ == "__main__":
    main()
