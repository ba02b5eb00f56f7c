"""Is one ensemble method really better than another? Paired significance tests on test.

Uses the gold model directories that ``bench/ensembles.py --models bench/out/models`` keeps.
For each treebank, every member parses dev and test once. Each method is fitted on the dev
parses (tuning data is dev, never test) and combines the test parses. Then
:func:`parsing.scorer.significance.compare` runs its three paired tests (bootstrap, approximate
randomisation, McNemar) for LAS: per treebank, and over all the test sets pooled.

    .venv/bin/python bench/default_method.py vote-uniform vote-accuracy
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import combine, fit_ensemble  # noqa: E402
from parsing.pipeline import load_models  # noqa: E402
from parsing.scorer.significance import PairedComparison, compare  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def method_parses(
    model_dir: Path, treebank: Path, methods: list[str]
) -> tuple[list[Sentence], list[list[Parse]]]:
    """The gold test sentences and each method's parses of them (fitted on dev)."""
    bundle = load_models(model_dir)
    dev = load_sentences(next(treebank.glob("*-ud-dev.conllu")))
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    member_parses = bundle.parse(test)
    outputs = []
    for method in methods:
        ensemble, names = fit_ensemble(method, bundle.parsers, [], dev)
        outputs.append(combine(ensemble, names, test, member_parses))
    return test, outputs


def row(name: str, result: PairedComparison) -> dict[str, object]:
    """One line of the table: both LAS, their difference and the three p-values."""
    return {
        "treebank": name,
        "las_a": round(100 * result.score_a, 2),
        "las_b": round(100 * result.score_b, 2),
        "delta": round(100 * result.delta, 2),
        "bootstrap_p": round(result.bootstrap.p_value, 4),
        "randomization_p": round(result.randomization_p, 4),
        "mcnemar_p": round(result.mcnemar.p_value, 4),
    }


def main() -> None:
    """Compare method A with method B on every kept gold model; print JSON lines and a table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("method_a")
    parser.add_argument("method_b")
    parser.add_argument("--models", type=Path, default=REPO / "bench" / "out" / "models")
    args = parser.parse_args()
    rows, pooled_gold, pooled_a, pooled_b = [], [], [], []
    for model_dir in sorted(args.models.glob("*-gold")):
        treebank = SHARED / "ud" / model_dir.name.removesuffix("-gold")
        gold, (parses_a, parses_b) = method_parses(model_dir, treebank, [args.method_a, args.method_b])
        rows.append(row(treebank.name, compare(gold, parses_a, parses_b)["LAS"]))
        print(json.dumps(rows[-1]), flush=True)
        pooled_gold += gold
        pooled_a += parses_a
        pooled_b += parses_b
    rows.append(row("all test sets pooled", compare(pooled_gold, pooled_a, pooled_b)["LAS"]))
    print(json.dumps(rows[-1]), flush=True)
    print(f"\n| treebank | {args.method_a} LAS | {args.method_b} LAS | Δ | bootstrap p | randomisation p "
          "| McNemar p |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        scores = f"{r['las_a']:.2f} | {r['las_b']:.2f} | {r['delta']:+.2f}"
        tests = f"{r['bootstrap_p']} | {r['randomization_p']} | {r['mcnemar_p']}"
        print(f"| {r['treebank']} | {scores} | {tests} |")


if __name__ == "__main__":
    main()
