"""Two ways to make the editor's re-parse save more edits, measured and not kept (issue #12).

The oracle of ``parsing.semi.edits`` (top down, confirming the words it passes) runs on a
treebank's dev file with a model of ``bench/simulate_edits.py``, while the constrained re-parse
(:meth:`parsing.pipeline.ModelBundle.parse_constrained`) is post-processed by one variant:

* ``stability=B``: the tree shown before the edit keeps its arcs on free words unless the
  constrained members outvote them by ``B`` member weights (a re-parse broke about one right
  arc for every two or three it repaired; this trades repairs for fewer breaks).
* ``changed=F``: a member's arc counts ``F`` times in the vote when the constraints moved it
  (its constrained head differs from its unconstrained one): the members that propagate the
  human arc (the transition members) outvote those whose arcs it cannot reach (graph1).
* ``unique``: a free word whose label is a core relation (``nsubj``, ``obj``, ``iobj``,
  ``csubj``, ``ccomp``, ``xcomp``, ``expl``) that a human arc already gives a sibling takes
  the label most voted among its other members' labels for the same head (label-only edits are
  a quarter of all edits, and most of Telugu's).

One JSON line per variant goes to ``--out``::

    PYTHONPATH=.:bench .venv/bin/python bench/reparse_variants.py --treebanks UD_Tamil-TTB \\
        --variants none,stability=0.5,stability=1.5,changed=2,changed=4,unique \\
        --out bench/results/reparse_variants.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from simulate_edits import UD, model_dir
from threadpoolctl import threadpool_limits

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints, decode_forced, forced_labels, keep_previous_labels
from parsing.decoders.first_order import last_resort
from parsing.ensemble.base import stack_heads, vote_labels
from parsing.ensemble.voting import vote_matrix, vote_share
from parsing.pipeline import ModelBundle, load_models
from parsing.semi.edits import simulate_edits
from parsing.types import Parse

NINE = "graph1,graph2,eager,eager-rtl,swap,swap-rtl,hybrid,hybrid-rtl,neural"
CORE = frozenset({"nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "expl"})


def stable(tree: Parse, members: Sequence[Parse], previous: Parse, constraints: Constraints,
           bonus: float) -> Parse:
    """``tree`` decoded again over the members' votes with ``bonus`` on ``previous``'s free arcs."""
    heads = stack_heads(members)
    weights = np.ones(len(members))
    votes = last_resort(vote_matrix(heads, weights))
    for dep in range(1, len(previous.heads)):
        if dep not in constraints.heads:
            votes[dep, previous.heads[dep]] = max(votes[dep, previous.heads[dep]], 0.0) + bonus
    chosen = decode_forced(votes, constraints)
    labels = forced_labels(chosen, tree, vote_labels(chosen, members, weights), constraints)
    return replace(tree, heads=chosen, deprels=labels, arc_scores=vote_share(heads, weights, chosen))


def changed_minds(tree: Parse, members: Sequence[Parse], before: Sequence[Parse], constraints: Constraints,
                  factor: float) -> Parse:
    """``tree`` decoded again over votes in which a member's arc counts ``factor`` times when
    the constraints moved it (its constrained head differs from its unconstrained one)."""
    heads = stack_heads(members)
    moved = heads != stack_heads(before)
    weights = np.where(moved, factor, 1.0)
    votes = last_resort(vote_matrix(heads, weights))
    chosen = decode_forced(votes, constraints)
    labels = forced_labels(chosen, tree, vote_labels(chosen, members, weights), constraints)
    return replace(tree, heads=chosen, deprels=labels, arc_scores=vote_share(heads, weights, chosen))


def unique_core_labels(tree: Parse, members: Sequence[Parse], constraints: Constraints) -> Parse:
    """A free word's core label that a human sibling arc already has: the next most voted one."""
    labels = list(tree.deprels)
    for dep in range(1, len(labels)):
        head = tree.heads[dep]
        if dep in constraints.labels or labels[dep] not in CORE:
            continue
        if not any(other != dep and tree.heads[other] == head and label == labels[dep]
                   for other, label in constraints.labels.items()):
            continue
        tally: dict[str, int] = {}
        for parse in members:
            if parse.heads[dep] == head and parse.deprels[dep] != labels[dep]:
                tally[parse.deprels[dep]] = tally.get(parse.deprels[dep], 0) + 1
        if tally:
            labels[dep] = max(tally, key=lambda label: tally[label])
    return replace(tree, deprels=labels)


ORIGINAL = ModelBundle.parse_constrained


def patch(variant: str) -> None:
    """Make ``ModelBundle.parse_constrained`` post-process its trees by ``variant``."""
    original = ORIGINAL

    def parse_constrained(self: ModelBundle, sentences: Any, constraints: Any, names: Any = None, *,
                          tags: Any = None, previous: Any = None, unconstrained: Any = None,
                          adapt: bool = True) -> tuple[dict[str, list[Parse]], list[Parse]]:
        parses, trees = original(self, sentences, constraints, names, tags=tags, previous=None,
                                 unconstrained=unconstrained, adapt=adapt)
        out = []
        for i, tree in enumerate(trees):
            members = [parses[name][i] for name in self.ensemble_members]
            if variant.startswith("changed=") and unconstrained is not None:
                before = [unconstrained[0][name][i] for name in self.ensemble_members]
                tree = changed_minds(tree, members, before, constraints[i], float(variant.split("=")[1]))
            if variant.startswith("stability=") and previous is not None:
                tree = stable(tree, members, previous[i], constraints[i], float(variant.split("=")[1]))
            if previous is not None:
                tree = keep_previous_labels(tree, previous[i], constraints[i])
            if variant == "unique":
                tree = unique_core_labels(tree, members, constraints[i])
            out.append(tree)
        return parses, out

    ModelBundle.parse_constrained = parse_constrained  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebanks", default="UD_Tamil-TTB")
    parser.add_argument("--parsers", default=NINE)
    parser.add_argument("--models", type=Path, default=Path("bench/out/simulate_edits_models"))
    parser.add_argument("--variants", default="none,stability=0.5,stability=1.5,unique")
    parser.add_argument("--out", type=Path, default=Path("bench/out/reparse_variants.jsonl"))
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1):
        for treebank in args.treebanks.split(","):
            bundle = load_models(model_dir(args.models, treebank, args.parsers.split(",")))
            gold = load_sentences(next((UD / treebank).glob("*-ud-dev.conllu")))
            for variant in args.variants.split(","):
                patch(variant)
                started = time.perf_counter()
                result = simulate_edits(bundle, gold, policy="top-down", interactive=True, confirm="passed")
                saved = 100.0 * (1 - result["edits"] / result["wrong_arcs_before"])
                seconds = round(time.perf_counter() - started, 1)
                line = {"treebank": treebank, "variant": variant, "policy": "top-down+confirm",
                        "parsers": bundle.ensemble_members, "seconds": seconds,
                        "saved_percent": round(saved, 2), **result}
                with args.out.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line) + "\n")
                print(treebank, variant, result["edits"], f"{line['saved_percent']}% saved", flush=True)


if __name__ == "__main__":
    main()
