"""``tag-train`` and ``tag``: train a :class:`~parsing.tagger.Tagger`, tag CoNLL-U files.

    python -m parsing tag-train --train train.conllu [--dev dev.conllu] --out DIR [--feats]
    python -m parsing tag --model DIR --input raw.conllu --output tagged.conllu

The tagged file keeps every line of the input (comments, multiword tokens, empty nodes,
heads) and only replaces the columns the model predicts (UPOS, and FEATS/XPOS if trained).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from parsing.conllu_io import (
    FEATS,
    ID,
    UPOS,
    XPOS,
    ConlluSentence,
    format_conllu,
    read_conllu,
    to_sentence,
)
from parsing.tagger.model import Tagger
from parsing.types import Sentence

MODEL_FILE = "tagger.npz"
"""Name of the model file inside a ``--out``/``--model`` directory."""


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``tag-train`` and ``tag`` sub-commands."""
    train = subparsers.add_parser("tag-train", help="train a UPOS (and FEATS/XPOS) tagger")
    train.add_argument("--train", required=True, type=Path, help="gold CoNLL-U training file")
    train.add_argument("--dev", type=Path, help="CoNLL-U file to choose the epoch on")
    train.add_argument("--out", required=True, type=Path, help="model directory (created)")
    train.add_argument("--feats", action="store_true", help="also predict FEATS")
    train.add_argument("--xpos", action="store_true", help="also predict XPOS")
    train.add_argument("--max-iter", type=int, default=20, help="training epochs (default 20)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.set_defaults(run=run_train)

    tag = subparsers.add_parser("tag", help="tag a CoNLL-U file with a trained tagger")
    tag.add_argument("--model", required=True, type=Path, help="directory from tag-train")
    tag.add_argument("--input", required=True, type=Path, help="CoNLL-U file (heads may be _)")
    tag.add_argument("--output", required=True, type=Path, help="tagged CoNLL-U file")
    tag.set_defaults(run=run_tag)


def run_train(args: argparse.Namespace) -> int:
    """Train on ``--train``, save to ``--out``, print dev accuracy when ``--dev`` is given."""
    train = [to_sentence(raw) for raw in read_conllu(args.train)]
    dev = [to_sentence(raw) for raw in read_conllu(args.dev)] if args.dev else None
    tagger = Tagger(max_iter=args.max_iter, predict_feats=args.feats, predict_xpos=args.xpos,
                    random_state=args.seed).fit(train, dev)
    args.out.mkdir(parents=True, exist_ok=True)
    tagger.save(args.out / MODEL_FILE)
    print(f"trained on {sum(map(len, train))} words; model saved to {args.out / MODEL_FILE}")
    if dev:
        for column, accuracy in tagger_accuracy(tagger, dev).items():
            print(f"dev {column} accuracy: {100 * accuracy:.2f}%")
    return 0


def run_tag(args: argparse.Namespace) -> int:
    """Tag ``--input`` with the model in ``--model`` and write ``--output``."""
    tagger = Tagger.load(args.model / MODEL_FILE)
    raws = read_conllu(args.input)
    tagged = tagger.tag([to_sentence(raw) for raw in raws])
    columns = [UPOS] + [XPOS] * tagger.predict_xpos + [FEATS] * tagger.predict_feats
    args.output.write_text(
        format_conllu(with_tags(raw, sentence, columns) for raw, sentence in zip(raws, tagged,
                                                                                 strict=True)),
        encoding="utf-8",
    )
    print(f"tagged {sum(map(len, tagged))} words into {args.output}")
    return 0


def tagger_accuracy(tagger: Tagger, gold: list[Sentence]) -> dict[str, float]:
    """Per-word accuracy of every column ``tagger`` predicts, against ``gold``."""
    predicted = tagger.tag(gold)
    names = ["upos"] + ["xpos"] * tagger.predict_xpos + ["feats"] * tagger.predict_feats
    total = max(1, sum(map(len, gold)))
    return {
        name: sum(
            p == g
            for ps, gs in zip(predicted, gold, strict=True)
            for p, g in zip(getattr(ps, name)[1:], getattr(gs, name)[1:], strict=True)
        ) / total
        for name in names
    }


def with_tags(raw: ConlluSentence, sentence: Sentence, columns: list[int]) -> ConlluSentence:
    """A copy of ``raw`` whose word rows take ``columns`` (UPOS, XPOS, FEATS) from ``sentence``."""
    values = {UPOS: sentence.upos, XPOS: sentence.xpos, FEATS: sentence.feats}
    rows = []
    word = 0
    for row in raw.rows:
        new = list(row)
        if row[ID].isdigit():
            word += 1
            for column in columns:
                new[column] = values[column][word]
        rows.append(new)
    return ConlluSentence(list(raw.comments), rows, raw.first_line)
