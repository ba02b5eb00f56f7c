"""``evaluate`` and ``compare``: score CoNLL-U parses against gold, test differences.

``python -m parsing evaluate GOLD SYSTEM [--json] [--by upos|deprel|length]... [--no-punct]``
``python -m parsing compare GOLD SYS_A SYS_B [--json] [--resamples N] [--seed S]``

Scores follow the CoNLL 2018 conventions of :mod:`parsing.scorer.metrics`; the tests are those
of :mod:`parsing.scorer.significance`. Files must hold the same words (no re-tokenisation).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from parsing.conllu_io import load_sentences
from parsing.scorer.metrics import Attachment, Evaluation, Score, evaluate
from parsing.scorer.report import BREAKDOWNS, evaluation_to_dict
from parsing.scorer.significance import PairedComparison, compare

_BY = {
    "upos": ("by_upos",),
    "deprel": ("by_deprel",),
    "length": ("by_arc_length", "by_sentence_length"),
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``evaluate`` and ``compare`` sub-commands."""
    evaluate_parser = subparsers.add_parser(
        "evaluate",
        help="score a parsed CoNLL-U file against gold (UAS, LAS, CLAS, UPOS)",
        description="Score SYSTEM against GOLD with the CoNLL 2018 conventions: all words "
        "(punctuation included unless --no-punct), labels without subtypes, CLAS over "
        "content relations. Both files must have the same words.",
    )
    evaluate_parser.add_argument("gold", help="gold CoNLL-U file")
    evaluate_parser.add_argument("system", help="system CoNLL-U file (same words)")
    evaluate_parser.add_argument("--json", action="store_true",
                                 help="print one JSON object (all breakdowns unless --by)")
    evaluate_parser.add_argument("--by", action="append", choices=sorted(_BY), default=[],
                                 help="add a breakdown (repeatable); length = arc and "
                                 "sentence length")
    evaluate_parser.add_argument("--no-punct", action="store_true",
                                 help="leave out gold punctuation (UPOS PUNCT or deprel punct)")
    evaluate_parser.set_defaults(run=run_evaluate)

    compare_parser = subparsers.add_parser(
        "compare",
        help="paired significance tests between two systems on the same gold",
        description="Paired bootstrap and approximate randomisation over sentences, and "
        "McNemar's test over arcs, for UAS and LAS of SYS_A minus SYS_B.",
    )
    compare_parser.add_argument("gold", help="gold CoNLL-U file")
    compare_parser.add_argument("system_a", help="first system's CoNLL-U file")
    compare_parser.add_argument("system_b", help="second system's CoNLL-U file")
    compare_parser.add_argument("--json", action="store_true", help="print one JSON object")
    compare_parser.add_argument("--resamples", type=_positive, default=10_000,
                                help="bootstrap samples and randomisation trials (10000)")
    compare_parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    compare_parser.add_argument("--no-punct", action="store_true",
                                help="leave out gold punctuation (UPOS PUNCT or deprel punct)")
    compare_parser.set_defaults(run=run_compare)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run_evaluate(args: argparse.Namespace) -> int:
    """Print the scores of ``args.system`` against ``args.gold``; 2 on mismatched words."""
    gold = load_sentences(args.gold)
    system = load_sentences(args.system, check_trees=False)
    try:
        evaluation = evaluate(gold, system, exclude_punct=args.no_punct)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    chosen = [key for by in dict.fromkeys(args.by) for key in _BY[by]]
    if args.json:
        result = evaluation_to_dict(evaluation, breakdowns=chosen or BREAKDOWNS)
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(format_evaluation(evaluation, breakdowns=chosen))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Print the paired tests of ``args.system_a`` against ``args.system_b``."""
    gold = load_sentences(args.gold)
    system_a = load_sentences(args.system_a, check_trees=False)
    system_b = load_sentences(args.system_b, check_trees=False)
    try:
        results = compare(gold, system_a, system_b, resamples=args.resamples,
                          seed=args.seed, exclude_punct=args.no_punct)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        payload: dict[str, Any] = {
            metric: comparison_to_dict(result) for metric, result in results.items()
        }
        payload.update(resamples=args.resamples, seed=args.seed, sentences=len(gold),
                       exclude_punct=args.no_punct)
        print(json.dumps(payload))
    else:
        print(format_comparison(results.values()))
    return 0


def comparison_to_dict(result: PairedComparison) -> dict[str, Any]:
    """JSON-ready form of one metric's tests; scores and deltas in percentage points."""
    boot = result.bootstrap
    test = result.mcnemar
    return {
        "A": 100 * result.score_a,
        "B": 100 * result.score_b,
        "delta": 100 * result.delta,
        "bootstrap": {"p": boot.p_value, "ci": [100 * boot.ci_low, 100 * boot.ci_high]},
        "randomization": {"p": result.randomization_p},
        "mcnemar": {"b": test.b, "c": test.c, "statistic": test.statistic,
                    "p": test.p_value, "method": test.method},
    }


def format_comparison(results: Iterable[PairedComparison]) -> str:
    """A plain-text table of the paired tests (A minus B, percentage points)."""
    lines = [
        "Metric |      A |      B |  Delta | Bootstrap p (95% CI)        | Rand. p | "
        "McNemar b/c, p",
        "-------+--------+--------+--------+-----------------------------+---------+"
        "---------------",
    ]
    for r in results:
        boot, test = r.bootstrap, r.mcnemar
        interval = f"[{100 * boot.ci_low:+.2f}, {100 * boot.ci_high:+.2f}]"
        lines.append(
            f"{r.metric:6} | {100 * r.score_a:6.2f} | {100 * r.score_b:6.2f} | "
            f"{100 * r.delta:+6.2f} | {boot.p_value:<7.4f} {interval:19} | "
            f"{r.randomization_p:<7.4f} | {test.b}/{test.c}, {test.p_value:.4g} ({test.method})"
        )
    return "\n".join(lines)


def format_evaluation(evaluation: Evaluation, *, breakdowns: Sequence[str] = ()) -> str:
    """A plain-text report: the four scores, exact match, then the chosen breakdowns."""
    scope = "punctuation excluded" if evaluation.exclude_punct else "punctuation included"
    lines = [
        f"{evaluation.sentences} sentences, {evaluation.words} words scored ({scope})",
        "",
        "Metric |  Correct |     Gold |   System |  Score",
        "-------+----------+----------+----------+-------",
    ]
    scores = (("UAS", evaluation.uas), ("LAS", evaluation.las),
              ("CLAS", evaluation.clas), ("UPOS", evaluation.upos))
    lines += [_score_row(name, score) for name, score in scores if score is not None]
    match = evaluation.exact_match
    lines += [
        "",
        f"Exact match: unlabelled {100 * match.unlabelled_rate:.2f}%, "
        f"labelled {100 * match.labelled_rate:.2f}% of {match.sentences} sentences",
    ]
    if "by_upos" in breakdowns:
        lines += ["", *_attachment_table("UPOS", evaluation.by_upos)]
    if "by_deprel" in breakdowns:
        lines += ["", *_deprel_table(evaluation.by_deprel)]
    if "by_arc_length" in breakdowns:
        lines += ["", *_attachment_table("Arc length", evaluation.by_arc_length)]
    if "by_sentence_length" in breakdowns:
        sentence_buckets = {k: b.attachment for k, b in evaluation.by_sentence_length.items()}
        lines += ["", *_attachment_table("Sent. length", sentence_buckets)]
    return "\n".join(lines)


def _score_row(name: str, score: Score) -> str:
    return (f"{name:6} | {score.correct:8} | {score.gold:8} | {score.system:8} | "
            f"{100 * score.f1:6.2f}")


def _attachment_table(title: str, groups: dict[str, Attachment]) -> list[str]:
    lines = [f"{title:12} |    Words |    UAS |    LAS", f"{'-' * 13}+----------+--------+-------"]
    lines += [
        f"{name:12} | {group.words:8} | {100 * group.uas:6.2f} | {100 * group.las:6.2f}"
        for name, group in groups.items()
    ]
    return lines


def _deprel_table(groups: dict[str, Score]) -> list[str]:
    lines = [
        "Relation     |     Gold |   System |  Correct |   Prec |    Rec |     F1",
        "-------------+----------+----------+----------+--------+--------+-------",
    ]
    lines += [
        f"{name:12} | {s.gold:8} | {s.system:8} | {s.correct:8} | {100 * s.precision:6.2f} | "
        f"{100 * s.recall:6.2f} | {100 * s.f1:6.2f}"
        for name, s in groups.items()
    ]
    return lines
