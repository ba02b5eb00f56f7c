"""A peer from the field beside the ``biaffine`` member (issue #33): SuPar's biaffine dependency
parser (Zhang et al.; ``supar`` on PyPI), trained here from the treebank alone.

SuPar's ``biaffine-dep`` is Dozat & Manning's parser: word embeddings learned from scratch,
a character LSTM (``--feat char``: no tags as input, so the setting our predicted-tags figures
live in), a 3-layer BiLSTM, biaffine arc and label scorers, MST decoding for well-formed trees
(``--tree``). No pretrained embeddings (``embed`` empty). Its hyperparameters are SuPar's
published defaults for this model (the config below); training stops at ``--max-seconds`` of
wall clock like ours (``bench/biaffine.py --max-seconds``): SuPar writes its best model on dev
as it goes, and the run is stopped there. Multiword-token lines and empty nodes are left out of
SuPar's files (its reader takes syntactic words); the test file it parses is scored against the
gold file with the official CoNLL 2018 scorer (``udtools.udeval``, gold tokenization).

SuPar needs its own environment (it pins other libraries than ours), made once:

    python3 -m venv /tmp/peer/venv && /tmp/peer/venv/bin/pip install torch==2.13.0 supar

Then (one JSON line per treebank to ``--out``):

    OMP_NUM_THREADS=1 .venv/bin/python bench/peer_supar.py --treebanks UD_Telugu-MTG,UD_Wolof-WTB \\
        --max-seconds 1200 --out bench/results/peer_supar.jsonl

Run ``bench/biaffine.py`` with the same budget in the same session for the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from udtools import udeval

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import UD, split_files  # noqa: E402

CONFIG = """[Data]
encoder = 'lstm'
feat = ['char']
n_embed = 100
n_char_embed = 50
n_char_hidden = 100
n_feat_embed = 100
embed = ''
unk = 'unk'
min_freq = 2
fix_len = 20
[Network]
embed_dropout = .33
n_encoder_hidden = 800
n_encoder_layers = 3
encoder_dropout = .33
n_arc_mlp = 500
n_rel_mlp = 100
mlp_dropout = .33
[Optimizer]
lr = 2e-3
mu = .9
nu = .9
eps = 1e-12
weight_decay = 0
clip = 5.0
min_freq = 2
decay = .75
decay_steps = 5000
epochs = 5000
patience = 100
batch_size = 5000
update_steps = 1
"""
"""SuPar's biaffine-dep defaults (its ``configs/biaffine.dep.lstm.char.ini``), no embeddings."""


TRUSTED_LOAD = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
"""SuPar 1.1.4 saves its config in the model file, which PyTorch >= 2.6 refuses to unpickle by
default; the file is the one this run just trained, so it is loaded as SuPar expects."""


def words_only(source: Path, target: Path) -> None:
    """``source`` without multiword-token and empty-node lines (what SuPar's reader takes)."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        first = line.split("\t", 1)[0]
        if line and not line.startswith("#") and ("-" in first or "." in first):
            continue
        lines.append(line)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def score(gold: Path, system: Path) -> dict[str, float]:
    """UAS and LAS (percent) of ``system`` against ``gold`` by the official CoNLL 2018 scorer."""
    result = udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(system)))
    return {metric: round(100 * result[metric].f1, 2) for metric in ("UAS", "LAS")}


def run(treebank: str, venv: Path, max_seconds: float, seed: int) -> dict[str, Any]:
    """Train SuPar on ``treebank`` for at most ``max_seconds``, parse its test file, score it."""
    train, dev, test = split_files(UD / treebank)
    if dev is None:
        raise SystemExit(f"{treebank} has no dev file: SuPar needs one for early stopping")
    command = str(venv / "bin" / "biaffine-dep")
    with tempfile.TemporaryDirectory(prefix="peer-supar-") as folder:
        work = Path(folder)
        files = {}
        for name, path in (("train", train), ("dev", dev), ("test", test)):
            files[name] = work / f"{name}.conllu"
            words_only(path, files[name])
        (work / "config.ini").write_text(CONFIG, encoding="utf-8")
        model = work / "model.pt"
        started = time.monotonic()
        try:
            subprocess.run([command, "train", "-b", "-d", "-1", "-c", str(work / "config.ini"),
                            "-p", str(model), "--seed", str(seed), "--threads", "1", "--tree",
                            "--feat", "char", "--encoder", "lstm", "--embed", "",
                            "--train", str(files["train"]), "--dev", str(files["dev"]),
                            "--test", str(files["test"])],
                           check=True, timeout=max_seconds, capture_output=True)
        except subprocess.TimeoutExpired:
            pass  # the budget is spent: the best model on dev so far is on disk
        trained = time.monotonic() - started
        if not model.exists():
            raise SystemExit(f"SuPar wrote no model for {treebank} in {max_seconds:g} s")
        predicted = work / "pred.conllu"
        started = time.monotonic()
        subprocess.run([command, "predict", "-d", "-1", "-p", str(model), "--threads", "1", "--tree",
                        "--data", str(files["test"]), "--pred", str(predicted)],
                       check=True, capture_output=True, env=TRUSTED_LOAD)
        parse_seconds = time.monotonic() - started
        words = sum(1 for line in files["test"].read_text(encoding="utf-8").splitlines()
                    if line and not line.startswith("#"))
        return {"treebank": treebank, "system": "supar-biaffine-char", "seed": seed,
                "max_seconds": max_seconds, "train_seconds": round(trained, 1),
                "test_words_per_second": round(words / parse_seconds, 1),
                **{f"test_{k}": v for k, v in score(files["test"], predicted).items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebanks", default="UD_Telugu-MTG,UD_Wolof-WTB")
    parser.add_argument("--venv", type=Path, default=Path("/tmp/peer/venv"), help="SuPar's environment")
    parser.add_argument("--max-seconds", type=float, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="append one JSON line per treebank")
    args = parser.parse_args()
    for treebank in args.treebanks.split(","):
        row = run(treebank, args.venv, args.max_seconds, args.seed)
        print(json.dumps(row), flush=True)
        if args.out is not None:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
