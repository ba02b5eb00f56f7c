"""Training tags from the neural member's own folds against the tagger's (issue #33): what each costs
in time and LAS (:mod:`parsing.member_folds`).

Reads ``bench/ensembles.py`` JSONL files of predicted-tag runs where the neural member tags for the
others: ``--base`` trained the other members on the tagger's jackknifed UPOS (the default), each
``--folds`` file on the member's ``k``-fold UPOS (``--set tagger.member_folds=K``, optionally
``--set tagger.member_fold_seconds=S``). Per treebank and run: the folds, the training-tag UPOS
accuracy (the tagger's jackknife against the member's folds), the round's training seconds (one
process: the sum of its fits), the mean test LAS of the feature-based members and the ensembles'
test LAS.

    .venv/bin/python bench/member_folds_report.py --base bench/results/ensembles/predicted-tagsource.jsonl \\
        --folds bench/results/ensembles/predicted-folds3.jsonl --methods vote-tuned-labels,vote-uniform
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tag_source_report import Row, feature_members, read  # noqa: E402


def run_cells(rows: dict[tuple[str, str], Row], bank: str, methods: list[str]) -> list[str]:
    """Folds, training-tag UPOS, round seconds, mean feature-member LAS and each method's LAS."""
    tagger = rows[(bank, "tagger")]
    folds = tagger.get("member_folds")
    upos = folds["train_upos"] if folds else {}
    member_upos = [value for name, value in upos.items() if name != "tagger"]
    training_tags = (f"{100 * member_upos[0]:.2f} (tagger {100 * upos['tagger']:.2f})" if member_upos
                     else "tagger's jackknife")
    members = statistics.fmean(r["LAS"] for r in feature_members(rows, bank))
    seconds = tagger.get("round_train_s")
    return [str(folds["folds"]) if folds else "—", training_tags,
            f"{seconds:.0f}" if seconds is not None else "—", f"{members:.2f}",
            *[f"{rows[(bank, method)]['LAS']:.2f}" for method in methods]]


def table(base: dict[tuple[str, str], Row], runs: list[tuple[str, dict[tuple[str, str], Row]]],
          methods: list[str]) -> str:
    """The markdown table: one line for the base run and one per folds run, per treebank."""
    head = ["treebank", "run", "folds", "training-tag UPOS", "round train s", "feature members (mean LAS)",
            *[f"{method} LAS" for method in methods]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    treebanks = sorted({bank for bank, _ in base})
    for bank in treebanks:
        for label, (name, rows) in [(bank.removeprefix("UD_"), ("base", base)), *(("", run) for run in runs)]:
            if (bank, "tagger") in rows:
                lines.append("| " + " | ".join([label, name, *run_cells(rows, bank, methods)]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True,
                        help="the run whose members trained on the tagger's jackknifed tags")
    parser.add_argument("--folds", type=Path, nargs="+", required=True,
                        help="runs whose members trained on the member's folds")
    parser.add_argument("--methods", default="vote-tuned-labels,vote-uniform")
    args = parser.parse_args()
    runs = [(path.stem, read(path)) for path in args.folds]
    print(table(read(args.base), runs, args.methods.split(",")))


if __name__ == "__main__":
    main()
