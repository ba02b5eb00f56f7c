"""k-best reranking of the neural member with data-defined features (Titov 2008 ch. 6), per treebank.

For each treebank (gold UPOS): train the neural member on train (dev picks the epoch, as it
does by default); take its k-best lists (beam ``k``) of test; rerank them with a loss-scaled
averaged perceptron over Fisher, TOP and efficient-TOP features of the output layer
(:mod:`parsing.rerank`), trained on one of two sources of k-best lists:

- ``dev``: the full model's k-best lists of the dev set (held out from its training), features
  and derivations under the full model;
- ``jackknife``: train split into ``--folds`` interleaved parts, a fold model (trained on the
  other parts for the full model's number of epochs, no dev) lists each part's k-best trees;
  the trees are re-derived (static oracle) and their features computed under the FULL model,
  since hidden units of separately trained networks do not mean the same thing;
- ``reviewed`` / ``reviewed-words`` (adaptation, Titov 2008 ch. 7): only the first
  ``--reviewed`` dev sentences, as a small set of reviewed sentences; ``reviewed-words`` adds
  word slots (gradients of per-word copies of the unknown word's embedding) for the words
  seen at least twice in them that the model does not know (:mod:`parsing.rerank.adapt`).

The perceptron's derivative learning rate is chosen by 3-fold cross-validation on the
training lists (``--rates``). Scores: test LAS (CoNLL 2018 conventions: every word, universal
DEPREL) of the list's 1-best, of each reranker, and of the list's oracle; also the member's
own default prediction (beam 4) for reference.

    nice -n 15 .venv/bin/python bench/rerank.py --treebanks UD_Telugu-MTG,UD_Tamil-TTB
    nice -n 15 .venv/bin/python bench/rerank.py --treebanks UD_Wolof-WTB --sources reviewed,reviewed-words
    .venv/bin/python bench/rerank.py --report

Appends one JSON line per (treebank, source, feature kind) to ``bench/results/rerank.jsonl``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from ud_files import UD, split_files  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.neural import NeuralTransitionParser  # noqa: E402
from parsing.rerank import (  # noqa: E402
    Candidates,
    Reranker,
    adaptation_words,
    beam_candidates,
    labelled_accuracy,
    rederived_candidates,
)
from parsing.rerank.candidates import Tree  # noqa: E402
from parsing.rerank.extract import KINDS  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results" / "rerank.jsonl"
TREEBANKS = ["UD_Telugu-MTG", "UD_Tamil-TTB", "UD_Wolof-WTB", "UD_Welsh-CCG", "UD_Irish-IDT",
             "UD_Afrikaans-AfriBooms"]


def las(gold: Sequence[Sentence], trees: Sequence[Tree]) -> float:
    """Test LAS in percent (:func:`parsing.scorer.metrics.evaluate`)."""
    return round(100 * evaluate(gold, [Parse(heads, list(deprels)) for heads, deprels in trees]).las.f1, 2)


def jackknife_lists(full: NeuralTransitionParser, train: list[Sentence], k: int, folds: int,
                    seed: int) -> tuple[list[Sentence], list[Candidates | None], float]:
    """Fold models' k-best trees of each held-out part, re-derived under ``full``; seconds."""
    start = time.perf_counter()
    part = np.arange(len(train)) % folds
    gold: list[Sentence] = []
    trees: list[list[Tree]] = []
    for fold in range(folds):
        rest = [s for s, p in zip(train, part, strict=True) if p != fold]
        held = [s for s, p in zip(train, part, strict=True) if p == fold]
        model = NeuralTransitionParser(max_epochs=full.n_epochs_, random_state=seed).fit(rest)
        for sentence, parses in zip(held, model.predict_kbest(held, k), strict=True):
            gold.append(sentence)
            trees.append([(parse.heads, parse.deprels) for parse in parses])
    return gold, rederived_candidates(full, trees), time.perf_counter() - start


def run(treebank: Path, k: int, folds: int, seed: int, rates: list[float], epochs: int,
        sources: list[str], reviewed: int) -> list[dict[str, Any]]:
    """Train, list, rerank and score one treebank (module docstring)."""
    train_path, dev_path, test_path = split_files(treebank)
    train, test = load_sentences(train_path), load_sentences(test_path)
    dev = load_sentences(dev_path) if dev_path else []
    start = time.perf_counter()
    full = NeuralTransitionParser(random_state=seed).fit(train, dev or None)
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    test_lists = beam_candidates(full, test, k)
    list_s = time.perf_counter() - start
    one_best = las(test, [listed.trees[0] for listed in test_lists])
    oracle = las(test, [listed.trees[int(np.argmax(labelled_accuracy(s, listed.trees)))]
                        for s, listed in zip(test, test_lists, strict=True)])
    base = {"treebank": treebank.name, "k": k, "seed": seed, "epochs_member": full.n_epochs_,
            "beam4_LAS": las(test, [(p.heads, p.deprels) for p in full.predict(test)]),
            "one_best_LAS": one_best, "oracle_LAS": oracle,
            "mean_list_size": round(float(np.mean([len(listed) for listed in test_lists])), 2),
            "train_member_s": round(train_s, 1), "kbest_test_s": round(list_s, 1)}
    print(json.dumps(base), flush=True)
    results: list[dict[str, Any]] = []
    for source in sources:
        words: list[str] = []
        if source in ("dev", "reviewed", "reviewed-words"):
            if not dev:
                continue
            start = time.perf_counter()
            gold = dev if source == "dev" else dev[:reviewed]
            lists = list[Candidates | None](beam_candidates(full, gold, k))
            if source == "reviewed-words":
                words = adaptation_words(full, gold)
            source_s = time.perf_counter() - start
        else:
            gold, lists, source_s = jackknife_lists(full, train, k, folds, seed)
        usable = [listed for listed in lists if listed is not None]
        accuracies = [labelled_accuracy(s, listed.trees) for s, listed in zip(gold, lists, strict=True)
                      if listed is not None]
        train_oracle = float(np.mean([accuracy.max() - accuracy[0] for accuracy in accuracies]))
        for kind in KINDS:
            start = time.perf_counter()
            reranker = Reranker(kind, rates=rates, epochs=epochs, random_state=seed, words=words,
                                max_cache_bytes=3 * 2**30)
            reranker.fit(full, gold, lists)
            fit_s = time.perf_counter() - start
            start = time.perf_counter()
            chosen = reranker.rerank(full, test, test_lists)
            rerank_s = time.perf_counter() - start
            score = las(test, chosen)
            row = {**base, "source": source, "kind": kind, "LAS": score, "gain": round(score - one_best, 2),
                   "rate": reranker.rate_, "rates": rates, "cv_correct": reranker.cv_,
                   "n_train_lists": reranker.n_train_, "word_slots": len(words),
                   "train_lists_dropped": len(lists) - len(usable),
                   "train_lists_oracle_gain": round(100 * train_oracle, 2), "perceptron_epochs": epochs,
                   "changed": sum(tree[0] is not listed.trees[0][0] for tree, listed in
                                  zip(chosen, test_lists, strict=True)),
                   "source_s": round(source_s, 1), "fit_s": round(fit_s, 1), "rerank_s": round(rerank_s, 1)}
            print(json.dumps(row), flush=True)
            results.append(row)
    return results


def table(rows: list[dict[str, Any]]) -> str:
    """Per treebank: 1-best, each reranker per source, oracle; then per column the mean over
    the treebanks that have it and its mean gain over their 1-best (the latest run wins)."""
    sources = ["dev", "jackknife", "reviewed", "reviewed-words"]
    order = {f"{source}/{kind}": (s, k) for s, source in enumerate(sources) for k, kind in enumerate(KINDS)}
    methods = sorted({f"{row['source']}/{row['kind']}" for row in rows}, key=lambda m: order.get(m, (9, 9)))
    bases: dict[str, dict[str, Any]] = {}
    scores: dict[str, dict[str, float]] = {}
    for row in rows:
        bases[row["treebank"]] = row
        scored = scores.setdefault(row["treebank"], {})
        scored.update({"beam 4": row["beam4_LAS"], "1-best": row["one_best_LAS"],
                       "oracle": row["oracle_LAS"]})
        scored[f"{row['source']}/{row['kind']}"] = row["LAS"]
    columns = ["beam 4", "1-best", *methods, "oracle"]
    lines = ["| treebank | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    for name in bases:
        lines.append(f"| {name} | " + " | ".join(str(scores[name].get(c, "")) for c in columns) + " |")
    means, gains, counts = [], [], []
    for column in columns:
        have = [name for name in bases if column in scores[name]]
        values = np.array([scores[name][column] for name in have])
        one = np.array([scores[name]["1-best"] for name in have])
        means.append(f"{values.mean():.2f}")
        gains.append(f"{(values - one).mean():+.2f}")
        counts.append(str(len(have)))
    lines.append("| mean | " + " | ".join(means) + " |")
    lines.append("| mean gain over 1-best | " + " | ".join(gains) + " |")
    lines.append("| treebanks | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark or print the report; see the module docstring."""
    arguments = argparse.ArgumentParser(description=__doc__,
                                        formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated folder names")
    arguments.add_argument("--k", type=int, default=16, help="k-best list length (beam width)")
    arguments.add_argument("--folds", type=int, default=4, help="jackknife folds")
    arguments.add_argument("--sources", default="dev,jackknife",
                           help="dev, jackknife, reviewed, reviewed-words (comma-separated)")
    arguments.add_argument("--reviewed", type=int, default=100,
                           help="sources reviewed*: the first N dev sentences as the reviewed set")
    arguments.add_argument("--rates", default="0.001,0.003,0.01,0.03,0.1,1",
                           help="derivative learning rates tried by cross-validation")
    arguments.add_argument("--epochs", type=int, default=5, help="perceptron epochs")
    arguments.add_argument("--seed", type=int, default=0)
    arguments.add_argument("--out", type=Path, default=OUT)
    arguments.add_argument("--report", action="store_true", help="only print the table of --out's results")
    options = arguments.parse_args()
    if options.report:
        text = options.out.read_text(encoding="utf-8") if options.out.is_file() else ""
        print(table([json.loads(line) for line in text.splitlines() if line.strip()]))
        return
    rates = [float(rate) for rate in options.rates.split(",")]
    done: list[dict[str, Any]] = []
    for name in options.treebanks.split(","):
        rows = run(UD / name, options.k, options.folds, options.seed, rates, options.epochs,
                   options.sources.split(","), options.reviewed)
        options.out.parent.mkdir(parents=True, exist_ok=True)
        with options.out.open("a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        done += rows
    print(table(done))


if __name__ == "__main__":
    main()
