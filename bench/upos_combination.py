"""The tagger's UPOS, the neural member's, and the two combined word by word (issue #33: "its UPOS
≥ today's tagger + 1.0"; :mod:`parsing.tag_source`).

For each trained model directory (predicted tags, with ``biaffine``; e.g. from ``bench/ensembles.py
--models bench/out/models --variant biaffine``): dev and test are tagged by the tagger and by the
member; :func:`parsing.tag_source.choose_tag_source` picks the threshold on dev (the member's tag
where its probability is at least that, the tagger's elsewhere) and whether the member tags for
the others; test UPOS accuracy of the tagger, the member and the chosen tags, with the official
scorer's conventions (every word counts).

With ``--update-manifest`` each directory's manifest gets the choice as a round made today would
record it (``tag_source``, ``upos_threshold``, ``dev_upos``), so ``bench/ensembles.py`` on the same
models parses with those tags (models trained before the threshold existed).

    .venv/bin/python bench/upos_combination.py --models bench/out/models --variant biaffine \\
        --treebanks UD_Tamil-TTB,UD_Welsh-CCG --out bench/results/upos_combination.jsonl
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import UD, split_files  # noqa: E402
from parsing.bundle import MANIFEST, load_models  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.tag_source import choose_tag_source, upos_accuracy, with_member_upos  # noqa: E402
from parsing.types import Sentence  # noqa: E402

MEMBER = "biaffine"


def measure(model_dir: Path, dev: Sequence[Sentence], test: Sequence[Sentence]) -> dict[str, Any]:
    """The choice on dev and the test UPOS accuracy (percent) of the tagger, the member and the choice."""
    bundle = load_models(model_dir, [MEMBER])
    tagger, member = bundle.tagger, bundle.parsers[MEMBER]
    if tagger is None:
        raise SystemExit(f"{model_dir} has no tagger (gold tags)")
    tagged_dev, tagged_test = tagger.tag_for_parsing(dev), tagger.tag_for_parsing(test)  # type: ignore[attr-defined]
    own_dev, own_test = member.predict(tagged_dev), member.predict(tagged_test)
    choice = choose_tag_source(dev, tagged_dev, MEMBER, own_dev)
    chosen = (with_member_upos(tagged_test, own_test, choice.threshold) if choice.source else tagged_test)
    member_only = with_member_upos(tagged_test, own_test)
    return {"source": choice.source or "tagger", "threshold": choice.threshold,
            "dev_upos": {name: round(100 * value, 2) for name, value in choice.dev_upos.items()},
            "test_upos": {"tagger": round(100 * upos_accuracy(test, [s.upos for s in tagged_test]), 2),
                          MEMBER: round(100 * upos_accuracy(test, [s.upos for s in member_only]), 2),
                          "chosen": round(100 * upos_accuracy(test, [s.upos for s in chosen]), 2)},
            "choice": choice}


def update_manifest(model_dir: Path, result: dict[str, Any]) -> None:
    """Record the choice as :func:`parsing.pipeline.train_plan` now does."""
    path = model_dir / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    choice = result["choice"]
    manifest["dev_upos"] = choice.dev_upos
    manifest.pop("tag_source", None)
    manifest.pop("upos_threshold", None)
    if choice.source:
        manifest["tag_source"], manifest["upos_threshold"] = choice.source, choice.threshold
    manifest["tag_source_rechosen_by"] = "bench/upos_combination.py"
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=Path("bench/out/models"))
    parser.add_argument("--variant", default="biaffine")
    parser.add_argument("--treebanks", required=True, help="comma-separated UD folder names")
    parser.add_argument("--update-manifest", action="store_true")
    parser.add_argument("--out", type=Path, help="append one JSON line per treebank")
    args = parser.parse_args()
    lines = ["| treebank | dev UPOS tagger / biaffine / combined | threshold | source | test UPOS tagger | "
             "biaffine | chosen | Δ tagger |", "|---|---|---|---|---|---|---|---|"]
    gains = []
    for bank in args.treebanks.split(","):
        _, dev_path, test_path = split_files(UD / bank)
        if dev_path is None:
            raise SystemExit(f"{bank} has no dev split")
        model_dir = args.models / f"{bank}-predicted-{args.variant}"
        result = measure(model_dir, load_sentences(dev_path), load_sentences(test_path))
        if args.update_manifest:
            update_manifest(model_dir, result)
        row = {"treebank": bank, **{k: v for k, v in result.items() if k != "choice"}}
        if args.out:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
        dev, test = row["dev_upos"], row["test_upos"]
        gains.append(test["chosen"] - test["tagger"])
        cells = [bank.removeprefix("UD_"), " / ".join(f"{v:.2f}" for v in dev.values()),
                 f"{row['threshold']:.2f}", row["source"], f"{test['tagger']:.2f}", f"{test[MEMBER]:.2f}",
                 f"{test['chosen']:.2f}", f"{gains[-1]:+.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines) + f"\n\nmean Δ over {len(gains)}: {statistics.fmean(gains):+.2f}")


if __name__ == "__main__":
    main()
