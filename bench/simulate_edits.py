"""Edits an oracle annotator needs on each shared treebank's dev file: one by one vs re-parsing.

For every treebank (gold tags) a model of ``--parsers`` (default graph1+eager+hybrid, the
editor's demo members) with the default ensemble is trained on train once (into ``--models``,
6 epochs; dev picks the best), then ``parsing.semi.edits`` counts the
edits on dev: fixing every wrong arc one by one, and interactively (re-parsing under the human
arcs after each edit) with both policies, without and with confirmations (``passed``: the words
the annotator read before each fixed one are accepted, no edit; ``accept0.9``: worst first also
accepts every right word whose head has a vote share of 0.9 or more). One JSON line per run goes to
``--out``; ``--report`` prints the table from such a file.

``--param MEMBER.SETTING=VALUE`` (repeatable, a JSON value) sets a member's setting, e.g.
``--param biaffine.reveal=0.5 --param biaffine.max_seconds=300`` (the ``biaffine`` member that
reads the annotator's arcs, trained for at most 5 minutes); the model folder's name and each
line's ``setup`` then name the settings, so a member with and without one are compared side by
side (the report has one row per treebank and setup).

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/simulate_edits.py [--treebanks A,B] \\
        [--parsers graph1,eager,hybrid] [--param MEMBER.SETTING=VALUE ...] \\
        [--models bench/out/simulate_edits_models] [--out bench/out/simulate_edits.jsonl]
    PYTHONPATH=. .venv/bin/python bench/simulate_edits.py --report bench/out/simulate_edits.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from parsing.conllu_io import load_sentences
from parsing.pipeline import MANIFEST, load_models, train_models
from parsing.semi.edits import simulate_edits

UD = Path(os.environ.get("ARCVOTE_UD_ROOT") or Path(__file__).resolve().parents[2] / "shared" / "ud")
TREEBANKS = ("UD_Afrikaans-AfriBooms", "UD_Irish-IDT", "UD_Tamil-TTB", "UD_Telugu-MTG", "UD_Welsh-CCG",
             "UD_Wolof-WTB")
EPOCHS = {"graph1": {"max_iter": 6}, "eager": {"epochs": 6}, "hybrid": {"epochs": 6}, "swap": {"epochs": 6}}
"""Modest training (the simulated rounds' settings, ``bench/simulate.py``)."""
VARIANTS: tuple[tuple[str, str, bool, str, float | None], ...] = (
    ("one-by-one", "worst-first", False, "none", None),
    ("worst-first", "worst-first", True, "none", None),
    ("worst-first+confirm", "worst-first", True, "passed", None),
    ("worst-first+confirm+accept0.9", "worst-first", True, "passed", 0.9),
    ("left-to-right", "left-to-right", True, "none", None),
    ("left-to-right+confirm", "left-to-right", True, "passed", None),
    ("top-down", "top-down", True, "none", None),
    ("top-down+confirm", "top-down", True, "passed", None),
)
"""(name, policy, interactive, confirm, accept_share) of each run."""


def setup_name(parsers: list[str], settings: dict[str, dict[str, Any]] | None = None) -> str:
    """The members and their settings as one folder name, e.g. ``biaffine@biaffine.reveal=0.5``."""
    chosen = sorted(f"{member}.{key}={json.dumps(value)}" for member, values in (settings or {}).items()
                    for key, value in values.items())
    return "+".join(parsers) + ("@" + ",".join(chosen) if chosen else "")


def parse_settings(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["biaffine.reveal=0.5", ...]`` → ``{"biaffine": {"reveal": 0.5}}`` (values are JSON).

    Raises:
        ValueError: an item not of the form ``MEMBER.SETTING=VALUE`` or a value that is not JSON.
    """
    settings: dict[str, dict[str, Any]] = {}
    for item in items:
        name, equals, value = item.partition("=")
        member, dot, key = name.partition(".")
        if not equals or not dot or not member or not key:
            raise ValueError(f"a member setting is MEMBER.SETTING=VALUE, got {item!r}")
        try:
            settings.setdefault(member, {})[key] = json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"the value of {name} is not JSON: {value!r}") from error
    return settings


def _plain_params(parser: Any) -> dict[str, Any]:
    """A member's scalar settings as its model file holds them (its defaults when it was trained
    included), for the result lines."""
    return {key: value for key, value in parser.get_params().items()
            if isinstance(value, (bool, int, float, str)) or value is None}


def model_dir(models: Path, treebank: str, parsers: list[str],
              settings: dict[str, dict[str, Any]] | None = None) -> Path:
    """The treebank's model of ``parsers`` (``models/graph1+eager+hybrid/TREEBANK``; with
    ``settings``, ``models/biaffine@biaffine.reveal=0.5/TREEBANK``), trained on first use."""
    folder = models / setup_name(parsers, settings) / treebank
    if (folder / MANIFEST).is_file():
        return folder
    source = UD / treebank
    train = load_sentences(next(source.glob("*-ud-train.conllu")))
    dev = load_sentences(next(source.glob("*-ud-dev.conllu")))
    params = {name: {**EPOCHS.get(name, {}), **(settings or {}).get(name, {})} for name in parsers}
    started = time.perf_counter()
    seconds = train_models(train, dev, folder, names=parsers, tags="gold", ensemble="vote-uniform",
                           params={name: values for name, values in params.items() if values})
    (folder / "train_seconds.json").write_text(json.dumps(
        {"total": round(time.perf_counter() - started, 1), **{k: round(v, 1) for k, v in seconds.items()}}))
    return folder


def run(treebanks: list[str], parsers: list[str], models: Path, out: Path,
        variants: Sequence[str] | None = None, settings: dict[str, dict[str, Any]] | None = None) -> None:
    """Every variant (or those named in ``variants``) on every treebank, one JSON line each
    (appended to ``out``); ``settings``: member settings (:func:`parse_settings`)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    for treebank in treebanks:
        folder = model_dir(models, treebank, parsers, settings)
        bundle = load_models(folder)
        gold = load_sentences(next((UD / treebank).glob("*-ud-dev.conllu")))
        for name, policy, interactive, confirm, accept in VARIANTS:
            if variants is not None and name not in variants:
                continue
            started = time.perf_counter()
            result = simulate_edits(bundle, gold, policy=policy, interactive=interactive, confirm=confirm,
                                    accept_share=accept)
            line = {"treebank": treebank, "variant": name, "policy": policy, "interactive": interactive,
                    "confirm": confirm, "accept_share": accept, "parsers": bundle.ensemble_members,
                    "setup": setup_name(parsers, settings), "settings": settings or {},
                    "member_params": {member: _plain_params(bundle.parsers[member]) for member in parsers},
                    "model": str(folder),
                    "seconds": round(time.perf_counter() - started, 1), **result}
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
            print(treebank, line["setup"], name, result["edits"], f"{line['seconds']}s", flush=True)


def report(path: Path) -> str:
    """A Markdown table: edits per variant, % saved against one by one, confirmations (one row
    per treebank, or per treebank and setup where the lines name one)."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        key = f"{line['treebank']} ({line['setup']})" if line.get("setup") else line["treebank"]
        rows.setdefault(key, {})[line["variant"]] = line
    names = [name for name, *_ in VARIANTS]
    lines = ["| treebank | words | " + " | ".join(names[1:]) + " | one by one |",
             "|---|---|" + "---|" * len(names)]
    for treebank, runs in sorted(rows.items()):
        base = runs.get("one-by-one", {}).get("edits")
        cells = []
        for name in names[1:]:
            got = runs.get(name)
            if got is None or not base:
                cells.append("–")
                continue
            saved = 100.0 * (1 - got["edits"] / base)
            extra = f", {got['confirmations']:,} conf." if got["confirmations"] else ""
            moved = f"+{got['reparse_fixed']}/-{got['reparse_broke']}"
            cells.append(f"{got['edits']:,} ({saved:.1f}% saved{extra}; {moved})")
        words = next(iter(runs.values()))["words"]
        lines.append(f"| {treebank} | {words:,} | " + " | ".join(cells) + f" | {base:,} |")
    lines += ["", "Edits of a wrong head only (label-only edits left out), % saved against one by one:", "",
              "| treebank | " + " | ".join(names[1:]) + " | one by one |", "|---|" + "---|" * len(names)]
    for treebank, runs in sorted(rows.items()):
        heads = {name: got["edits"] - got["label_only_edits"] for name, got in runs.items()}
        base = heads.get("one-by-one")
        cells = [f"{heads[name]:,} ({100.0 * (1 - heads[name] / base):.1f}%)"
                 if name in heads and base else "–" for name in names[1:]]
        lines.append(f"| {treebank} | " + " | ".join(cells) + f" | {base:,} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebanks", default=",".join(TREEBANKS))
    parser.add_argument("--parsers", default="graph1,eager,hybrid")
    parser.add_argument("--models", type=Path, default=Path("bench/out/simulate_edits_models"))
    parser.add_argument("--out", type=Path, default=Path("bench/out/simulate_edits.jsonl"))
    parser.add_argument("--variants", help="comma-separated variants to run (default: all): "
                        + ", ".join(name for name, *_ in VARIANTS))
    parser.add_argument("--param", action="append", default=[], metavar="MEMBER.SETTING=VALUE",
                        help="a member's setting (JSON value), e.g. biaffine.reveal=0.5; repeatable")
    parser.add_argument("--report", type=Path, help="print the table of a results file and stop")
    args = parser.parse_args()
    chosen = None if args.variants is None else args.variants.split(",")
    unknown = sorted(set(chosen or ()) - {name for name, *_ in VARIANTS})
    if unknown:
        parser.error(f"unknown variants: {', '.join(unknown)}")
    if args.report:
        print(report(args.report))
        return
    try:
        settings = parse_settings(args.param)
    except ValueError as error:
        parser.error(str(error))
    with threadpool_limits(limits=1):
        run(args.treebanks.split(","), args.parsers.split(","), args.models, args.out, chosen, settings)


if __name__ == "__main__":
    main()
