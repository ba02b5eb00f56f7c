"""Benchmark the ISBN member (``parsing.isbn``, issue #18) beside today's neural member.

For each treebank of ``../shared/ud``: train each member on train (dev picks the epoch), parse
dev and test at the member's default beam, and score (CoNLL 2018 conventions: all words
including punctuation, universal part of DEPREL). Gold tags are the file's own columns;
predicted tags are the pipeline's (``parsing.tagger.training.train_tagger``: the members learn
from jackknifed training tags, dev and test are tagged by the tagger fitted on all of train, and
no gold lemma, XPOS or FEATS reaches a parser). One BLAS thread; parsing speed is words per
second of process CPU time (what a free core would see when other jobs share the machine) and of
wall-clock time. The best member's test LAS from ``bench/ensembles.py`` runs is printed beside.

Settings are compared on **dev** (``dev_LAS``, same beam as test): ``--set isbn.PARAM=VALUE``
(repeatable, as ``python -m parsing train --set``) with a ``--variant`` name for the rows.

    .venv/bin/python bench/member_isbn.py                                   # every treebank, isbn and neural
    .venv/bin/python bench/member_isbn.py --treebanks UD_Telugu-MTG --members isbn --beams 1,8
    .venv/bin/python bench/member_isbn.py --members isbn --tags predicted
    .venv/bin/python bench/member_isbn.py --members isbn --set isbn.dropout=0.2 --variant drop0.2
    .venv/bin/python bench/member_isbn.py --members isbn,isbn-rerank --peer  # UDPipe 1 in the same run
    .venv/bin/python bench/member_isbn.py --report                          # dev/test means by variant

With ``--peer`` UDPipe 1 (``../peer``, ``../shared/bench/peer_udpipe.py``) trains and parses each
treebank in another process while the members train, and its row (``member: udpipe1``) is
written beside theirs.

Appends one JSON line per (treebank, member, beam) to ``bench/results/member_isbn.jsonl`` (or
``--out``) and prints a Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from members import finish_peer, start_peer  # noqa: E402

from parsing.commands.parsers import parse_overrides  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.kbest import list_parse  # noqa: E402
from parsing.members import build_member  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.tagger.training import train_tagger  # noqa: E402
from parsing.types import Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "ud"
OUT = REPO / "bench" / "results" / "member_isbn.jsonl"
ORDER = ["UD_Telugu-MTG", "UD_Tamil-TTB", "UD_Wolof-WTB", "UD_Welsh-CCG", "UD_Afrikaans-AfriBooms",
         "UD_Irish-IDT"]
"""Smallest first, so a run cut short has measured the most treebanks."""

BEST_MEMBER = {  # best single member's test LAS in bench/ensembles.py runs (bench/results/ensembles/)
    "gold": {  # README, bench/ensemble_speed.py table
        "UD_Afrikaans-AfriBooms": 83.98,
        "UD_Irish-IDT": 73.63,
        "UD_Tamil-TTB": 72.15,
        "UD_Telugu-MTG": 83.63,
        "UD_Welsh-CCG": 82.27,
        "UD_Wolof-WTB": 82.28,
    },
    "predicted": {  # predicted-five.jsonl, predicted-irish.jsonl (the same tagger and jackknife)
        "UD_Afrikaans-AfriBooms": 78.50,
        "UD_Irish-IDT": 67.05,
        "UD_Tamil-TTB": 54.90,
        "UD_Telugu-MTG": 77.25,
        "UD_Welsh-CCG": 72.49,
        "UD_Wolof-WTB": 70.76,
    },
}

Split = tuple[list[Sentence], list[Sentence] | None, list[Sentence], list[Sentence]]
"""(train as the parsers see it, dev as they see it, test as they see it, gold test)."""


def load_split(treebank: Path, tags: str) -> Split:
    """The treebank's files as the members meet them in ``tags`` mode (module docstring)."""
    train = load_sentences(next(treebank.glob("*-ud-train.conllu")))
    dev_path = next(treebank.glob("*-ud-dev.conllu"), None)
    dev = load_sentences(dev_path) if dev_path else None
    test = load_sentences(next(treebank.glob("*-ud-test.conllu")))
    if tags == "gold":
        return train, dev, test, test
    tagger, views, tagged_dev = train_tagger(train, dev)
    return views[0], tagged_dev, tagger.tag_for_parsing(test), test


def run(treebank: Path, member: str, beams: list[int] | None, seed: int, tags: str = "gold",
        params: dict[str, object] | None = None, variant: str = "",
        split: Split | None = None) -> list[dict[str, object]]:
    """Train ``member`` once, then parse and score dev and test at each beam (its default if None)."""
    train, dev, test_in, test = split or load_split(treebank, tags)
    parser = build_member(member, random_state=seed, **(params or {}))
    wall, cpu = time.perf_counter(), time.process_time()
    parser.fit(train, dev)
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
    words = sum(len(sentence) for sentence in test)
    results: list[dict[str, object]] = []
    reranked = hasattr(parser, "reranked_")  # a reranked member: its list is k long
    width = "k" if reranked else "beam_size"
    for beam in beams or [int(parser.get_params()[width])]:
        parser.set_params(**{width: beam})
        dev_scores = evaluate(dev, parser.predict(dev)) if dev else None
        wall, cpu = time.perf_counter(), time.process_time()
        parses = parser.predict(test_in)
        parse_wall, parse_cpu = time.perf_counter() - wall, time.process_time() - cpu
        scores = evaluate(test, parses)
        one_best = None
        if reranked:  # the 1-best of the lists it reranked
            listed = [p.extras["kbest"] for p in parses]
            one_best = evaluate(test, [list_parse(kbest) for kbest in listed])  # type: ignore[arg-type]
        results.append({
            "treebank": treebank.name, "member": member, "tags": tags,
            **({"variant": variant} if variant else {}), "seed": seed, "beam": beam,
            "epochs": getattr(parser, "n_epochs_", None), "train_s": round(train_wall, 1),
            "train_cpu_s": round(train_cpu, 1), "words_per_s": round(words / parse_wall),
            "words_per_cpu_s": round(words / parse_cpu),
            "dev_LAS": round(100 * dev_scores.las.f1, 2) if dev_scores else None,
            "UAS": round(100 * scores.uas.f1, 2), "LAS": round(100 * scores.las.f1, 2),
            "best_member_LAS": BEST_MEMBER[tags].get(treebank.name),
            "params": {key: value for key, value in parser.get_params().items() if key != width},
            **({"reranked": parser.reranked_,
                "list_1best_LAS": round(100 * one_best.las.f1, 2) if one_best else None}
               if reranked else {}),
        })  # fmt: skip
        print(json.dumps(results[-1]), flush=True)
    return results


def append(path: Path, rows: list[dict[str, object]]) -> None:
    """Add ``rows`` to the JSON-lines file ``path`` (one object a line)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


def table(results: list[dict[str, object]]) -> str:
    """The results as a Markdown table."""
    columns = ["treebank", "member", "tags", "variant", "seed", "beam", "epochs", "train_s", "words_per_s",
               "words_per_cpu_s", "dev_LAS", "UAS", "LAS", "best_member_LAS"]  # fmt: skip
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in results]
    return "\n".join(lines)


def report(rows: list[dict[str, object]]) -> str:
    """Per (member, tags, variant, beam, seed): mean dev LAS, mean test LAS and the mean gap to
    the best member, over the treebanks it ran on (their count beside; compare equal counts)."""
    groups: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for row in rows:
        key: tuple[object, ...] = (row["member"], row["tags"], row.get("variant", ""), row["beam"],
                                   row.get("seed", 0))
        groups.setdefault(key, []).append(row)
    lines = ["| member | tags | variant | beam | seed | treebanks | dev LAS | test LAS | test − best |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, grouped in sorted(groups.items(), key=lambda item: str(item[0])):
        latest = {str(row["treebank"]): row for row in grouped}  # a rerun replaces an earlier row
        picked = list(latest.values())

        def mean(values: list[float]) -> str:
            return f"{sum(values) / len(values):.2f}" if values else "–"

        dev = [float(r["dev_LAS"]) for r in picked if r.get("dev_LAS") is not None]  # type: ignore[arg-type]
        test = [float(r["LAS"]) for r in picked]  # type: ignore[arg-type]
        gap = [float(r["LAS"]) - float(r["best_member_LAS"])  # type: ignore[arg-type]
               for r in picked if r.get("best_member_LAS") is not None]
        lines.append(f"| {' | '.join(str(k) for k in key)} | {len(picked)} | {mean(dev)} | {mean(test)} | "
                     f"{mean(gap)} |")
    return "\n".join(lines)


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    arguments.add_argument("--treebanks",
                           help="comma-separated folder names (default: all six, smallest first)")
    arguments.add_argument("--members", default="isbn,neural")
    arguments.add_argument("--beams", help="comma-separated beam sizes (default: each member's own)")
    arguments.add_argument("--seed", type=int, default=0)
    arguments.add_argument("--tags", default="gold", choices=["gold", "predicted"])
    arguments.add_argument("--set", action="append", default=[], metavar="MEMBER.PARAM=VALUE",
                           help="a member's hyperparameter (give a --variant with it)")
    arguments.add_argument("--variant", default="", help="name of the settings, carried by the rows")
    arguments.add_argument("--out", type=Path, default=OUT)
    arguments.add_argument("--report", action="store_true", help="print the means of --out and stop")
    arguments.add_argument("--peer", action="store_true", help="run UDPipe 1 beside, in the same run")
    arguments.add_argument("--peer-out", type=Path, default=REPO.parent / "peer-out",
                           help="UDPipe 1's models and outputs")
    options = arguments.parse_args()
    if options.report:
        print(report([json.loads(line) for line in options.out.read_text().splitlines() if line]))
        return
    if options.set and not options.variant:
        arguments.error("--set changes training: name the settings with --variant")
    overrides = parse_overrides(options.set)
    names = options.treebanks.split(",") if options.treebanks else ORDER
    beams = [int(beam) for beam in options.beams.split(",")] if options.beams else None
    results: list[dict[str, object]] = []
    options.out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        peer = start_peer(UD / name, options.tags, options.peer_out / name) if options.peer else None
        split = load_split(UD / name, options.tags)
        for member in options.members.split(","):
            rows = run(UD / name, member, beams, options.seed, options.tags, overrides.get(member),
                       options.variant, split)
            append(options.out, rows)
            results += rows
        if peer is not None:
            measured = finish_peer(peer, UD / name, options.tags)
            row = {"treebank": name, "member": "udpipe1", "tags": options.tags, "beam": None,
                   "LAS": measured["LAS"], "UAS": measured["UAS"], "train_s": measured["train_s"],
                   "words_per_s": measured["parse_words_per_s"], "UPOS": measured["UPOS"],
                   "best_member_LAS": BEST_MEMBER[options.tags].get(name)}
            print(json.dumps(row), flush=True)
            append(options.out, [row])
            results.append(row)
    print(table(results))


if __name__ == "__main__":
    main()
