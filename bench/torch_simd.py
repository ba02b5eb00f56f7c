"""Does the CPU's vector instruction set change what the neural members learn?

Trains ``biaffine`` (seed 0, two epochs, one thread) on the first 300 Telugu training sentences
once per PyTorch kernel set (``ATEN_CPU_CAPABILITY``: ``default`` is scalar code; the machine's own
set is used when the variable is unset) and prints, per set, a SHA-256 over the trained weights and
the dev LAS of each epoch. Each training runs in a fresh process, twice for the machine's own set,
so the first two lines must agree (the training repeats itself) and any other line that differs
shows the kernels alone change the weights: two sessions on machines with different CPUs then
train different models from the same command and seed.

    .venv/bin/python bench/torch_simd.py [--capabilities default,avx2,avx512]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

from ud_files import UD, split_files


def train_once(sentences: int, epochs: int) -> dict[str, object]:
    """One seeded training in this process: the weights' hash, the dev LAS per epoch, and the
    kernel set PyTorch chose."""
    import numpy as np
    import torch

    from parsing.biaffine.member import BiaffineParser
    from parsing.conllu_io import load_sentences

    train_path, dev_path, _ = split_files(UD / "UD_Telugu-MTG")
    assert dev_path is not None
    train = load_sentences(train_path)[:sentences]
    dev = load_sentences(dev_path)[:60]
    parser = BiaffineParser(max_epochs=epochs, random_state=0, threads=1).fit(train, dev)
    digest = hashlib.sha256()
    for name in sorted(parser.weights_):
        digest.update(np.ascontiguousarray(parser.weights_[name]).tobytes())
    return {"capability": torch.backends.cpu.get_cpu_capability(), "sha256": digest.hexdigest()[:16],
            "dev_las": [round(100 * x, 2) for x in parser.history_["dev_las"]]}


def main() -> None:
    """Run one training per kernel set in a child process; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--capabilities", default="default,avx2",
                        help="kernel sets to force besides the machine's own (ATEN_CPU_CAPABILITY)")
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(train_once(args.sentences, args.epochs)))
        return
    runs = [None, None, *args.capabilities.split(",")]
    for capability in runs:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        env.pop("ATEN_CPU_CAPABILITY", None)
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        done = subprocess.run([sys.executable, __file__, "--child", "--sentences", str(args.sentences),
                               "--epochs", str(args.epochs)], env=env, capture_output=True, text=True,
                              check=True)
        row = {"forced": capability, **json.loads(done.stdout.strip().splitlines()[-1])}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
