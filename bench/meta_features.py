"""Meta features (Chen, Zhang & Zhang 2013) beside their baseline, per treebank.

For each treebank (gold tags, or ``--tags predicted``): train ``graph1`` and ``graph1-meta``
(:data:`parsing.members.META_MEMBERS`: a baseline graph1 parses the unlabelled text, the base
features on its arcs are ranked into High/Middle/Low/Other, then graph1 is retrained with base +
meta features) on the training trees, parse test and score it (CoNLL 2018 conventions as in
``bench/members.py``: all words, universal DEPREL). Unlabelled text = the training sentences
with their trees hidden, plus, with ``--low-resource N`` (train on the first N trees only), the
rest of train with its trees unused. Dev picks the training epoch (of the baseline inside the
recipe too); dev and test words never feed the meta table. Both members are also retrained at
seeds 1..``--seeds`` (``graph1@seed1``, ``graph1-meta@seed1``, ...): the spread a member's score
shows with no change of features at all, against which a gain must be read.

    .venv/bin/python bench/meta_features.py --treebanks UD_Tamil-TTB,UD_Telugu-MTG
    .venv/bin/python bench/meta_features.py --low-resource 200

Appends to ``bench/results/meta_features.jsonl`` (one line per result) and prints a Markdown
table with the mean and range over seeds; ``--report`` prints the table of every result there
(the committed runs: ``--meta`` ``auto``, ``auto:top_words=0``, ``auto:min_count=1`` at seeds 0-3
and ``auto:folds=0`` with ``--seeds 1``, each with and without ``--low-resource 200``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ud_files import UD, split_files  # noqa: E402

from parsing.conllu_io import format_conllu, read_conllu, to_sentence  # noqa: E402
from parsing.members import build_member  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.tagger.training import train_tagger  # noqa: E402

REPO = Path(__file__).resolve().parents[1]



def run(treebank: Path, args: argparse.Namespace, work: Path) -> list[dict[str, object]]:
    """Both members at every seed on one treebank; one result dict each."""
    train_path, dev_path, test_path = split_files(treebank)
    raw_train = read_conllu(train_path)
    test = [to_sentence(s) for s in read_conllu(test_path)]
    dev = [to_sentence(s) for s in read_conllu(dev_path)] if dev_path else None
    n = args.low_resource or len(raw_train)
    train, rest = [to_sentence(s) for s in raw_train[:n]], raw_train[n:]
    text = None
    more_text = "".join(path.read_text(encoding="utf-8") for path in args.text)
    if rest and args.tags == "gold" and not more_text:  # the unlabelled sentences with their gold tags
        text = work / f"{treebank.name}-unlabelled.conllu"
        text.write_text(format_conllu(rest), encoding="utf-8")
    elif rest or more_text:  # raw text: the recipe tags it with a tagger trained on the training trees
        text = work / f"{treebank.name}-unlabelled.txt"
        lines = "".join(" ".join(to_sentence(s).forms[1:]) + "\n" for s in rest)
        text.write_text(lines + more_text, encoding="utf-8")
    if args.tags == "predicted":  # jackknifed training tags, tagged dev and test
        tagger, (train,), dev = train_tagger(train, dev)
        test = tagger.tag_for_parsing(test)
    setting = (f"low-{args.low_resource}" if args.low_resource else "full") + ("+text" if args.text else "")
    row = {"treebank": treebank.name, "tags": args.tags, "setting": setting, "train_trees": len(train),
           "text": [path.name for path in args.text],
           "unlabelled_sentences": len(train) + len(rest) + more_text.count("\n"), "meta": args.meta}
    results: list[dict[str, object]] = []
    for seed in range(args.seeds + 1):
        for name in ("graph1", "graph1-meta"):
            extra = {"meta": args.meta, "meta_text": str(text) if text else None} if name != "graph1" else {}
            started = time.perf_counter()
            parser = build_member(name, random_state=seed, **extra).fit(train, dev)
            seconds = time.perf_counter() - started
            scores = evaluate(test, parser.predict(test))
            table = getattr(parser, "meta_table_", None)
            results.append({**row, "parser": name if seed == 0 else f"{name}@seed{seed}", "seed": seed,
                            "UAS": round(100 * scores.uas.f1, 2), "LAS": round(100 * scores.las.f1, 2),
                            "train_s": round(seconds, 1),
                            **({"classes": table.class_counts()} if table is not None else {})})
            print(json.dumps(results[-1]), file=sys.stderr)
    return results


def table(rows: list[dict[str, object]]) -> str:
    """Markdown table: per treebank, setting, meta spec and member, seed 0 and the mean/min/max
    over seeds, and the meta member's mean gain over graph1's (of the same run)."""
    groups: dict[tuple[object, ...], dict[str, list[tuple[float, float]]]] = {}
    for r in rows:
        member = str(r["parser"]).split("@")[0]
        group = groups.setdefault((r["treebank"], r.get("tags", "gold"), r["setting"], r["meta"]), {})
        group.setdefault(member, []).append((float(r["UAS"]), float(r["LAS"])))  # type: ignore[arg-type]
    lines = ["| treebank | tags | setting | meta spec | parser | seeds | UAS seed 0 | LAS seed 0 "
             "| LAS mean (min-max) | UAS mean | mean LAS - graph1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (treebank, tags, setting, spec), members in sorted(groups.items(), key=lambda g: str(g[0])):
        base = statistics.mean(las for _, las in members.get("graph1", [(0.0, 0.0)]))
        for member, scores in members.items():
            las = [s[1] for s in scores]
            uas = statistics.mean(s[0] for s in scores)
            lines.append(f"| {treebank} | {tags} | {setting} | {spec} | {member} | {len(scores)} "
                         f"| {scores[0][0]} | {scores[0][1]} "
                         f"| {statistics.mean(las):.2f} ({min(las)}-{max(las)}) | {uas:.2f} "
                         f"| {statistics.mean(las) - base:+.2f} |")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default="UD_Tamil-TTB,UD_Telugu-MTG",
                        help="comma-separated folder names")
    parser.add_argument("--meta", default="auto",
                        help="the meta spec (parsing.meta.recipe), e.g. auto:min_count=1")
    parser.add_argument("--tags", choices=["gold", "predicted"], default="gold",
                        help="predicted: our tagger's tags (jackknifed on train); the recipe tags the text")
    parser.add_argument("--text", action="append", default=[], type=Path,
                        help="a raw text file (a tokenized sentence a line) to learn from too (repeatable)")
    parser.add_argument("--seeds", type=int, default=3, help="also retrain both members at seeds 1..N")
    parser.add_argument("--low-resource", type=int, default=0, metavar="N",
                        help="train on the first N trees; the rest of train is unlabelled text")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "meta_features.jsonl")
    parser.add_argument("--report", action="store_true", help="only print the table of --out's results")
    args = parser.parse_args()
    if args.report:
        with args.out.open(encoding="utf-8") as results:
            print(table([json.loads(line) for line in results if line.strip()]))
        return
    rows: list[dict[str, object]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, args.out.open("a", encoding="utf-8") as log:
        for name in args.treebanks.split(","):
            results = run(UD / name, args, Path(tmp))
            for result in results:
                log.write(json.dumps(result) + "\n")
            log.flush()
            rows.extend(results)
    print(table(rows))


if __name__ == "__main__":
    main()
