"""``detect`` and ``fit-detector``: the arc error detector (:mod:`parsing.detect`) from the command line.

    python -m parsing fit-detector --model MODEL_DIR --train TRAIN.conllu --dev DEV.conllu
    python -m parsing detect --model MODEL_DIR --input FILE.conllu --out RANKING.json

``fit-detector`` fits the detector of a model directory that ``train`` wrote (with an
ensemble) on its parses of ``--dev`` (trees the members were not trained on), counting the
``--train`` trees, and saves it as ``MODEL_DIR/detector.model``. ``detect`` writes
``{"arcs": [{"sent_id": ..., "word": ID, "p_wrong": P}, ...]}`` sorted by ``p_wrong``, highest
first: a sentence whose words all have a HEAD is scored as given (a gold or reviewed tree),
any other is parsed by the ensemble and its tree scored.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from parsing.conllu_io import load_sentences, read_conllu, to_sentence
from parsing.detect.bundle import fit_model_detector, rank_arcs, score_corpus


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``detect`` and ``fit-detector`` sub-commands."""
    detect = subparsers.add_parser("detect", help="rank every arc by its probability of being wrong")
    detect.add_argument("--model", required=True, type=Path, help="model directory with a detector")
    detect.add_argument("--input", required=True, type=Path,
                        help="CoNLL-U: complete trees are scored as given, other sentences are parsed first")
    detect.add_argument("--out", required=True, type=Path, help="JSON ranking to write")
    detect.set_defaults(run=run_detect)

    fit = subparsers.add_parser("fit-detector", help="fit a model directory's arc error detector on dev")
    fit.add_argument("--model", required=True, type=Path, help="model directory (python -m parsing train)")
    fit.add_argument("--train", required=True, type=Path, help="the members' training CoNLL-U (counted)")
    fit.add_argument("--dev", required=True, type=Path, help="gold CoNLL-U the members were not trained on")
    fit.add_argument("--seed", type=int, default=0, help="random seed (folds, boosting)")
    fit.set_defaults(run=run_fit)


def run_detect(args: argparse.Namespace) -> int:
    """Score ``--input`` and write the ranking to ``--out``."""
    sentences = [to_sentence(raw) for raw in read_conllu(args.input, check_trees=False)]
    scored = score_corpus(args.model, sentences)
    ranking = rank_arcs(sentences, scored.p_wrong)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"arcs": ranking}, ensure_ascii=False), encoding="utf-8")
    given = scored.sources.count("given")
    print(f"{len(ranking)} arcs of {len(sentences)} sentences ({given} trees as given, "
          f"{len(sentences) - given} parsed) -> {args.out}")
    return 0


def run_fit(args: argparse.Namespace) -> int:
    """Fit and save the detector; print what the manifest records."""
    record = fit_model_detector(args.model, load_sentences(args.train), load_sentences(args.dev),
                                random_state=args.seed)
    print(json.dumps(record))
    return 0
