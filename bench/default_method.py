"""Is one ensemble method really better than another? Paired significance tests on test.

Uses the model directories that ``bench/ensembles.py --models bench/out/models`` keeps
(``TREEBANK-gold`` or, with ``--tags predicted``, ``TREEBANK-predicted``: there dev and test are
tagged by the model's own tagger first, as the members saw them). For each treebank, every member
parses dev and test once. Each method is fitted on the dev parses (tuning data is dev, never test)
and combines the test parses. A side may also be one member (``member:graph2``) or the member with
the best dev LAS (``member:best``): "does the ensemble beat its best member?" Then
:func:`parsing.scorer.significance.compare` runs its three paired tests (bootstrap, approximate
randomisation, McNemar) for LAS: per treebank, and over all the test sets pooled.

    .venv/bin/python bench/default_method.py vote-uniform vote-accuracy
    .venv/bin/python bench/default_method.py --tags predicted vote-uniform member:best vote-tuned
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
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.scorer.significance import PairedComparison, compare  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


MEMBER = "member:"


def best_member(dev: list[Sentence], dev_parses: dict[str, list[Parse]]) -> str:
    """The member whose dev parses have the highest LAS (first in order on a tie)."""
    return max(dev_parses, key=lambda name: evaluate(dev, dev_parses[name]).las.f1)


def method_parses(
    model_dir: Path, treebank: Path, methods: list[str], members: list[str] | None = None
) -> tuple[list[Sentence], list[list[Parse]], list[str]]:
    """The gold test sentences, each side's parses of them (methods fitted on dev) and each
    side's resolved name (``member:best`` becomes ``member:NAME``); ``members``: only these
    of the model's members (default: all)."""
    bundle = load_models(model_dir, members)
    dev = load_sentences(next(treebank.glob("*-ud-dev.conllu")))
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    dev_in, test_in = bundle.prepare(dev), bundle.prepare(test)
    member_parses = {name: parser.predict(test_in) for name, parser in bundle.parsers.items()}
    dev_parses: dict[str, list[Parse]] | None = None
    outputs, resolved = [], []
    for method in methods:
        if method == f"{MEMBER}best":
            dev_parses = dev_parses or {name: p.predict(dev_in) for name, p in bundle.parsers.items()}
            method = MEMBER + best_member(dev, dev_parses)
        if method.startswith(MEMBER):
            outputs.append(member_parses[method.removeprefix(MEMBER)])
        else:
            ensemble, names = fit_ensemble(method, bundle.parsers, [], dev_in)
            outputs.append(combine(ensemble, names, test_in, member_parses))
        resolved.append(method)
    return test, outputs, resolved


def row(name: str, result: PairedComparison, sides: list[str]) -> dict[str, object]:
    """One line of the table: both LAS, their difference and the three p-values."""
    return {
        "treebank": name,
        "a": sides[0],
        "b": sides[1],
        "las_a": round(100 * result.score_a, 2),
        "las_b": round(100 * result.score_b, 2),
        "delta": round(100 * result.delta, 2),
        "bootstrap_p": round(result.bootstrap.p_value, 4),
        "randomization_p": round(result.randomization_p, 4),
        "mcnemar_p": round(result.mcnemar.p_value, 4),
    }


def main() -> None:
    """Compare method A with each other side on every kept model; print JSON lines and a table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("method_a")
    parser.add_argument("others", nargs="+", metavar="method_b",
                        help="one or more sides to compare A with (members parse once for all)")
    parser.add_argument("--models", type=Path, default=REPO / "bench" / "out" / "models")
    parser.add_argument("--tags", choices=("gold", "predicted"), default="gold",
                        help="which kept models to compare (TREEBANK-gold or TREEBANK-predicted)")
    parser.add_argument("--variant", default="",
                        help="the models of a bench/ensembles.py --variant (TREEBANK-TAGS-VARIANT)")
    parser.add_argument("--members", help="comma-separated: combine only these members of each model")
    parser.add_argument("--out", type=Path, help="also append the JSON lines to this file")
    args = parser.parse_args()
    sides = [args.method_a, *args.others]
    rows: list[dict[str, object]] = []
    pooled_gold: list[Sentence] = []
    pooled: list[list[Parse]] = [[] for _ in sides]
    suffix = f"-{args.tags}" + (f"-{args.variant}" if args.variant else "")
    members = args.members.split(",") if args.members else None
    for model_dir in sorted(args.models.glob(f"*{suffix}")):
        treebank = SHARED / "ud" / model_dir.name.removesuffix(suffix)
        gold, outputs, resolved = method_parses(model_dir, treebank, sides, members)
        for k in range(1, len(sides)):
            rows.append(row(treebank.name, compare(gold, outputs[0], outputs[k])["LAS"],
                            [resolved[0], resolved[k]]))
            print(json.dumps(rows[-1]), flush=True)
        pooled_gold += gold
        for k, output in enumerate(outputs):
            pooled[k] += output
    for k in range(1, len(sides)):
        rows.append(row("all test sets pooled", compare(pooled_gold, pooled[0], pooled[k])["LAS"],
                        [sides[0], sides[k]]))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with args.out.open("a", encoding="utf-8") as log:
            log.writelines(json.dumps({"tags": args.tags, "variant": args.variant, "members": members, **r})
                           + "\n" for r in rows)
    print(f"\n{args.tags} tags\n\n| treebank | A | A LAS | B | B LAS | Δ | bootstrap p "
          "| randomisation p | McNemar p |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        scores = f"{r['a']} | {r['las_a']:.2f} | {r['b']} | {r['las_b']:.2f} | {r['delta']:+.2f}"
        tests = f"{r['bootstrap_p']} | {r['randomization_p']} | {r['mcnemar_p']}"
        print(f"| {r['treebank']} | {scores} | {tests} |")


if __name__ == "__main__":
    main()
