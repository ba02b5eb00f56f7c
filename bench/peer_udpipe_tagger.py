"""Train UDPipe 1's tagger (tokenizer and parser off) on one treebank and score it on test.

Runs under the peer interpreter (``/work/peer/bin/python``), which has ``ufal.udpipe``;
the project's own environment does not need it.

usage: peer_udpipe_tagger.py TREEBANK_DIR OUT_DIR

Prints one JSON line: ``treebank``, ``train_s``, ``tag_words_per_s`` (CoNLL-U in and out
included), ``test_words`` and accuracies ``UPOS``, ``XPOS``, ``FEATS`` (exact FEATS string),
each in percent of test words. UDPipe's default tagger options; the dev file, when present,
is given as heldout data (UDPipe uses it to choose the iteration); one thread.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ufal.udpipe import InputFormat, Model, Pipeline, ProcessingError, Sentence, Trainer

UPOS, XPOS, FEATS = 3, 4, 5


def read_udpipe_sentences(path: Path) -> list[Sentence]:
    """Every sentence of a CoNLL-U file as UDPipe ``Sentence`` objects."""
    reader = InputFormat.newConlluInputFormat()
    reader.setText(path.read_text(encoding="utf-8"))
    error = ProcessingError()
    result: list[Sentence] = []
    sentence = Sentence()
    while reader.nextSentence(sentence, error):
        result.append(sentence)
        sentence = Sentence()
    if error.occurred():
        raise SystemExit(f"{path}: {error.message}")
    return result


def blank_tags(text: str) -> str:
    """The CoNLL-U ``text`` with LEMMA, UPOS, XPOS and FEATS of every token set to ``_``."""
    lines = []
    for line in text.split("\n"):
        columns = line.split("\t")
        if len(columns) == 10:
            columns[2:6] = ["_"] * 4
        lines.append("\t".join(columns))
    return "\n".join(lines)


def word_columns(text: str) -> list[list[str]]:
    """The columns of every syntactic-word line (integer ID) of a CoNLL-U text."""
    return [
        line.split("\t")
        for line in text.split("\n")
        if line and not line.startswith("#") and line.split("\t", 1)[0].isdigit()
    ]


def accuracy(gold: list[list[str]], predicted: list[list[str]], column: int) -> float:
    """Percent of words whose ``column`` matches."""
    if len(gold) != len(predicted):
        raise SystemExit(f"word counts differ: gold {len(gold)}, predicted {len(predicted)}")
    hits = sum(g[column] == p[column] for g, p in zip(gold, predicted, strict=True))
    return round(100.0 * hits / len(gold), 2)


def main() -> None:
    """Train, tag test, score and print one JSON line."""
    treebank, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    train = next(treebank.glob("*-ud-train.conllu"))
    dev = next(treebank.glob("*-ud-dev.conllu"), None)
    test = next(treebank.glob("*-ud-test.conllu"))

    started = time.perf_counter()
    model_data = Trainer.train(
        "morphodita_parsito",
        read_udpipe_sentences(train),
        read_udpipe_sentences(dev) if dev else [],
        "none",  # tokenizer
        "",  # tagger: UDPipe's defaults
        "none",  # parser
        ProcessingError(),
    )
    train_s = time.perf_counter() - started
    if not model_data:
        raise SystemExit("UDPipe training failed")
    model_path = out / f"{treebank.name}.tagger.udpipe"
    model_path.write_bytes(
        model_data if isinstance(model_data, bytes) else model_data.encode("latin1")
    )

    model = Model.load(str(model_path))
    pipeline = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.NONE, "conllu")
    gold_text = test.read_text(encoding="utf-8")
    raw_text = blank_tags(gold_text)
    started = time.perf_counter()
    predicted_text = pipeline.process(raw_text, ProcessingError())
    tag_s = time.perf_counter() - started
    (out / f"{treebank.name}.test.udpipe.conllu").write_text(predicted_text, encoding="utf-8")

    gold, predicted = word_columns(gold_text), word_columns(predicted_text)
    print(
        json.dumps(
            {
                "treebank": treebank.name,
                "train_s": round(train_s, 1),
                "tag_words_per_s": round(len(gold) / tag_s),
                "test_words": len(gold),
                "UPOS": accuracy(gold, predicted, UPOS),
                "XPOS": accuracy(gold, predicted, XPOS),
                "FEATS": accuracy(gold, predicted, FEATS),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
