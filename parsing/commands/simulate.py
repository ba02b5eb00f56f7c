"""``simulate``: annotation rounds with an oracle annotator, scored on dev (issue #11's contract).

    python -m parsing simulate --train T.conllu --dev D.conllu --seed-trees N --per-round K \\
        --rounds R --strategy random|longest|disagreement|expected-errors|entropy|detector \\
        [--self-training none|own|ensemble] [--select random|agreement|confidence] \\
        [--parsers NAMES] [--seed S] [--warm] [--partial THRESHOLD] [--flag-detector P] \\
        --out RESULT.json [--plot CURVE.svg]

Partial annotation: ``--partial THRESHOLD`` touches the words of a selected sentence whose
labelled vote share is below THRESHOLD; ``--flag-detector P`` also touches the words whose
``p_wrong`` by the round's arc error detector is at least P (share below THRESHOLD **or**
flagged); ``--flag-detector P`` without ``--partial`` lets the detector alone choose.

See :mod:`parsing.semi.simulate` for what a round does and the keys of RESULT.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from parsing.commands.parsers import parse_overrides
from parsing.conllu_io import load_sentences
from parsing.ensemble.registry import DEFAULT_METHOD, method_names
from parsing.members import member_names
from parsing.semi.selection import ALL_STRATEGIES
from parsing.semi.self_training import SELECTIONS
from parsing.semi.simulate import (
    DEFAULT_PARSERS,
    SELF_TRAINING,
    SimulationConfig,
    learning_curve_svg,
    run_simulation,
)


def _count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``."""

    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return value

    return parse


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("must lie in [0, 1]")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError("must lie in (0, 1]")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``simulate`` command."""
    sim = subparsers.add_parser(
        "simulate",
        help="simulate annotation rounds (oracle annotator) and record the learning curve",
        description="Start from --seed-trees gold trees of --train; the rest is the pool, trees hidden. "
        "Each round parses the pool, picks --per-round sentences by --strategy, reveals their gold "
        "trees, retrains and scores members and ensemble on --dev (UAS/LAS in %).",
    )
    sim.add_argument("--train", required=True, type=Path, help="CoNLL-U with gold trees (seed + pool)")
    sim.add_argument("--dev", required=True, type=Path, help="CoNLL-U with gold trees to score on")
    sim.add_argument("--seed-trees", required=True, type=_count(1), help="gold trees at round 0")
    sim.add_argument("--per-round", required=True, type=_count(1), help="sentences revealed per round")
    sim.add_argument("--rounds", required=True, type=_count(0), help="rounds after round 0")
    sim.add_argument("--strategy", required=True, choices=ALL_STRATEGIES, help="which sentences to reveal")
    sim.add_argument("--self-training", choices=SELF_TRAINING, default="none",
                     help="add automatic pool trees labelled by each member (own) or the ensemble")
    sim.add_argument("--select", choices=SELECTIONS, default="confidence",
                     help="which automatic trees self-training keeps (default: confidence)")
    sim.add_argument("--parsers", default=",".join(DEFAULT_PARSERS),
                     help=f"comma-separated members (default: {','.join(DEFAULT_PARSERS)})")
    sim.add_argument("--ensemble", default=DEFAULT_METHOD, choices=method_names(),
                     help=f"combination method (default: {DEFAULT_METHOD})")
    sim.add_argument("--seed", type=int, default=0, help="random seed: seed trees, random order, members")
    sim.add_argument("--warm", action="store_true",
                     help="continue members that support warm_start from the previous round")
    sim.add_argument("--member-params", action="append", default=[], metavar="MEMBER.PARAM=VALUE",
                     help="override a member's hyperparameter, e.g. eager.epochs=3 (repeatable)")
    sim.add_argument("--diversity", action="store_true", help="no near-duplicate sentences in one batch")
    sim.add_argument("--max-similarity", type=_fraction, default=0.7,
                     help="--diversity: Jaccard similarity of word sets above which a sentence is skipped")
    sim.add_argument("--max-share", type=float, default=1.0,
                     help="self-training: at most this many automatic trees per human tree (1.0)")
    sim.add_argument("--max-automatic", type=_count(0), help="self-training: at most this many trees")
    sim.add_argument("--min-confidence", type=_fraction, default=0.9,
                     help="--select confidence: least mean vote share of a kept tree (0.9)")
    sim.add_argument("--agreement-k", type=_count(1),
                     help="--select agreement: members that must agree on a tree (default: all)")
    sim.add_argument("--no-stratify", action="store_true",
                     help="self-training: do not match the pool's sentence lengths")
    sim.add_argument("--partial", type=_fraction, metavar="THRESHOLD",
                     help="annotate only words whose head vote share is below THRESHOLD (e.g. 0.8); "
                          "annotated_tokens then counts the human-touched words")
    sim.add_argument("--flag-detector", type=_probability, metavar="P",
                     help="partial annotation chosen by the round's arc error detector too: also touch the "
                          "words whose p_wrong is at least P (share below --partial OR flagged); without "
                          "--partial, the detector alone chooses the words")
    sim.add_argument("--interactive", action="store_true",
                     help="with --partial: touch one doubtful word at a time, lowest share first, and "
                          "re-parse the sentence under the touched arcs after each (the editor's re-parsing)")
    sim.add_argument("--refill", action="store_true",
                     help="with --partial: each round, fill the parser arcs of earlier partial trees again "
                          "with the newest round's members and ensemble, around their human arcs")
    sim.add_argument("--oracle-fill", action="store_true",
                     help="with --partial, a bound and not a way to annotate: the untouched words get their "
                          "true arcs too (whole trees learned at the touched words' cost)")
    sim.add_argument("--out", required=True, type=Path, help="RESULT.json to write")
    sim.add_argument("--plot", type=Path, help="also draw LAS against annotated tokens as SVG")
    sim.set_defaults(run=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    """Run the simulation, write ``--out`` (and ``--plot``), print one line per round."""
    try:
        overrides = parse_overrides(args.member_params)
    except ValueError as error:  # its message names --set, the train command's option
        raise ValueError(str(error).replace("--set", "--member-params")) from None
    config = SimulationConfig(
        seed_trees=args.seed_trees, per_round=args.per_round, rounds=args.rounds,
        strategy=args.strategy, self_training=args.self_training, select=args.select,
        parsers=tuple(member_names(args.parsers)), ensemble=args.ensemble,
        member_params=overrides, seed=args.seed, warm=args.warm,
        diversity=args.diversity, max_similarity=args.max_similarity, max_share=args.max_share,
        max_automatic=args.max_automatic, min_confidence=args.min_confidence,
        agreement_k=args.agreement_k, stratify_by_length=not args.no_stratify, partial=args.partial,
        interactive=args.interactive, refill=args.refill,
        oracle_fill=args.oracle_fill, flag_detector=args.flag_detector,
    )  # fmt: skip
    train = load_sentences(args.train)
    dev = load_sentences(args.dev)
    result = run_simulation(train, dev, config, progress=lambda line: print(line, file=sys.stderr))
    result["config"].update(train=str(args.train), dev=str(args.dev), out=str(args.out),
                            plot=str(args.plot) if args.plot else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.plot:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        args.plot.write_text(learning_curve_svg(result), encoding="utf-8")
    print("round\tsentences\ttokens\tdev_uas\tdev_las\ttrain_s")
    for r in result["rounds"]:
        print(f"{r['round']}\t{r['annotated_sentences']}\t{r['annotated_tokens']}\t"
              f"{r['dev_uas']:.2f}\t{r['dev_las']:.2f}\t{r['train_s']:.1f}")
    return 0
