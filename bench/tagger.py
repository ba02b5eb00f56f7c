"""Benchmark parsing.tagger.Tagger against UDPipe 1's tagger on every shared UD treebank.

For each treebank folder with a train file: train on train (dev for choosing the epoch),
tag test, report UPOS/FEATS accuracy, training seconds and tagging words/s (CoNLL-U text
in and out included, as for the peer), next to UDPipe 1 trained on the same data by
``bench/peer_udpipe_tagger.py`` under the peer interpreter.

usage:
    .venv/bin/python bench/tagger.py [--ud ../shared/ud] [--out bench/out]
        [--peer-python ../peer/bin/python | --peer-results FILE.jsonl | --no-peer]
        [--treebank NAME ...] [--no-feats]

Writes ``OUT/tagger.jsonl`` (one line per treebank and system) and ``OUT/tagger.md``
(the Markdown table, also printed).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from parsing.commands.tagging import with_tags
from parsing.conllu_io import FEATS, UPOS, format_conllu, parse_conllu, read_conllu, to_sentence
from parsing.tagger.model import Tagger

ROOT_DIR = Path(__file__).resolve().parents[1]


def run_ours(treebank: Path, feats: bool) -> dict[str, object]:
    """Train and evaluate our tagger on one treebank."""
    train = [to_sentence(raw) for raw in read_conllu(next(treebank.glob("*-ud-train.conllu")))]
    dev_path = next(treebank.glob("*-ud-dev.conllu"), None)
    dev = [to_sentence(raw) for raw in read_conllu(dev_path)] if dev_path else None
    test_path = next(treebank.glob("*-ud-test.conllu"))
    gold = read_conllu(test_path)

    started = time.perf_counter()
    tagger = Tagger(predict_feats=feats).fit(train, dev)
    train_s = time.perf_counter() - started

    text = test_path.read_text(encoding="utf-8")
    started = time.perf_counter()
    raws = parse_conllu(text)
    tagged = tagger.tag([to_sentence(raw) for raw in raws])
    columns = [UPOS] + [FEATS] * feats
    output = format_conllu(with_tags(r, s, columns) for r, s in zip(raws, tagged, strict=True))
    tag_s = time.perf_counter() - started

    predicted = parse_conllu(output)
    pairs = [(g, p) for gs, ps in zip(gold, predicted, strict=True)
             for g, p in zip(gs.words, ps.words, strict=True)]
    n = len(pairs)
    result: dict[str, object] = {
        "treebank": treebank.name, "system": "arcvote", "train_s": round(train_s, 1),
        "tag_words_per_s": round(n / tag_s), "test_words": n,
        "UPOS": round(100 * sum(g[UPOS] == p[UPOS] for g, p in pairs) / n, 2),
        "n_iter": tagger.n_iter_,
    }
    if feats:
        result["FEATS"] = round(100 * sum(g[FEATS] == p[FEATS] for g, p in pairs) / n, 2)
    return result


def run_peer(python: Path, treebank: Path, out: Path) -> dict[str, object]:
    """Run bench/peer_udpipe_tagger.py under the peer interpreter; its JSON result."""
    script = ROOT_DIR / "bench" / "peer_udpipe_tagger.py"
    done = subprocess.run([str(python), str(script), str(treebank), str(out / "peer")],
                          capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def markdown(rows: list[tuple[dict[str, object], dict[str, object] | None]]) -> str:
    """The comparison table."""
    def cell(result: dict[str, object] | None, key: str) -> str:
        return "–" if result is None or key not in result else str(result[key])

    def ratio(ours: dict[str, object], peer: dict[str, object] | None, key: str) -> str:
        if peer is None or key not in peer:
            return "–"
        return f"{float(str(ours[key])) / float(str(peer[key])):.2f}"

    lines = [
        "| treebank | UPOS ours | UPOS UDPipe | Δ UPOS | FEATS ours | FEATS UDPipe "
        "| train s ours | train s UDPipe | train ratio | words/s ours | words/s UDPipe "
        "| speed ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ours, peer in rows:
        delta = "–" if peer is None else f"{float(str(ours['UPOS'])) - float(str(peer['UPOS'])):+.2f}"
        lines.append(
            f"| {ours['treebank']} | {ours['UPOS']} | {cell(peer, 'UPOS')} | {delta} "
            f"| {cell(ours, 'FEATS')} | {cell(peer, 'FEATS')} "
            f"| {ours['train_s']} | {cell(peer, 'train_s')} | {ratio(ours, peer, 'train_s')} "
            f"| {ours['tag_words_per_s']} | {cell(peer, 'tag_words_per_s')} "
            f"| {ratio(ours, peer, 'tag_words_per_s')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--ud", type=Path, default=ROOT_DIR.parent / "shared" / "ud")
    parser.add_argument("--out", type=Path, default=ROOT_DIR / "bench" / "out")
    peer = parser.add_mutually_exclusive_group()
    peer.add_argument("--peer-python", type=Path, default=ROOT_DIR.parent / "peer" / "bin" / "python")
    peer.add_argument("--peer-results", type=Path, help="JSON lines from peer_udpipe_tagger.py")
    peer.add_argument("--no-peer", action="store_true")
    parser.add_argument("--treebank", action="append", help="only these folders")
    parser.add_argument("--no-feats", dest="feats", action="store_false")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    known: dict[str, dict[str, object]] = {}
    if args.peer_results:
        for line in args.peer_results.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                known[record["treebank"]] = record
    rows: list[tuple[dict[str, object], dict[str, object] | None]] = []
    with open(args.out / "tagger.jsonl", "w", encoding="utf-8") as log:
        for treebank in sorted(p for p in args.ud.iterdir() if p.is_dir()):
            if args.treebank and treebank.name not in args.treebank:
                continue
            if not any(treebank.glob("*-ud-train.conllu")):
                print(f"skipping {treebank.name}: no train file", file=sys.stderr)
                continue
            ours = run_ours(treebank, args.feats)
            print(json.dumps(ours), file=sys.stderr, flush=True)
            theirs: dict[str, object] | None = None
            if args.peer_results:
                theirs = known.get(treebank.name)
            elif not args.no_peer:
                theirs = run_peer(args.peer_python, treebank, args.out)
                print(json.dumps(theirs), file=sys.stderr, flush=True)
            for record in (ours, theirs):
                if record is not None:
                    log.write(json.dumps({"system": "udpipe1", **record}
                                         if record is theirs else record) + "\n")
            rows.append((ours, theirs))
    table = markdown(rows)
    (args.out / "tagger.md").write_text(table, encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
