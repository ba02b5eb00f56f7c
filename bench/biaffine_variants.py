"""The ``biaffine`` member alone with predicted tags, in variants, over seeds (issue #33): how it
reads its input and how much of its loss goes to morphology.

Variants (``--variant``):

* ``forms`` — the member as a round trains it today: forms only, gold training trees (its tags
  and lemmas are targets), early stopping on dev as the tagger tags it, test as the tagger tags it.
* ``upos-inputs`` — it also reads the tagger's UPOS (``upos_inputs=True``): each gold training
  sentence paired with its ten-fold jackknifed UPOS (:func:`parsing.tag_source.with_tagger_upos`),
  dev and test as the tagger tags them, as a round does it.
* ``lstm-hybrid`` — the other neural member, as a round trains it with predicted tags: the gold
  training trees with their ten-fold jackknifed UPOS, dev and test as the tagger tags them
  (no tag columns of its own). Its rows are paired with ``lstm-hybrid`` rows.

``--param NAME=VALUE`` sets any member setting (JSON value), e.g. ``morphology_weight=0.2``.
One JSON line per (treebank, seed) goes to ``--out``: dev and test LAS (the project's scorer, CoNLL
2018 conventions, cross-checked with the official scorer in ``bench/biaffine.py``), the test
accuracy of the member's own UPOS, XPOS, FEATS and lemmas, epochs and training seconds.

    OMP_NUM_THREADS=1 .venv/bin/python bench/biaffine_variants.py --treebanks UD_Tamil-TTB,UD_Telugu-MTG \\
        --seeds 0,1,2 --variant forms --param morphology_weight=0.2 \\
        --out bench/results/biaffine-variants.jsonl
    .venv/bin/python bench/biaffine_variants.py --report bench/results/biaffine-variants.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ud_files import UD, split_files  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.conllu_io import read_conllu, to_sentence  # noqa: E402
from parsing.lstm_transition.member import LSTMTransitionParser  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.tag_source import with_tagger_upos  # noqa: E402
from parsing.tagger.training import train_tagger  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

VARIANTS = ("forms", "upos-inputs", "lstm-hybrid")
TAGS = {"upos": "upos", "xpos": "xpos", "feats": "feats", "lemmas": "lemmas"}
"""Sentence column → the member's ``Parse.extras`` key."""


def accuracy(gold: list[Sentence], parses: list[Parse], column: str) -> float | None:
    """Share (percent) of the words whose ``column`` the member predicted as in ``gold`` (``_``
    matching ``_``, as UFeats counts an empty set); None when no gold word has a value (Telugu's
    lemmas)."""
    pairs = [(g, p) for sentence, parse in zip(gold, parses, strict=True)
             for g, p in zip(getattr(sentence, column)[1:], parse.extras[TAGS[column]][1:], strict=True)]  # type: ignore[call-overload]
    if all(g == "_" for g, _ in pairs):
        return None
    return round(100 * sum(g == p for g, p in pairs) / len(pairs), 2)


Splits = dict[str, list[Sentence]]
"""A treebank's ``train``, ``dev``, ``test`` (gold), ``train_view`` (jackknifed tags), ``tagged_dev``
and ``tagged_test`` (as the tagger tags them)."""


def load(treebank: str) -> Splits:
    """Read ``treebank`` and tag it once for every seed and variant (the tagger's seed 0)."""
    train_path, dev_path, test_path = split_files(UD / treebank)
    train, dev, test = ([to_sentence(s) for s in read_conllu(path)]
                        for path in (train_path, dev_path, test_path))
    tagger, views, tagged_dev = train_tagger(train, dev)
    assert tagged_dev is not None
    return {"train": train, "dev": dev, "test": test, "train_view": views[0], "tagged_dev": tagged_dev,
            "tagged_test": tagger.tag_for_parsing(test)}


def run(treebank: str, splits: Splits, seed: int, variant: str, params: dict[str, Any]) -> dict[str, Any]:
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    tagged_dev, tagged_test = splits["tagged_dev"], splits["tagged_test"]
    started = time.perf_counter()
    parser: BiaffineParser | LSTMTransitionParser
    if variant == "forms":
        parser = BiaffineParser(random_state=seed, **params).fit(train, tagged_dev)
    elif variant == "lstm-hybrid":
        parser = LSTMTransitionParser(random_state=seed, **params).fit(splits["train_view"], tagged_dev)
    else:
        parser = BiaffineParser(random_state=seed, upos_inputs=True, **params).fit(
            with_tagger_upos(train, splits["train_view"]), tagged_dev)
    seconds = time.perf_counter() - started
    dev_parses, test_parses = parser.predict(tagged_dev), parser.predict(tagged_test)
    return {"treebank": treebank, "seed": seed, "variant": variant, "params": params,
            "train_s": round(seconds, 1), "epochs": len(parser.history_["dev_las"]),
            "dev_LAS": round(100 * evaluate(dev, dev_parses).las.f1, 2),
            "test_LAS": round(100 * evaluate(test, test_parses).las.f1, 2),
            "test_tags": ({column: accuracy(test, test_parses, column) for column in TAGS}
                          if isinstance(parser, BiaffineParser) else None)}


COMPARED = ("morphology_weight", "batch_words", "average", "label_smoothing", "hidden", "dropout",
            "char_hidden", "learning_rate")
"""Settings a row is compared over: its base is ``forms`` (:data:`BASES`) with its other
settings, same seeds."""

BASES = {"lstm-hybrid": "lstm-hybrid"}
"""A variant's base when it is not ``forms``: the other member is compared with itself."""


def _label(variant: str, params: dict[str, Any]) -> str:
    return variant + (" " + json.dumps(params, sort_keys=True) if params else "")


def report(paths: list[str]) -> None:
    """Per treebank and setting: seeds, mean dev and test LAS, each setting's paired difference on
    the same seeds from ``forms`` with the same settings but those of :data:`COMPARED`, mean
    epochs and training seconds and the paired ratio of the seconds summed, and the mean test tag
    accuracies (rows without tag accuracies or seconds leave those cells empty)."""
    rows = [json.loads(line) for path in paths
            for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["treebank"], _label(row["variant"], row["params"])), {})[row["seed"]] = row
    print("| treebank | setting | seeds | dev LAS | test LAS | Δ dev | Δ test | epochs | train s | × s "
          "| test UPOS | XPOS | FEATS | lemmas |")
    print("|---" * 14 + "|")
    for (treebank, label), by_seed in sorted(groups.items()):
        first = next(iter(by_seed.values()))
        params = first["params"]
        base_label = _label(BASES.get(first["variant"], "forms"),
                            {k: v for k, v in params.items() if k not in COMPARED})
        base = groups.get((treebank, base_label), {}) if base_label != label else {}
        seeds = sorted(by_seed)
        mean = {key: np.mean([by_seed[s][key] for s in seeds]) for key in ("dev_LAS", "test_LAS")}
        paired = [s for s in seeds if s in base]
        delta = {key: f"{np.mean([by_seed[s][key] - base[s][key] for s in paired]):+.2f}" if paired else ""
                 for key in ("dev_LAS", "test_LAS")}
        timed = [s for s in seeds if "train_s" in by_seed[s]]
        cost = (f"{np.mean([by_seed[s]['epochs'] for s in timed]):.1f} | "
                f"{np.mean([by_seed[s]['train_s'] for s in timed]):.0f}" if timed else " | ")
        both = [s for s in paired if "train_s" in by_seed[s] and "train_s" in base[s]]
        ratio = (f"{sum(by_seed[s]['train_s'] for s in both) / sum(base[s]['train_s'] for s in both):.2f}"
                 if both else "")
        tagged = [by_seed[s]["test_tags"] for s in seeds if by_seed[s].get("test_tags")]
        tags = [f"{np.mean([t[c] for t in tagged]):.2f}" if tagged and tagged[0][c] is not None else "—"
                for c in TAGS]
        print(f"| {treebank} | {label} | {','.join(map(str, seeds))} | {mean['dev_LAS']:.2f} | "
              f"{mean['test_LAS']:.2f} | {delta['dev_LAS']} | {delta['test_LAS']} | {cost} | {ratio} | "
              + " | ".join(tags) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default="UD_Tamil-TTB,UD_Telugu-MTG")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--variant", choices=VARIANTS, default="forms")
    parser.add_argument("--param", action="append", default=[], help="member setting NAME=VALUE (JSON value)")
    parser.add_argument("--out", default="bench/out/biaffine-variants.jsonl")
    parser.add_argument("--report", nargs="*")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return
    params = {key: json.loads(value) for key, value in (item.split("=", 1) for item in args.param)}
    for treebank in args.treebanks.split(","):
        splits = load(treebank)
        for seed in (int(s) for s in args.seeds.split(",")):
            row = run(treebank, splits, seed, args.variant, params)
            with Path(args.out).open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
