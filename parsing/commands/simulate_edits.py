"""``simulate-edits``: how many edits an oracle annotator needs, with and without re-parsing.

    python -m parsing simulate-edits --model MODEL_DIR --input GOLD.conllu \\
        --policy worst-first|left-to-right|top-down [--interactive] [--confirm none|passed] \\
        [--accept-share SHARE] --out RESULT.json

RESULT.json: ``{"sentences", "words", "edits", "edits_per_100_words", "wrong_arcs_before"}``
(the contract), ``"confirmations"`` (words accepted without an edit), ``"reparse_fixed"`` and
``"reparse_broke"`` (free words re-parses turned right / wrong), plus the settings. See
:mod:`parsing.semi.edits` for what an edit and a confirmation are and what the policies and
``--interactive`` do.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from parsing.conllu_io import load_sentences
from parsing.pipeline import load_models
from parsing.semi.edits import CONFIRM, POLICIES, simulate_edits


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``simulate-edits`` command."""
    sim = subparsers.add_parser(
        "simulate-edits",
        help="count an oracle annotator's edits to reach the gold trees (optionally re-parsing)",
        description="Parse --input with the model's ensemble; an oracle fixes one wrong arc (head and "
        "label) at a time, in --policy order, until every tree equals gold. With --interactive the "
        "sentence is re-parsed under all fixed arcs after each edit.",
    )
    sim.add_argument("--model", required=True, type=Path, help="model directory trained with --ensemble")
    sim.add_argument("--input", required=True, type=Path, help="CoNLL-U with gold trees")
    sim.add_argument("--policy", required=True, choices=POLICIES,
                     help="worst-first: lowest vote share first; left-to-right: leftmost first; "
                          "top-down: the root word first, then by depth")
    sim.add_argument("--interactive", action="store_true",
                     help="re-parse under the fixed arcs after each edit (constrained ensemble)")
    sim.add_argument("--confirm", choices=CONFIRM, default="none",
                     help="passed: the words read before each fixed one are confirmed (accepted, no edit) "
                     "and stay; none: only fixed arcs stay (default)")
    sim.add_argument("--accept-share", type=float, default=None, metavar="SHARE",
                     help="also accept, before each edit, every right word whose head vote share is >= SHARE")
    sim.add_argument("--out", required=True, type=Path, help="RESULT.json to write")
    sim.set_defaults(run=run_simulate_edits)


def run_simulate_edits(args: argparse.Namespace) -> int:
    """Run the simulation, write ``--out`` and print the counts."""
    bundle = load_models(args.model)
    gold = load_sentences(args.input)
    result = simulate_edits(bundle, gold, policy=args.policy, interactive=args.interactive,
                            confirm=args.confirm, accept_share=args.accept_share,
                            progress=lambda line: print(line, file=sys.stderr))
    written = {**result, "policy": args.policy, "interactive": args.interactive, "confirm": args.confirm,
               "accept_share": args.accept_share, "model": str(args.model), "input": str(args.input)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
    print("\t".join(result))
    print("\t".join(str(value) for value in result.values()))
    return 0
