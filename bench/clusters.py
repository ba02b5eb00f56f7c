"""Word-cluster members beside their baselines (Koo et al. 2008; Razavi 2012), per treebank.

For each treebank and tag mode: learn the clusterings (Brown, and context-vector clusters at
two seeds: :mod:`parsing.clusters`) on unlabelled text = the training sentences' words with
the trees hidden, plus any ``--text`` files (one sentence per line); train each base member
(``graph1``, ``eager``) and its cluster variants (``graph1-brown``, ``graph1-context1``, ...:
:data:`parsing.members.CLUSTER_MEMBERS`, given the lexicons learned here); parse test and score
it (CoNLL 2018 conventions as in ``bench/members.py``: all words, universal DEPREL). Also scores
the ensembles Razavi built: the score sum of ``graph1`` and its cluster variants with one exact
MST decoding (``score-sum(graph1 clusters)``), and uniform arc voting over the base members and
all their cluster variants (``vote(clusters)``). Control: the same ensembles over as many models
that differ only by their random seed (the base members retrained at seeds 1..3:
``score-sum(graph1 seeds)``, ``vote(seeds)``), so a gain from cluster diversity is told apart
from a gain from having more models; each retrained base member is scored too (``graph1@seed1``
...), the spread a member's LAS shows with no change of features at all.

``--low-resource N`` trains on the first N training trees only; the rest of train becomes raw
text for the clusterings (its trees unused). Dev and test words never feed the clusterings.

    .venv/bin/python bench/clusters.py --treebanks UD_Tamil-TTB,UD_Telugu-MTG --tags gold
    .venv/bin/python bench/clusters.py --treebanks UD_Tamil-TTB --low-resource 200

Writes ``bench/out/clusters.jsonl`` (one line per result) and prints a Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ud_files import UD, split_files  # noqa: E402

from parsing.clusters.corpus import read_text, sentence_words  # noqa: E402
from parsing.clusters.recipes import ClusterSpec  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.score_sum import ScoreSum  # noqa: E402
from parsing.ensemble.voting import ArcVoting  # noqa: E402
from parsing.pipeline import load_models, train_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CLUSTERINGS = {"brown": "brown", "context1": "context:seed=1", "context2": "context:seed=2"}
"""Member-name suffix → clustering spec (the variants of :data:`parsing.members.CLUSTER_MEMBERS`)."""



def learn_lexicons(words: list[list[str]], n_clusters: int, out: Path) -> dict[str, tuple[Path, float]]:
    """Each clustering of ``words`` saved under ``out``: suffix → (lexicon file, seconds)."""
    learned = {}
    for suffix, spec in CLUSTERINGS.items():
        started = time.perf_counter()
        lexicon = ClusterSpec.parse(f"{spec}:clusters={n_clusters}").learn(words)
        path = out / f"{suffix}.npz"
        lexicon.save(path)
        learned[suffix] = (path, time.perf_counter() - started)
    return learned


def score(test: list[Sentence], parses: list[Parse]) -> dict[str, float]:
    """UAS and LAS (percent) of ``parses`` against ``test``."""
    scores = evaluate(test, parses)
    return {"UAS": round(100 * scores.uas.f1, 2), "LAS": round(100 * scores.las.f1, 2)}


def run(treebank: Path, mode: str, bases: list[str], args: argparse.Namespace,
        work: Path) -> list[dict[str, object]]:
    """Clusterings, members and ensembles of one treebank and tag mode; one result dict each."""
    train_path, dev_path, test_path = split_files(treebank)
    train, test = load_sentences(train_path), load_sentences(test_path)
    dev = load_sentences(dev_path) if dev_path else None
    raw = train[args.low_resource:] if args.low_resource else []
    train = train[: args.low_resource] if args.low_resource else train
    words = sentence_words(train) + sentence_words(raw) + [s for f in args.text for s in read_text(f)]
    setting = (f"low-{args.low_resource}" if args.low_resource else "full") + ("+text" if args.text else "")
    row = {"treebank": treebank.name, "tags": mode, "setting": setting, "train_trees": len(train),
           "text": [path.name for path in args.text],
           "unlabelled_words": sum(len(s) for s in words), "n_clusters": args.n_clusters}
    model_dir = work / f"{treebank.name}-{mode}-{setting}"
    (model_dir / "lexicons").mkdir(parents=True, exist_ok=True)
    lexicons = learn_lexicons(words, args.n_clusters, model_dir / "lexicons")
    names = [*bases, *(f"{base}-{suffix}" for base in bases for suffix in CLUSTERINGS)]
    params = {f"{base}-{suffix}": {"clusters": str(path)}
              for base in bases for suffix, (path, _) in lexicons.items()}
    seconds = train_models(train, dev, model_dir, names=names, tags=mode, params=params)  # type: ignore[arg-type]
    bundle = load_models(model_dir)
    prepared = bundle.prepare(test)
    parses = {name: bundle.parsers[name].predict(prepared) for name in names}
    results: list[dict[str, object]] = []
    for name in names:
        suffix = name.rpartition("-")[2] if name not in bases else ""
        cluster_s = round(lexicons[suffix][1], 1) if suffix else 0.0
        results.append({**row, "parser": name, **score(test, parses[name]),
                        "train_s": round(seconds[name], 1), "cluster_s": cluster_s})
        print(json.dumps(results[-1]), file=sys.stderr)
    seeded = {seed: load_models(_seed_models(train, dev, bases, mode, seed, Path(f"{model_dir}-seed{seed}")))
              for seed in range(1, len(CLUSTERINGS) + 1)}
    control = [[bundle.parsers[base], *(seeded[k].parsers[base] for k in seeded)] for base in bases]
    for base in bases:  # the seed spread: how far a member moves without any change of features
        for seed, models in seeded.items():
            seed_parses = models.parsers[base].predict(prepared)
            results.append({**row, "parser": f"{base}@seed{seed}", **score(test, seed_parses)})
    ensembles = {"vote(clusters)": ArcVoting.from_fitted([bundle.parsers[n] for n in names]),
                 "vote(seeds)": ArcVoting.from_fitted([p for same in control for p in same])}
    if "graph1" in bases:
        graphs = ["graph1", *(f"graph1-{suffix}" for suffix in CLUSTERINGS)]
        ensembles["score-sum(graph1 clusters)"] = ScoreSum.from_fitted([bundle.parsers[n] for n in graphs])
        ensembles["score-sum(graph1 seeds)"] = ScoreSum.from_fitted(control[bases.index("graph1")])
    for label, ensemble in ensembles.items():
        results.append({**row, "parser": label, **score(test, ensemble.predict(prepared))})
        print(json.dumps(results[-1]), file=sys.stderr)
    return results


def _seed_models(train: list[Sentence], dev: list[Sentence] | None, bases: list[str], mode: str,
                 seed: int, out: Path) -> Path:
    """The base members trained with another ``random_state`` (the control ensembles' members:
    as many models as the cluster variants, differing only by their seed)."""
    train_models(train, dev, out, names=bases, tags=mode, random_state=seed)  # type: ignore[arg-type]
    return out


def table(rows: list[dict[str, object]]) -> str:
    """Markdown table: each cluster member's LAS beside its base member's, each cluster ensemble's
    beside its seed-only control's (same treebank, tags, setting)."""
    def key(r: dict[str, object], parser: object) -> tuple[object, ...]:
        return r["treebank"], r["tags"], r["setting"], r.get("n_clusters"), parser

    las = {key(r, r["parser"]): float(r["LAS"]) for r in rows}  # type: ignore[arg-type]
    lines = ["| treebank | tags | setting | parser | UAS | LAS | LAS - base/control | train s | clusters s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        parser = str(r["parser"])
        member = parser.split("@")[0].partition("-")[0]
        base = parser.replace("clusters)", "seeds)") if "(" in parser else member
        reference = las.get(key(r, base)) if base != parser else None
        delta = f"{float(r['LAS']) - reference:+.2f}" if reference is not None else "—"  # type: ignore[arg-type]
        lines.append(f"| {r['treebank']} | {r['tags']} | {r['setting']} C={r.get('n_clusters')} | {parser} "
                     f"| {r['UAS']} | {r['LAS']} "
                     f"| {delta} | {r.get('train_s', '—')} | {r.get('cluster_s', '—')} |")
    return "\n".join(lines)


def summary(rows: list[dict[str, object]]) -> str:
    """Markdown table, one line per treebank, tags and setting: the mean LAS change of the cluster
    members over their base member, and of the cluster ensembles over their seed-only controls."""
    groups: dict[tuple[object, ...], dict[str, float]] = {}
    for r in rows:
        value = float(r["LAS"])  # type: ignore[arg-type]
        label = f"{r['setting']} C={r.get('n_clusters')}"
        groups.setdefault((r["treebank"], r["tags"], label), {})[str(r["parser"])] = value
    lines = ["| treebank | tags | setting | graph1 | graph1-* − graph1 | eager | eager-* − eager "
             "| score-sum clusters − seeds | vote clusters − seeds |",
             "|---|---|---|---|---|---|---|---|---|"]

    def gain(las: dict[str, float], base: str) -> str:
        variants = [las[f"{base}-{suffix}"] - las[base] for suffix in CLUSTERINGS
                    if base in las and f"{base}-{suffix}" in las]
        return f"{sum(variants) / len(variants):+.2f}" if variants else "—"

    def versus(las: dict[str, float], ensemble: str) -> str:
        ours, control = las.get(ensemble), las.get(ensemble.replace("clusters)", "seeds)"))
        return "—" if ours is None or control is None else f"{ours - control:+.2f}"

    for (treebank, tags, setting), las in groups.items():
        lines.append(f"| {treebank} | {tags} | {setting} | {las.get('graph1', '—')} | {gain(las, 'graph1')} "
                     f"| {las.get('eager', '—')} | {gain(las, 'eager')} "
                     f"| {versus(las, 'score-sum(graph1 clusters)')} | {versus(las, 'vote(clusters)')} |")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treebanks", default="UD_Tamil-TTB,UD_Telugu-MTG",
                        help="comma-separated folder names")
    parser.add_argument("--tags", default="gold", help="gold, predicted or both (comma-separated)")
    parser.add_argument("--members", default="graph1,eager", help="base members (graph1 and/or eager)")
    parser.add_argument("--n-clusters", type=int, default=100, help="clusters of each clustering")
    parser.add_argument("--text", action="append", default=[], type=Path, help="raw text file (repeatable)")
    parser.add_argument("--low-resource", type=int, default=0, metavar="N",
                        help="train on the first N trees; the rest of train is raw text")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "clusters.jsonl")
    parser.add_argument("--report", action="store_true", help="only print the tables of --out's results")
    args = parser.parse_args()
    if args.report:
        text = args.out.read_text(encoding="utf-8")
        done = [json.loads(line) for line in text.splitlines() if line.strip()]
        print(table(done), summary(done), sep="\n\n")
        return
    bases = [b.strip() for b in args.members.split(",") if b.strip()]
    rows: list[dict[str, object]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, args.out.open("a", encoding="utf-8") as log:
        for name in args.treebanks.split(","):
            for mode in args.tags.split(","):
                results = run(UD / name, mode, bases, args, Path(tmp))
                for result in results:
                    log.write(json.dumps(result) + "\n")
                log.flush()
                rows.extend(results)
    print(table(rows))


if __name__ == "__main__":
    main()
