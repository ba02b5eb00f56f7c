"""``search``: find a Grew-match pattern in a CoNLL-U file.

    python -m parsing search --input FILE.conllu --pattern 'pattern { ... }' [--json] [--limit N]

With ``--json`` it prints ``{"matches": N, "sentences": N, "hits": [{"sent_id": ..., "nodes":
{"N": word_id, ...}}]}`` (word ids as in the file); without, one line per hit. A malformed
pattern exits with status 2 and names the line and column.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from parsing.conllu_io import MISC, read_conllu, to_sentence
from parsing.grew import Corpus, Matcher, graph_of


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``search`` sub-command."""
    search = subparsers.add_parser("search", help="find a Grew-match pattern in a CoNLL-U file")
    search.add_argument("--input", required=True, type=Path, help="CoNLL-U file")
    search.add_argument("--pattern", required=True, help="Grew request: 'pattern { ... } without { ... }'")
    search.add_argument("--json", action="store_true", help="print the result as JSON")
    search.add_argument("--limit", type=int, default=None, help="list at most this many hits (all counted)")
    search.set_defaults(run=run_search)


def run_search(args: argparse.Namespace) -> int:
    """Search ``--input`` for ``--pattern`` and print the hits."""
    matcher = Matcher(args.pattern)  # parse first: a bad pattern fails before reading the file
    raws = read_conllu(args.input, check_trees=False)
    corpus = Corpus([graph_of(to_sentence(raw), [w[MISC] for w in raw.words]) for raw in raws])
    matches = matcher.run(corpus)
    hits = [{"sent_id": match.sent_id, "nodes": match.nodes} for match in matches[: args.limit]]
    summary = {"matches": len(matches), "sentences": len({m.sentence for m in matches}), "hits": hits}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    for match in matches[: args.limit]:
        nodes = " ".join(f"{name}={word}" for name, word in match.nodes.items())
        print(f"{match.sent_id}\t{nodes}")
    print(f"{summary['matches']} matches in {summary['sentences']} sentences")
    return 0
