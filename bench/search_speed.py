"""How long Grew-pattern search takes over about 100,000 words of ../shared/ud (issue #32: ≤ 1 s
for a simple pattern).

    .venv/bin/python bench/search_speed.py [--words 100000] [--repeat 3]

Reads the shared UD files (never copied into the repo) until ``--words`` words are loaded, builds
the corpus once (timed apart: the app keeps no corpus between requests, so both numbers count),
then times each pattern: the first run (which builds the index entries it needs) and the best of
``--repeat`` later runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from parsing.conllu_io import MISC, read_conllu, to_sentence
from parsing.grew import Corpus, Graph, Matcher, graph_of

UD = Path(__file__).resolve().parents[1].parent / "shared" / "ud"
PATTERNS = {
    "one node": "pattern { N [upos=NOUN] }",
    "edge": "pattern { H -[obl]-> N; N [upos=NOUN] }",
    "edge + without": "pattern { H [upos=VERB]; H -[obl]-> N } without { N -[case]-> C }",
    "regex + order": 'pattern { N [form=re".*ing"]; M [upos=NOUN]; N < M }',
    "negated label, 3 nodes": "pattern { H -[^punct]-> A; H -[nsubj]-> S; A << S }",
    "no index (any edge)": "pattern { H -> D; D << H }",
}


def load(words: int) -> list[Graph]:
    """Graphs from the shared UD files, in sorted path order, until ``words`` words."""
    graphs: list[Graph] = []
    total = 0
    for path in sorted(UD.glob("*/*.conllu")):
        for raw in read_conllu(path, check_trees=False):
            graphs.append(graph_of(to_sentence(raw), [w[MISC] for w in raw.words]))
            total += len(graphs[-1])
            if total >= words:
                return graphs
    return graphs


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--words", type=int, default=100_000)
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()
    start = time.perf_counter()
    corpus = Corpus(load(args.words))
    print(f"loaded {len(corpus)} sentences, {corpus.words} words in {time.perf_counter() - start:.2f} s")
    for name, pattern in PATTERNS.items():
        matcher = Matcher(pattern)
        start = time.perf_counter()
        count = len(matcher.run(corpus))
        first = time.perf_counter() - start
        best = min(_timed(matcher, corpus) for _ in range(args.repeat))
        print(f"{name:24s} {count:7d} matches  first {first:.3f} s  best {best:.3f} s   {pattern}")


def _timed(matcher: Matcher, corpus: Corpus) -> float:
    start = time.perf_counter()
    matcher.run(corpus)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
