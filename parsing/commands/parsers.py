"""``train``, ``parse`` and ``list-parsers``: the members from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
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
from parsing.ensemble.registry import DEFAULT_METHODS, METHODS, default_method, method_names, method_spec
from parsing.ensemble.stacking import Stacking
from parsing.members import default_members, member_names
from parsing.pipeline import ModelBundle, describe_members, load_models, read_manifest, train_plan
from parsing.plan import TrainingPlan
from parsing.types import Parse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``train``, ``parse`` and ``list-parsers`` commands."""
    train = subparsers.add_parser("train", help="train the tagger and member parsers")
    train.add_argument("--train", required=True, type=Path, help="training CoNLL-U file")
    train.add_argument("--dev", type=Path, help="development CoNLL-U file (picks epochs)")
    train.add_argument("--out", required=True, type=Path, help="model directory to write")
    train.add_argument("--parsers", help="comma-separated member names (default: the nine and, where "
                                         "PyTorch is installed, biaffine; predicted tags: lstm-hybrid too)")
    train.add_argument("--tags", choices=("gold", "predicted"),
                       help="train on gold UPOS or on jackknifed predicted UPOS (default)")
    train.add_argument("--jobs", type=int, default=1, help="members trained in parallel")
    train.add_argument("--seed", type=int, help="random seed (default 0)")
    train.add_argument("--ensemble", choices=(*method_names(), "none"),
                       help="combination fitted over the members (default: the measured default for "
                            f"the tags, gold {DEFAULT_METHODS['gold']}, predicted "
                            f"{DEFAULT_METHODS['predicted']}; 'none' for members only)")
    train.add_argument("--set", action="append", default=[], metavar="MEMBER.PARAM=VALUE",
                       help="override a member's hyperparameter, e.g. eager.epochs=5, or the ensemble's, "
                            "e.g. ensemble.max_iter=5, or the tagger's with predicted tags, e.g. "
                            "tagger.predict_feats=true (repeatable)")
    train.add_argument("--plan", type=Path,
                       help="train what a saved training plan says (JSON of TrainingPlan.to_json, or a model "
                            "directory's manifest.json, whose 'plan' is read) instead of --parsers, --tags, "
                            "--seed, --ensemble and --set")
    train.set_defaults(run=run_train)

    parse = subparsers.add_parser("parse", help="parse a CoNLL-U file with a trained model")
    parse.add_argument("--model", required=True, type=Path, help="model directory")
    parse.add_argument("--input", required=True, type=Path, help="CoNLL-U to parse (trees ignored)")
    parse.add_argument("--output", required=True, type=Path, help="CoNLL-U to write")
    parse.add_argument("--parsers", help="comma-separated member names (default: all in the model)")
    parse.add_argument("--tags", choices=("gold", "predicted"),
                       help="use the input's UPOS or tag first (default: as the model was trained)")
    parse.add_argument("--per-parser-dir", type=Path, help="also write one NAME.conllu per member")
    parse.add_argument("--jobs", type=int, default=1, help="members parsing in parallel processes")
    parse.add_argument("--ensemble", choices=(*method_names(), "none"),
                       help="--output holds this ensemble's trees (default: the model's own ensemble; "
                            "'none', or a model without one: the first named member's trees). A method "
                            "other than the model's must learn nothing (vote-uniform, mbr, score-sum)")
    parse.set_defaults(run=run_parse)

    listing = subparsers.add_parser("list-parsers", help="name the member parsers")
    listing.set_defaults(run=run_list)


def run_train(args: argparse.Namespace) -> int:
    """Train into ``--out``; prints each member's training time."""
    plan = train_plan_of(args)  # checked before the data is read
    train = load_sentences(args.train)
    dev = load_sentences(args.dev) if args.dev else None
    seconds = train_plan(plan, train, dev, args.out, progress=_print_progress)
    for name, spent in seconds.items():
        print(f"{name}\t{spent:.1f}s")
    return 0


def train_plan_of(args: argparse.Namespace) -> TrainingPlan:
    """The :class:`~parsing.plan.TrainingPlan` of the ``train`` command's options (``--parsers``,
    ``--tags``, ``--ensemble``, ``--set``, ``--seed``, ``--jobs``), or of ``--plan`` (with
    ``--jobs``).

    Raises:
        ValueError: an unknown member, method or setting, naming it; ``--plan`` with any of the
            options it replaces, or a file that holds no plan.
    """
    if args.plan is not None:
        given = [flag for flag, value in (("--parsers", args.parsers), ("--tags", args.tags),
                                          ("--seed", args.seed), ("--ensemble", args.ensemble),
                                          ("--set", args.set)) if value not in (None, [])]
        if given:
            raise ValueError(f"--plan says what to train: leave out {', '.join(given)}")
        return replace(read_plan(args.plan), jobs=args.jobs)
    tags = args.tags or "predicted"
    overrides = parse_overrides(args.set)
    method = None if args.ensemble == "none" else args.ensemble or default_method(tags, tuning=bool(args.dev))
    names = member_names(args.parsers) if args.parsers else default_members(tags)
    return TrainingPlan.from_options(names=names, tags=tags, jobs=args.jobs,
                                     random_state=args.seed or 0, params=overrides, ensemble=method,
                                     ensemble_params=overrides.pop("ensemble", {}))


def read_plan(path: Path) -> TrainingPlan:
    """The plan saved in ``path``: a plan's JSON, or a ``manifest.json`` holding one.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not JSON, or no plan in it (naming the file).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    if isinstance(data, dict) and "members" not in data and isinstance(data.get("plan"), dict):
        data = data["plan"]  # a model directory's manifest
    try:
        return TrainingPlan.from_json(data)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def parse_overrides(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["eager.epochs=5"]`` -> ``{"eager": {"epochs": 5}}`` (values read as JSON, else text).

    ``ensemble.PARAM=VALUE`` sets a hyperparameter of the ``--ensemble`` method.

    Examples:
        >>> parse_overrides(["eager.epochs=5", "graph1.learner=perceptron", "tagger.predict_feats=true"])
        {'eager': {'epochs': 5}, 'graph1': {'learner': 'perceptron'}, 'tagger': {'predict_feats': True}}
    """
    overrides: dict[str, dict[str, Any]] = {}
    for item in items:
        target, sep, raw = item.partition("=")
        member, dot, param = target.partition(".")
        if not (sep and dot and member and param):
            raise ValueError(f"--set {item!r}: expected MEMBER.PARAM=VALUE")
        if member not in ("ensemble", "tagger"):
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
    """Parse ``--input``; ``--output`` holds the ensemble's trees (or the first member's)."""
    names = member_names(args.parsers) if args.parsers else None
    bundle = load_models(args.model, _members_to_load(read_manifest(args.model), names, args))
    _choose_ensemble(bundle, args.ensemble)
    raw = read_conllu(args.input, check_trees=False)
    tags = args.tags or bundle.tags
    sentences = [to_sentence(sentence) for sentence in raw]
    retag = tags == "predicted"
    if bundle.ensemble is not None:
        parses, combined = bundle.parse_with_ensemble(sentences, names, tags=tags, jobs=args.jobs)
    else:
        parses = bundle.parse(sentences, names, tags=tags, jobs=args.jobs)
        combined = parses[next(iter(parses))]
    _write(args.output, raw, combined, retag)
    if args.per_parser_dir:
        args.per_parser_dir.mkdir(parents=True, exist_ok=True)
        for name, member_parses in parses.items():
            _write(args.per_parser_dir / f"{name}.conllu", raw, member_parses, retag)
    return 0


def _members_to_load(manifest: dict[str, Any], names: list[str] | None,
                     args: argparse.Namespace) -> list[str] | None:
    """Load (and so parse with) no more members than the output needs; None: all of them.

    Examples:
        >>> m = {"parsers": ["graph1", "eager", "hybrid"], "ensemble": {"members": ["eager"]}}
        >>> _members_to_load(m, None, argparse.Namespace(per_parser_dir=None, ensemble=None))
        ['eager']
        >>> _members_to_load(m, ["graph1"], argparse.Namespace(per_parser_dir=None, ensemble=None))
        ['graph1', 'eager']
    """
    own = [str(name) for name in (manifest.get("ensemble") or {}).get("members", [])]
    if args.ensemble not in (None, "none", (manifest.get("ensemble") or {}).get("method")):
        return names  # another method chooses its members from what is loaded
    if names:
        return list(dict.fromkeys([*names, *(own if args.ensemble != "none" else [])]))
    if args.per_parser_dir or not own or args.ensemble == "none":
        return None
    return own


def _choose_ensemble(bundle: ModelBundle, method: str | None) -> None:
    """Set ``bundle``'s ensemble to ``method`` (None: keep the model's; "none": drop it).

    Raises:
        ValueError: ``method`` would have to learn from tuning data the model did not keep.
    """
    if method is None or method == bundle.ensemble_method:
        return
    if method == "none":
        bundle.ensemble, bundle.ensemble_method, bundle.ensemble_members = None, None, []
        return
    spec = method_spec(method)
    names = spec.uses(list(bundle.parsers))
    ensemble = spec.build(list(bundle.parsers[name] for name in names))
    if not names or ensemble.needs_tuning or isinstance(ensemble, Stacking):
        raise ValueError(f"the model was trained with --ensemble {bundle.ensemble_method or 'none'}; "
                         f"{method} learns from tuning data: train with --ensemble {method}")
    bundle.ensemble = type(ensemble).from_fitted([bundle.parsers[name] for name in names],
                                                 **{k: v for k, v in ensemble.get_params(deep=False).items()
                                                    if k != "members"})
    bundle.ensemble_method, bundle.ensemble_members = method, names


def _write(path: Path, raw: list[ConlluSentence], parses: list[Parse], retag: bool) -> None:
    text = format_conllu(with_parse(r, p, tags=retag) for r, p in zip(raw, parses, strict=True))
    path.write_text(text, encoding="utf-8")


def run_list(args: argparse.Namespace) -> int:
    """Print every member's name and what it is, then the ensemble methods."""
    for name, summary in describe_members():
        print(f"{name:<13} {summary}")
    print("\nensemble methods (--ensemble):")
    for name, spec in METHODS.items():
        default = "".join(f" [default, {tags} tags]" for tags, method in DEFAULT_METHODS.items()
                          if method == name)
        print(f"{name:<13} {spec.summary}{default}")
    return 0
