"""Words per second of the full default ensemble: every member parses, then the combination.

Uses the model directories ``bench/ensembles.py --models bench/out/models`` kept (gold tags, or
with ``--tags predicted`` the predicted-tags ones: then tagging is part of the ensemble's time,
as it is when raw text is pre-annotated), so nothing is trained: for each treebank, the test
file is parsed by every member and combined by the default method for the model's tags
(:func:`parsing.ensemble.registry.default_method`, through
``ModelBundle.parse_with_ensemble``, the path ``python -m parsing parse`` takes), once in
this process (one core) and once with members in ``--jobs`` forked processes. Each member's
own words/s is printed too, and every test LAS (CoNLL 2018 conventions), so a faster
decoder is seen to keep the accuracy. With UDPipe 1 models from
``../shared/bench/peer_udpipe.py`` (``--peer-models``, default ``../peer-out``), UDPipe 1
parses the same test file in the same run (one thread; with predicted tags its own tagger tags
first; its timing includes reading and writing CoNLL-U, ours does not) for a speed ratio and
its LAS. Run it on a quiet machine.

    .venv/bin/python bench/ensemble_speed.py                 # every kept gold model
    .venv/bin/python bench/ensemble_speed.py --jobs 2 --treebanks UD_Wolof-WTB
    .venv/bin/python bench/ensemble_speed.py --tags predicted --treebanks UD_Irish-IDT
    .venv/bin/python bench/ensemble_speed.py --tags predicted --variant biaffine-lstm  # its --variant

A model directory without a fitted ensemble (``bench/ensembles.py`` keeps none) gets the default
method fitted on the dev file as the members see it (the time this takes is not counted).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from members import PEER_PYTHON, REPO, SHARED  # noqa: E402

from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.ensemble.registry import default_method, fit_ensemble  # noqa: E402
from parsing.pipeline import load_models  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Parse, Sentence  # noqa: E402

_PEER_PARSE = """
import sys, time
from ufal.udpipe import Model, Pipeline, ProcessingError
model = Model.load(sys.argv[1])
tagger = Pipeline.DEFAULT if sys.argv[4] == "predicted" else Pipeline.NONE
pipe = Pipeline(model, "conllu", tagger, Pipeline.DEFAULT, "conllu")
text = open(sys.argv[2], encoding="utf-8").read()
started = time.perf_counter()
parsed = pipe.process(text, ProcessingError())
print(time.perf_counter() - started)
open(sys.argv[3], "w", encoding="utf-8").write(parsed)
"""


def las(gold: list[Sentence], system: Sequence[Sentence | Parse]) -> float:
    """Test LAS in percent, CoNLL 2018 conventions."""
    return round(100 * evaluate(gold, system).las.f1, 2)


def run_peer(model: Path, test_path: Path, test: list[Sentence],
             tags: str = "gold") -> dict[str, float] | None:
    """UDPipe 1 with ``model`` on the test file (one thread; with predicted tags its tagger tags
    first): its words/s, CoNLL-U in and out included, and its LAS; None without the peer or the
    model."""
    if not (PEER_PYTHON.exists() and model.is_file()):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "parsed.conllu"
        command = [str(PEER_PYTHON), "-c", _PEER_PARSE, str(model), str(test_path), str(output), tags]
        run = subprocess.run(command, capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
        parsed = load_sentences(output)
    words = sum(len(s) for s in test)
    return {"words_per_s": round(words / float(run.stdout)), "las": las(test, parsed)}


def measure(model_dir: Path, test_path: Path, jobs: int, peer_model: Path,
            dev_path: Path | None = None) -> dict[str, Any]:
    """Words/s and test LAS of each member (one core; the tagger too with predicted tags), of
    the full default ensemble for the model's tags (1 and ``jobs`` processes, tagging
    included) and of UDPipe 1 with ``peer_model`` when there is one. Without a fitted
    ensemble of the default method the bundle gets one, tuned on ``dev_path`` when given."""
    bundle = load_models(model_dir)
    method = default_method(bundle.tags)
    if bundle.ensemble is None or bundle.ensemble_method != method:
        tuning = bundle.prepare(load_sentences(dev_path)) if dev_path else None
        ensemble, names = fit_ensemble(method, bundle.parsers, [], tuning)
        bundle.ensemble, bundle.ensemble_method, bundle.ensemble_members = ensemble, method, names
    test = load_sentences(test_path)
    words = sum(len(s) for s in test)
    members: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    seen = bundle.prepare(test)
    tagger_s = time.perf_counter() - started
    for name, parser in bundle.parsers.items():
        started = time.perf_counter()
        parses = parser.predict(seen)
        speed = round(words / (time.perf_counter() - started))
        members[name] = {"words_per_s": speed, "las": las(test, parses)}
    speeds = {}
    for workers in (1, jobs):
        started = time.perf_counter()
        _, combined = bundle.parse_with_ensemble(test, jobs=workers)
        speeds[workers] = round(words / (time.perf_counter() - started))
    ensemble_row = {"words_per_s": speeds[1], f"words_per_s_jobs{jobs}": speeds[jobs],
                    "las": las(test, combined)}
    return {"treebank": model_dir.name.split(f"-{bundle.tags}")[0], "tags": bundle.tags, "words": words,
            "method": method, "members": members, "ensemble": ensemble_row,
            "tagger_words_per_s": round(words / tagger_s) if bundle.tags == "predicted" else None,
            "udpipe1": run_peer(peer_model, test_path, test, bundle.tags)}


def print_tables(rows: list[dict[str, Any]], jobs: int) -> None:
    """A speed table and an accuracy table, Markdown."""
    names = list(rows[0]["members"])
    print(f"\n{rows[0]['tags']} tags (ensemble: {rows[0]['method']}; with predicted tags its words/s include "
          "tagging)\n\n| treebank | " + " | ".join(names) + f" | ensemble, 1 process | ensemble, {jobs} "
          "| UDPipe 1 | ensemble (1 process) / UDPipe 1 |")
    print("|---" * (len(names) + 5) + "|")
    for row in rows:
        ensemble, peer = row["ensemble"], row["udpipe1"]
        ratio = f"{ensemble['words_per_s'] / peer['words_per_s']:.2f}" if peer else "—"
        print(f"| {row['treebank']} | " + " | ".join(str(row["members"][n]["words_per_s"]) for n in names)
              + f" | {ensemble['words_per_s']} | {ensemble[f'words_per_s_jobs{jobs}']}"
              + f" | {peer['words_per_s'] if peer else '—'} | {ratio} |")
    print("\n| treebank | best member | ensemble | Δ best member | UDPipe 1 | Δ UDPipe 1 |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        best = max(row["members"], key=lambda n: row["members"][n]["las"])
        best_las, ensemble_las = row["members"][best]["las"], row["ensemble"]["las"]
        peer = row["udpipe1"]
        peer_cells = f"{peer['las']:.2f} | {ensemble_las - peer['las']:+.2f}" if peer else "— | —"
        gain = f"{ensemble_las - best_las:+.2f}"
        print(f"| {row['treebank']} | {best} {best_las:.2f} | {ensemble_las:.2f} | {gain} | {peer_cells} |")


def main() -> None:
    """Measure every kept gold model (or ``--treebanks``); print JSON lines and the tables."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=REPO / "bench" / "out" / "models")
    parser.add_argument("--treebanks", help="comma-separated folder names (default: every kept model)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--peer-models", type=Path, default=REPO.parent / "peer-out",
                        help="UDPipe 1 models, TREEBANK/model.TAGS.udpipe as ../shared/bench/peer_udpipe.py "
                             "writes them (default ../peer-out); without one, no peer columns")
    parser.add_argument("--tags", choices=("gold", "predicted"), default="gold",
                        help="which kept models (TREEBANK-gold or TREEBANK-predicted)")
    parser.add_argument("--variant", default="",
                        help="the kept models of bench/ensembles.py --variant V (TREEBANK-TAGS-V)")
    args = parser.parse_args()
    chosen = args.treebanks.split(",") if args.treebanks else None
    rows = []
    suffix = f"-{args.tags}" + (f"-{args.variant}" if args.variant else "")
    for model_dir in sorted(args.models.glob(f"*{suffix}")):
        treebank = model_dir.name.removesuffix(suffix)
        if chosen and treebank not in chosen:
            continue
        test = next((SHARED / "ud" / treebank).glob("*-ud-test.conllu"))
        dev = next((SHARED / "ud" / treebank).glob("*-ud-dev.conllu"), None)
        peer_model = args.peer_models / treebank / f"model.{args.tags}.udpipe"
        rows.append(measure(model_dir, test, args.jobs, peer_model, dev))
        print(json.dumps(rows[-1]), flush=True)
    if rows:
        print_tables(rows, args.jobs)


if __name__ == "__main__":
    main()
