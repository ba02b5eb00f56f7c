"""Words per second of the full default ensemble: every member parses, then the combination.

Uses the model directories ``bench/ensembles.py --models bench/out/models`` kept (gold tags),
so nothing is trained: for each treebank, the test file is parsed by every member and
combined by :data:`parsing.ensemble.registry.DEFAULT_METHOD` (through
``ModelBundle.parse_with_ensemble``, the path ``python -m parsing parse`` takes), once in
this process (one core) and once with members in ``--jobs`` forked processes. Each member's
own words/s is printed too, and the ensemble's test UAS/LAS (CoNLL 2018 conventions), so a
faster decoder is seen to give the same accuracy. Run it on a quiet machine.

    .venv/bin/python bench/ensemble_speed.py                 # every kept gold model
    .venv/bin/python bench/ensemble_speed.py --jobs 2 --treebanks UD_Wolof-WTB
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD, fit_ensemble  # noqa: E402
from parsing.metrics import evaluate  # noqa: E402
from parsing.pipeline import load_models  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def measure(model_dir: Path, test_path: Path, jobs: int) -> dict[str, object]:
    """Words/s of each member (one core) and of the full default ensemble (1 and ``jobs``)."""
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
    for workers in (1, jobs):
        started = time.perf_counter()
        _, combined = bundle.parse_with_ensemble(test, jobs=workers)
        result[f"ensemble_jobs{workers}"] = round(words / (time.perf_counter() - started))
    scores = evaluate(test, combined)
    result["ensemble_uas"] = round(100 * scores.uas.f1, 2)
    result["ensemble_las"] = round(100 * scores.las.f1, 2)
    return result


def main() -> None:
    """Measure every kept gold model (or ``--treebanks``); print JSON lines and a table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=REPO / "bench" / "out" / "models")
    parser.add_argument("--treebanks", help="comma-separated folder names (default: every kept model)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    chosen = args.treebanks.split(",") if args.treebanks else None
    rows = []
    for model_dir in sorted(args.models.glob("*-gold")):
        treebank = model_dir.name.removesuffix("-gold")
        if chosen and treebank not in chosen:
            continue
        test = next((SHARED / "ud" / treebank).glob("*-ud-test.conllu"))
        rows.append(measure(model_dir, test, args.jobs))
        print(json.dumps(rows[-1]), flush=True)
    if not rows:
        return
    fixed = ("treebank", "words", "method")
    members = [k for k in rows[0] if k not in fixed and not k.startswith("ensemble")]
    print("\n| treebank | " + " | ".join(members)
          + f" | ensemble, 1 process | ensemble, {args.jobs} | ensemble test LAS |")
    print("|---" * (len(members) + 4) + "|")
    for row in rows:
        print(f"| {row['treebank']} | " + " | ".join(str(row.get(m, "—")) for m in members)
              + f" | {row['ensemble_jobs1']} | {row[f'ensemble_jobs{args.jobs}']} | {row['ensemble_las']} |")


if __name__ == "__main__":
    main()
