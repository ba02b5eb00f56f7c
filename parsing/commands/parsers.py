"""``train``, ``parse`` and ``list-parsers``: the members from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parsing.conllu_io import (
    ConlluSentence,
    format_conllu,
    load_sentences,
    read_conllu,
    to_sentence,
    with_parse,
)
from parsing.members import member_names
from parsing.pipeline import describe_members, load_models, train_models
from parsing.types import Parse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``train``, ``parse`` and ``list-parsers`` commands."""
    train = subparsers.add_parser("train", help="train the tagger and member parsers")
    train.add_argument("--train", required=True, type=Path, help="training CoNLL-U file")
    train.add_argument("--dev", type=Path, help="development CoNLL-U file (picks epochs)")
    train.add_argument("--out", required=True, type=Path, help="model directory to write")
    train.add_argument("--parsers", help="comma-separated member names (default: all)")
    train.add_argument("--tags", choices=("gold", "predicted"), default="predicted",
                       help="train on gold UPOS or on jackknifed predicted UPOS (default)")
    train.add_argument("--jobs", type=int, default=1, help="members trained in parallel")
    train.add_argument("--seed", type=int, default=0, help="random seed")
    train.add_argument("--set", action="append", default=[], metavar="MEMBER.PARAM=VALUE",
                       help="override a member's hyperparameter, e.g. eager.epochs=5 (repeatable)")
    train.set_defaults(run=run_train)

    parse = subparsers.add_parser("parse", help="parse a CoNLL-U file with a trained model")
    parse.add_argument("--model", required=True, type=Path, help="model directory")
    parse.add_argument("--input", required=True, type=Path, help="CoNLL-U to parse (trees ignored)")
    parse.add_argument("--output", required=True, type=Path, help="CoNLL-U to write")
    parse.add_argument("--parsers", help="comma-separated member names (default: all in the model)")
    parse.add_argument("--tags", choices=("gold", "predicted"),
                       help="use the input's UPOS or tag first (default: as the model was trained)")
    parse.add_argument("--per-parser-dir", type=Path, help="also write one NAME.conllu per member")
    parse.set_defaults(run=run_parse)

    listing = subparsers.add_parser("list-parsers", help="name the member parsers")
    listing.set_defaults(run=run_list)


def run_train(args: argparse.Namespace) -> int:
    """Train into ``--out``; prints each member's training time."""
    names = member_names(args.parsers)
    train = load_sentences(args.train)
    dev = load_sentences(args.dev) if args.dev else None
    seconds = train_models(train, dev, args.out, names=names, tags=args.tags, jobs=args.jobs,
                           random_state=args.seed, params=parse_overrides(args.set),
                           progress=_print_progress)
    for name, spent in seconds.items():
        print(f"{name}\t{spent:.1f}s")
    return 0


def parse_overrides(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["eager.epochs=5"]`` -> ``{"eager": {"epochs": 5}}`` (values read as JSON, else text).

    Examples:
        >>> parse_overrides(["eager.epochs=5", "graph1.learner=perceptron"])
        {'eager': {'epochs': 5}, 'graph1': {'learner': 'perceptron'}}
    """
    overrides: dict[str, dict[str, Any]] = {}
    for item in items:
        target, sep, raw = item.partition("=")
        member, dot, param = target.partition(".")
        if not (sep and dot and member and param):
            raise ValueError(f"--set {item!r}: expected MEMBER.PARAM=VALUE")
        member_names(member)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        overrides.setdefault(member, {})[param] = value
    return overrides


def _print_progress(message: str, fraction: float) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def run_parse(args: argparse.Namespace) -> int:
    """Parse ``--input``; ``--output`` holds the first named member's trees."""
    bundle = load_models(args.model, member_names(args.parsers) if args.parsers else None)
    raw = read_conllu(args.input, check_trees=False)
    tags = args.tags or bundle.tags
    parses = bundle.parse([to_sentence(sentence) for sentence in raw], tags=tags)
    retag = tags == "predicted"
    first = next(iter(parses))
    _write(args.output, raw, parses[first], retag)
    if args.per_parser_dir:
        args.per_parser_dir.mkdir(parents=True, exist_ok=True)
        for name, member_parses in parses.items():
            _write(args.per_parser_dir / f"{name}.conllu", raw, member_parses, retag)
    return 0


def _write(path: Path, raw: list[ConlluSentence], parses: list[Parse], retag: bool) -> None:
    text = format_conllu(with_parse(r, p, tags=retag) for r, p in zip(raw, parses, strict=True))
    path.write_text(text, encoding="utf-8")


def run_list(args: argparse.Namespace) -> int:
    """Print every member's name and what it is."""
    for name, summary in describe_members():
        print(f"{name:<11} {summary}")
    return 0
