"""A raw text file for the cluster and meta-feature benchmarks: one sentence per line, tokenized.

Reads text with one sentence per line (a corpus's plain text), splits each line into words with
the app's rule tokenizer (:func:`parsing.tokenize.tokenize`: punctuation apart from words, as
UD treebanks have it) and writes the words joined by single spaces, one sentence per line,
as :func:`parsing.clusters.corpus.read_text` and the ``meta_text`` setting read it.

    .venv/bin/python bench/raw_text_file.py SOURCE.txt bench/data/raw-text/OUT.txt
"""

from __future__ import annotations

import argparse
from pathlib import Path

from parsing.tokenize import tokenize


def tokenized_lines(lines: list[str]) -> list[str]:
    """Each non-empty line's words joined by single spaces (spaces inside a word become ``_``)."""
    return [" ".join(word.replace(" ", "_") for word, _ in tokenize(line.strip()))
            for line in lines if line.strip()]


def main() -> None:
    """Tokenize SOURCE into OUT (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    lines = tokenized_lines(args.source.read_text(encoding="utf-8").splitlines())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} sentences, {sum(len(line.split()) for line in lines)} words -> {args.out}")


if __name__ == "__main__":
    main()
