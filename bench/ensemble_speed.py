"""Words per second of the full default ensemble: every member parses, then the combination.

Uses the model directories ``bench/ensembles.py --models bench/out/models`` kept (gold tags),
so nothing is trained: for each treebank, the test file is parsed by every member and
combined by :data:`parsing.ensemble.registry.DEFAULT_METHOD` (through
``ModelBundle.parse_with_ensemble``, the path ``python -m parsing parse`` takes), once in
this process (one core) and once with members in ``--jobs`` forked processes. Each member's
own words/s is printed too, and the ensemble's test UAS/LAS (CoNLL 2018 conventions), so a
faster decoder is seen to give the same accuracy. With UDPipe 1 models from
``../shared/bench/peer_udpipe.py`` (``--peer-models``, default ``../peer-out``), UDPipe 1
parses the same test file in the same run (one thread, gold tags, its timing includes
reading and writing CoNLL-U, ours does not) for a ratio. Run it on a quiet machine.

    .venv/bin/python bench/ensemble_speed.py                 # every kept gold model
    .venv/bin/python bench/ensemble_speed.py --jobs 2 --treebanks UD_Wolof-WTB
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD, fit_ensemble  # noqa: E402
from parsing.metrics import evaluate  # noqa: E402
from parsing.pipeline import load_models  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PEER_PYTHON = REPO.parent / "peer" / "bin" / "python"

_PEER_PARSE = """
import sys, time
from ufal.udpipe import Model, Pipeline, ProcessingError
model = Model.load(sys.argv[1])
pipe = Pipeline(model, "conllu", Pipeline.NONE, Pipeline.DEFAULT, "conllu")
text = open(sys.argv[2], encoding="utf-8").read()
started = time.perf_counter()
pipe.process(text, ProcessingError())
print(time.perf_counter() - started)
"""


def peer_words_per_second(model: Path, test_path: Path, words: int) -> int | None:
    """UDPipe 1's parsing speed (gold tags, CoNLL-U in and out) with ``model``, or None."""
    if not (PEER_PYTHON.exists() and model.is_file()):
        return None
    command = [str(PEER_PYTHON), "-c", _PEER_PARSE, str(model), str(test_path)]
    run = subprocess.run(command, capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    return round(words / float(run.stdout))


def measure(model_dir: Path, test_path: Path, jobs: int, peer_model: Path) -> dict[str, object]:
    """Words/s of each member (one core), of the full default ensemble (1 and ``jobs``
    processes) and of UDPipe 1 with ``peer_model`` when there is one."""
    bundle = load_models(model_dir)
    if bundle.ensemble is None or bundle.ensemble_method != DEFAULT_METHOD:
        ensemble, names = fit_ensemble(DEFAULT_METHOD, bundle.parsers, [], None)  # learns nothing
        bundle.ensemble, bundle.ensemble_method, bundle.ensemble_members = ensemble, DEFAULT_METHOD, names
    test = load_sentences(test_path)
    words = sum(len(s) for s in test)
    result: dict[str, object] = {"treebank": model_dir.name, "words": words, "method": DEFAULT_METHOD}
    for name, parser in bundle.parsers.items():
        started = time.perf_counter()
        parser.predict(test)
        result[name] = round(words / (time.perf_counter() - started))
    speeds = {}
    for workers in (1, jobs):
        started = time.perf_counter()
        _, combined = bundle.parse_with_ensemble(test, jobs=workers)
        speeds[workers] = words / (time.perf_counter() - started)
        result[f"ensemble_jobs{workers}"] = round(speeds[workers])
    scores = evaluate(test, combined)
    result["ensemble_uas"] = round(100 * scores.uas.f1, 2)
    result["ensemble_las"] = round(100 * scores.las.f1, 2)
    peer = peer_words_per_second(peer_model, test_path, words)
    result["udpipe1"] = peer
    result["ensemble_per_udpipe1"] = round(speeds[1] / peer, 3) if peer else None
    return result


def main() -> None:
    """Measure every kept gold model (or ``--treebanks``); print JSON lines and a table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=REPO / "bench" / "out" / "models")
    parser.add_argument("--treebanks", help="comma-separated folder names (default: every kept model)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--peer-models", type=Path, default=REPO.parent / "peer-out",
                        help="UDPipe 1 models, TREEBANK/model.gold.udpipe as ../shared/bench/peer_udpipe.py "
                             "writes them (default ../peer-out); without one, no peer column")
    args = parser.parse_args()
    chosen = args.treebanks.split(",") if args.treebanks else None
    rows = []
    for model_dir in sorted(args.models.glob("*-gold")):
        treebank = model_dir.name.removesuffix("-gold")
        if chosen and treebank not in chosen:
            continue
        test = next((SHARED / "ud" / treebank).glob("*-ud-test.conllu"))
        peer_model = args.peer_models / treebank / "model.gold.udpipe"
        rows.append(measure(model_dir, test, args.jobs, peer_model))
        print(json.dumps(rows[-1]), flush=True)
    if not rows:
        return
    fixed = ("treebank", "words", "method", "udpipe1")
    members = [k for k in rows[0] if k not in fixed and not k.startswith("ensemble")]
    print("\n| treebank | " + " | ".join(members) + f" | ensemble, 1 process | ensemble, {args.jobs} "
          "| UDPipe 1 | ensemble (1) / UDPipe 1 | ensemble test LAS |")
    print("|---" * (len(members) + 6) + "|")
    for row in rows:
        peer, ratio = row["udpipe1"] or "—", row["ensemble_per_udpipe1"] or "—"
        print(f"| {row['treebank']} | " + " | ".join(str(row.get(m, "—")) for m in members)
              + f" | {row['ensemble_jobs1']} | {row[f'ensemble_jobs{args.jobs}']} | {peer} | {ratio}"
              + f" | {row['ensemble_las']} |")


if __name__ == "__main__":
    main()
