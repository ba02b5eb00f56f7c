"""UDPipe 1's tagger and lemmatizer beside the ``biaffine`` member's (issue #33: "UFeats and lemma
accuracy beside UDPipe 1's"), scored with the official CoNLL 2018 scorer (``udtools.udeval``).

Per treebank: UDPipe 1's tagger (its default options: UPOS, XPOS, FEATS and lemmas; tokenizer and
parser off) trains on train with dev held out, through ``bench/peer_udpipe_tagger.py`` under the
peer interpreter (``/work/peer``: ``python3 -m venv /work/peer && /work/peer/bin/pip install
ufal.udpipe``), tags test from the forms alone, and its file is scored for UPOS, XPOS, UFeats,
AllTags and Lemmas. One JSON line per treebank goes to ``--out``; ``--report`` sets them beside
the ``biaffine`` rows of ``bench/biaffine.py`` (mean over their seeds).

    OMP_NUM_THREADS=1 .venv/bin/python bench/udpipe1_morphology.py \
        --out bench/results/udpipe1_morphology.jsonl
    .venv/bin/python bench/udpipe1_morphology.py --report bench/results/udpipe1_morphology.jsonl \\
        --biaffine bench/results/biaffine-seeds-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from udtools import udeval

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import REPO, UD, split_files  # noqa: E402

METRICS = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas")
DEFAULT = "UD_Tamil-TTB,UD_Telugu-MTG,UD_Wolof-WTB,UD_Afrikaans-AfriBooms,UD_Welsh-CCG,UD_Irish-IDT"


def run(treebank: str, peer: Path, out: Path) -> dict[str, Any]:
    """Train and tag with UDPipe 1 under ``peer``; the official scores of its test file."""
    script = REPO / "bench" / "peer_udpipe_tagger.py"
    done = subprocess.run([str(peer), str(script), str(UD / treebank), str(out)],
                          capture_output=True, text=True, check=True)
    peer_row = json.loads(done.stdout.strip().splitlines()[-1])
    _, _, test = split_files(UD / treebank)
    system = out / f"{treebank}.test.udpipe.conllu"
    scores = udeval.evaluate(udeval.load_conllu_file(str(test)), udeval.load_conllu_file(str(system)))
    return {"treebank": treebank, "system": "udpipe1-tagger", "train_s": peer_row["train_s"],
            "tag_words_per_s": peer_row["tag_words_per_s"],
            **{name: round(100 * scores[name].f1, 2) for name in METRICS}}


def report(paths: list[str], biaffine: list[str]) -> None:
    """A markdown table: UDPipe 1 against the biaffine member's seeds (mean), per metric."""
    ours: dict[str, list[dict[str, Any]]] = {}
    for path in biaffine:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if row and not row["params"]:
                ours.setdefault(row["treebank"], []).append(row["test"])
    peer = [json.loads(line) for path in paths
            for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    names = ("UPOS", "XPOS", "UFeats", "Lemmas")
    print("| treebank | seeds | " + " | ".join(f"{n} biaffine | {n} UDPipe 1" for n in names) + " |")
    print("|---" * (2 + 2 * len(names)) + "|")
    gaps: dict[str, list[float]] = {name: [] for name in names}
    for row in sorted(peer, key=lambda r: r["treebank"]):
        seeds = ours.get(row["treebank"], [])
        if not seeds:
            continue
        cells = []
        for name in names:
            mean = float(np.mean([s[name] for s in seeds]))
            gaps[name].append(mean - row[name])
            cells += [f"{mean:.2f}", f"{row[name]:.2f}"]
        print(f"| {row['treebank']} | {len(seeds)} | " + " | ".join(cells) + " |")
    print("\nmean biaffine − UDPipe 1: " + ", ".join(f"{n} {np.mean(v):+.2f}" for n, v in gaps.items() if v))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default=DEFAULT)
    parser.add_argument("--peer-python", type=Path, default=Path("/work/peer/bin/python"))
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "udpipe1-morphology")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "udpipe1_morphology.jsonl"))
    parser.add_argument("--report", nargs="*")
    parser.add_argument("--biaffine", nargs="*",
                        default=[str(REPO / "bench" / "results" / "biaffine-seeds-cpu.jsonl")])
    args = parser.parse_args()
    if args.report:
        report(args.report, args.biaffine)
        return
    for treebank in args.treebanks.split(","):
        row = run(treebank, args.peer_python, args.work)
        with Path(args.out).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
