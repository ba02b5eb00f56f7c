"""Tables and curves of ``bench/simulate.py``'s results (its ``--report``): strategies' token
shares, partial annotation against full sentences, self-training gains, and SVG curves.

Strategies are written ``STRATEGY``, ``STRATEGY+partial-THRESHOLD`` (the oracle annotates only
words whose labelled vote share is below THRESHOLD), ``STRATEGY+partial-THRESHOLD+flagged-P``
(below THRESHOLD **or** flagged by the round's arc error detector, ``p_wrong >= P``:
``simulate --partial THRESHOLD --flag-detector P``), ``STRATEGY+flagged-P`` (the detector alone
chooses the words: ``simulate --flag-detector P``) or ``STRATEGY+partial-THRESHOLD+interactive``
(the same, one word at a time with a re-parse after each: ``simulate --interactive``), then
optionally ``+refill`` (earlier partial trees filled again each round: ``--refill``) and
``+oracle-fill`` (a bound: whole true trees at the touched words' cost: ``--oracle-fill``).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from parsing.charts import line_chart_svg  # noqa: E402
from parsing.semi.selection import STRATEGIES  # noqa: E402

Row = dict[str, Any]

PARTIAL = "+partial-"
"""A strategy written ``STRATEGY+partial-THRESHOLD`` runs ``--strategy STRATEGY --partial THRESHOLD``
(the oracle annotates only words whose labelled vote share is below THRESHOLD)."""
FLAGGED = "+flagged-"
"""After the strategy (and ``+partial-THRESHOLD``, if any): ``+flagged-P`` runs with
``--flag-detector P`` (words with the round detector's ``p_wrong >= P`` are touched too)."""
INTERACTIVE = "+interactive"
"""Ending a partial strategy: it runs with ``--interactive`` too."""
REFILL = "+refill"
"""Ending a partial strategy (after ``+interactive``, if both): it runs with ``--refill`` too."""
ORACLE_FILL = "+oracle-fill"
"""Ending a partial strategy (last of all): it runs with ``--oracle-fill``, a bound."""
PER_ROUND = 50
"""The sentences a round adds unless ``--per-round`` says otherwise (``bench/simulate.py``)."""


def strategy_parts(label: str) -> tuple[str, str | None]:
    """``"expected-errors+partial-0.8"`` -> ``("expected-errors", "0.8")``; no partial -> None
    (``+interactive``, ``+refill`` and ``+oracle-fill`` endings are not part of the threshold:
    :func:`is_interactive`, :func:`is_refill`, :func:`is_oracle_fill`).

    ``+flagged-P`` is not part of it either (:func:`flag_threshold`).

    Examples:
        >>> strategy_parts("random"), strategy_parts("entropy+partial-0.8+interactive+refill")
        (('random', None), ('entropy', '0.8'))
        >>> strategy_parts("expected-errors+partial-0.8+flagged-0.5"), strategy_parts("entropy+flagged-0.5")
        (('expected-errors', '0.8'), ('entropy', None))
    """
    strategy, _, threshold = _endings(label)[0].partition(FLAGGED)[0].partition(PARTIAL)
    return strategy, threshold or None


def flag_threshold(label: str) -> str | None:
    """``"entropy+partial-0.8+flagged-0.5"`` -> ``"0.5"`` (the ``--flag-detector`` threshold);
    None without ``+flagged-P``.

    Examples:
        >>> flag_threshold("entropy+flagged-0.4+refill"), flag_threshold("entropy+partial-0.8")
        ('0.4', None)
    """
    return _endings(label)[0].partition(FLAGGED)[2] or None


def is_partial(label: str) -> bool:
    """True when the oracle touches only some words: a share threshold, detector flags or both.

    Examples:
        >>> is_partial("entropy+flagged-0.5"), is_partial("entropy+partial-0.8"), is_partial("entropy")
        (True, True, False)
    """
    return strategy_parts(label)[1] is not None or flag_threshold(label) is not None


def _endings(label: str) -> tuple[str, frozenset[str]]:
    """The label without its option endings (in their written order ``+interactive``,
    ``+refill``, ``+oracle-fill``), and those endings."""
    found: set[str] = set()
    for ending in (ORACLE_FILL, REFILL, INTERACTIVE):
        if label.endswith(ending):
            label = label.removesuffix(ending)
            found.add(ending)
    return label, frozenset(found)


def _has_ending(label: str, ending: str) -> bool:
    """True when a partial strategy's ``label`` carries ``ending``."""
    return ending in _endings(label)[1] and is_partial(label)


def is_interactive(label: str) -> bool:
    """True for ``STRATEGY+partial-THRESHOLD+interactive``.

    Examples:
        >>> is_interactive("entropy+partial-0.8+interactive"), is_interactive("entropy+partial-0.8")
        (True, False)
    """
    return _has_ending(label, INTERACTIVE)


def is_refill(label: str) -> bool:
    """True for ``STRATEGY+partial-THRESHOLD[+interactive]+refill``.

    Examples:
        >>> is_refill("entropy+partial-0.8+refill"), is_refill("entropy+partial-0.8+interactive")
        (True, False)
    """
    return _has_ending(label, REFILL)


def is_oracle_fill(label: str) -> bool:
    """True for a partial strategy ending ``+oracle-fill`` (whole gold trees at partial cost).

    Examples:
        >>> is_oracle_fill("expected-errors+partial-0.8+oracle-fill"), is_oracle_fill("random+oracle-fill")
        (True, False)
    """
    return _has_ending(label, ORACLE_FILL)


def _strategy_order(label: str) -> tuple[int, str, str]:
    """Columns in :data:`STRATEGIES` order, then by threshold, then by label (``+interactive``
    after its plain twin; without the label, ties fell to set order and changed between runs)."""
    strategy, threshold = strategy_parts(label)
    return (STRATEGIES.index(strategy) if strategy in STRATEGIES else len(STRATEGIES), threshold or "", label)


def label(source: str, select: str) -> str:
    return "none" if source == "none" else f"{source}:{select}"




def read_rows(path: Path) -> list[Row]:
    """The JSON lines; a run recorded twice counts once (the last line wins)."""
    rows: dict[tuple[Any, ...], Row] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[_key(row) + (run_strategy(row), row["seed"])] = row
    return list(rows.values())


def _key(row: Row, *, batch: bool = True) -> tuple[Any, ...]:
    """What makes two runs comparable: treebank, seed trees, batch size (unless ``batch`` is
    false), members, warm, setting."""
    config = row["config"]
    sizes = (config["seed_trees"], config["per_round"]) if batch else (config["seed_trees"],)
    return (row["treebank"], *sizes, tuple(config["parsers"]), bool(config.get("warm")),
            label(row["self_training"], row["select"]))


def tokens_to_reach(rounds: Sequence[Row], target: float, key: str = "dev_las") -> float | None:
    """Annotated tokens at which the LAS-vs-tokens curve first reaches ``target`` (linear
    interpolation between rounds), or ``None`` if it never does.

    Examples:
        >>> curve = [{"annotated_tokens": 100, "dev_las": 60.0}, {"annotated_tokens": 200, "dev_las": 70.0}]
        >>> tokens_to_reach(curve, 65.0), tokens_to_reach(curve, 59.0), tokens_to_reach(curve, 71.0)
        (150.0, 100.0, None)
    """
    previous: Row | None = None
    for r in rounds:
        if r[key] >= target:
            if previous is None or r[key] == previous[key]:
                return float(r["annotated_tokens"])
            fraction = (target - previous[key]) / (r[key] - previous[key])
            return float(previous["annotated_tokens"] + fraction * (r["annotated_tokens"]
                                                                     - previous["annotated_tokens"]))
        previous = r
    return None


def _minus(tokens: float | None, seed_tokens: float) -> float | None:
    return None if tokens is None else tokens - seed_tokens


def _mean(values: Iterable[float]) -> float | None:
    listed = list(values)
    return float(np.mean(listed)) if listed else None


def _share_cell(tried: int, shares: Sequence[float], short: Sequence[tuple[float, float]]) -> str:
    """A table cell: the mean share, or how far runs that never reached the target got
    (their last round's tokens as % of random's, and LAS behind the target)."""
    if tried == 0:
        return "—"
    if not shares:
        tokens, behind = (float(np.mean([value[i] for value in short])) for i in (0, 1))
        return f"not reached ({tokens:.0f}% of tokens: {behind:+.2f} LAS)"
    return f"{np.mean(shares):.1f}%" + (f" ({len(shares)}/{tried})" if len(shares) < tried else "")


def token_share_table(rows: Sequence[Row], *, beyond_seed: bool = False) -> str:
    """% of random's tokens each strategy needs to reach random's final dev LAS (no self-training).

    Both sides are first arrivals at that LAS (linear interpolation), so random is 100%. With
    ``beyond_seed`` both sides count only the tokens annotated after round 0 (the seed trees,
    the same on both sides, left out); otherwise every annotated token counts."""
    runs: dict[tuple[Any, ...], dict[str, dict[int, Row]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        if row["self_training"] == "none":
            runs[_key(row)][run_strategy(row)][row["seed"]] = row
    strategies = sorted({s for by in runs.values() for s in by}, key=_strategy_order)
    lines = ["| treebank | seed trees | " + " | ".join(strategies) + " |",
             "|---|---|" + "---|" * len(strategies)]
    per_strategy: dict[str, list[float]] = defaultdict(list)
    for key in sorted(runs):
        by_strategy = runs[key]
        if "random" not in by_strategy:
            continue
        cells = []
        for strategy in strategies:
            shares, tried = [], 0
            short: list[tuple[float, float]] = []
            for seed, baseline in by_strategy["random"].items():
                run_ = by_strategy.get(strategy, {}).get(seed)
                if run_ is None:
                    continue
                tried += 1
                target = baseline["rounds"][-1]["dev_las"]
                seed_tokens = baseline["rounds"][0]["annotated_tokens"] if beyond_seed else 0
                # random's own first arrival (a noisy curve can touch its final LAS earlier)
                cost = _minus(tokens_to_reach(baseline["rounds"], target), seed_tokens)
                needed = _minus(tokens_to_reach(run_["rounds"], target), seed_tokens)
                if needed is not None and cost:
                    shares.append(100.0 * needed / cost)
                elif cost:
                    last = run_["rounds"][-1]
                    spent = last["annotated_tokens"] - seed_tokens
                    short.append((100.0 * spent / cost, last["dev_las"] - target))
            mean = _mean(shares)
            if mean is not None:
                per_strategy[strategy].append(mean)
            cells.append(_share_cell(tried, shares, short))
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    means = [_mean(per_strategy[s]) for s in strategies]
    lines.append("| **mean** | | " + " | ".join("—" if m is None else f"**{m:.1f}%**" for m in means) + " |")
    return "\n".join(lines)


GAIN_SHARE = 0.95
"""Partial annotation is measured at this share of full-sentence annotation's dev-LAS gain."""


def run_strategy(row: Row) -> str:
    """A run's strategy, with ``" (filled arcs ×W)"`` when its transition members weighted the
    updates that lose only filled-in arcs of partial trees by W < 1 (``--member-params
    eager.filled_weight=W``): such runs are told apart from the default ones in every table.

    Examples:
        >>> run_strategy({"strategy": "random", "config": {"member_params": {"eager": {"epochs": 6}}}})
        'random'
        >>> params = {"eager": {"filled_weight": 0.3}, "hybrid": {"filled_weight": 0.3}}
        >>> run_strategy({"strategy": "entropy+partial-0.8", "config": {"member_params": params}})
        'entropy+partial-0.8 (filled arcs ×0.3)'
    """
    params = row["config"].get("member_params") or {}
    weights = sorted({float(p["filled_weight"]) for p in params.values() if "filled_weight" in p} - {1.0})
    suffix = f" (filled arcs ×{'/'.join(f'{w:g}' for w in weights)})" if weights else ""
    return str(row["strategy"]) + suffix


def batch_label(row: Row) -> str:
    """A run's strategy (:func:`run_strategy`), with ``" (N a round)"`` when its rounds add
    other than :data:`PER_ROUND` sentences.

    Examples:
        >>> batch_label({"strategy": "random", "config": {"per_round": 25}})
        'random (25 a round)'
    """
    per_round = int(row["config"]["per_round"])
    strategy = run_strategy(row)
    return strategy + ("" if per_round == PER_ROUND else f" ({per_round} a round)")


def partial_gain_table(rows: Sequence[Row]) -> str:
    """For each partial run (``STRATEGY+partial-T``, ``+flagged-P``, :func:`is_partial`): the human-touched
    tokens it needed (beyond the seed trees) to reach :data:`GAIN_SHARE` of full-sentence annotation's
    final dev-LAS gain over the seed trees, as % of the tokens full-sentence annotation added; against
    random selection and, where it ran, the same STRATEGY without partial (same treebank and seed; no
    self-training). The baselines add :data:`PER_ROUND` sentences a round; a partial run may add fewer
    (its label says so, :func:`batch_label`): the target is the baseline's final LAS, whatever the size
    of the partial run's rounds."""
    runs: dict[tuple[Any, ...], dict[str, dict[int, Row]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        if row["self_training"] == "none":
            runs[_key(row, batch=False)][batch_label(row)][row["seed"]] = row
    lines = ["| treebank | partial run | full-sentence baseline | % of its added tokens | seeds |",
             "|---|---|---|---|---|"]
    means: dict[tuple[str, str], list[float]] = defaultdict(list)
    measured: dict[tuple[str, str], int] = defaultdict(int)  # treebanks with a comparable run
    for key in sorted(runs):
        for strategy in sorted(s for s in runs[key] if is_partial(s)):
            written = next(iter(runs[key][strategy].values()))["strategy"]  # without batch_label's suffix
            for baseline in dict.fromkeys(["random", strategy_parts(written)[0]]):
                shares, tried = [], 0
                for seed, partial in runs[key][strategy].items():
                    full = runs[key].get(baseline, {}).get(seed)
                    if full is None:
                        continue
                    tried += 1
                    start, end = full["rounds"][0], full["rounds"][-1]
                    target = start["dev_las"] + GAIN_SHARE * (end["dev_las"] - start["dev_las"])
                    reached = tokens_to_reach(partial["rounds"], target)
                    added = end["annotated_tokens"] - start["annotated_tokens"]
                    if reached is not None and added > 0:
                        shares.append(100.0 * (reached - start["annotated_tokens"]) / added)
                if not tried:
                    continue
                measured[(strategy, baseline)] += 1
                cell = "not reached" if not shares else f"{np.mean(shares):.1f}%"
                if shares:
                    means[(strategy, baseline)].append(float(np.mean(shares)))
                lines.append(f"| {key[0]} | {strategy} | {baseline} | {cell} | {len(shares)}/{tried} |")
    for (strategy, baseline), count in sorted(measured.items()):
        values = means[(strategy, baseline)]
        mean = f"**{np.mean(values):.1f}%**" if values else "—"
        lines.append(f"| **mean** (reached on {len(values)} of {count} treebanks) | {strategy} | {baseline} "
                     f"| {mean} | |")
    return "\n".join(lines)


def self_training_table(rows: Sequence[Row]) -> str:
    """Final-round LAS gain of each self-training setting over none (same strategy and seed).

    A run whose final round trained on no automatic tree (its pool ran out) is no measurement of
    self-training: its cell says so and it stays out of the means."""
    baseline = {(_key(r)[:5], run_strategy(r), r["seed"]): r for r in rows if r["self_training"] == "none"}
    gains: dict[tuple[Any, ...], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    empty: set[tuple[Any, ...]] = set()
    members: list[str] = []
    for row in rows:
        if row["self_training"] == "none":
            continue
        base = baseline.get((_key(row)[:5], run_strategy(row), row["seed"]))
        if base is None:
            continue
        final, before = row["rounds"][-1], base["rounds"][-1]
        group = (row["treebank"], row["config"]["seed_trees"], run_strategy(row), _key(row)[5])
        if not any(final.get("automatic_sentences", {}).values()):
            empty.add(group)
            continue
        gains[group]["ensemble"].append(final["dev_las"] - before["dev_las"])
        for name, scores in final["members"].items():
            if name in before["members"]:
                gains[group][name].append(scores["las"] - before["members"][name]["las"])
                members += [name] if name not in members else []
    if not gains and not empty:
        return "(no self-training runs with a matching run without it)"
    columns = ["ensemble", *members]
    lines = ["| treebank | seed trees | strategy | self-training | " + " | ".join(columns) + " |",
             "|---|---|---|---|" + "---|" * len(columns)]
    overall: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for group in sorted(set(gains) | empty):
        if group not in gains:
            note = ["no automatic tree in the final round (the pool ran out)", *[""] * (len(columns) - 1)]
            lines.append(f"| {group[0]} | {group[1]} | {group[2]} | {group[3]} | " + " | ".join(note) + " |")
            continue
        cells = []
        for column in columns:
            mean = _mean(gains[group].get(column, []))
            cells.append("—" if mean is None else f"{mean:+.2f}")
            if mean is not None:
                overall[group[3]][column].append(mean)
        lines.append(f"| {group[0]} | {group[1]} | {group[2]} | {group[3]} | " + " | ".join(cells) + " |")
    for setting in sorted(overall):
        cells = [f"**{m:+.2f}**" if (m := _mean(overall[setting].get(c, []))) is not None else "—"
                 for c in columns]
        lines.append(f"| **mean** | | | {setting} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _mean_curve(runs: Sequence[Row]) -> list[tuple[float, float]]:
    """Mean annotated tokens and ensemble LAS per round over seeds (rounds all runs reached)."""
    length = min(len(r["rounds"]) for r in runs)
    return [(float(np.mean([r["rounds"][i]["annotated_tokens"] for r in runs])),
             float(np.mean([r["rounds"][i]["dev_las"] for r in runs]))) for i in range(length)]


def draw_curves(rows: Sequence[Row], folder: Path) -> list[Path]:
    """One SVG per treebank and setting (a line per strategy) and per strategy (a line per
    self-training setting, when there are several)."""
    folder.mkdir(parents=True, exist_ok=True)
    by_setting: dict[tuple[Any, ...], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    by_strategy: dict[tuple[Any, ...], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = _key(row)
        by_setting[key][run_strategy(row)].append(row)
        by_strategy[(*key[:5], run_strategy(row))][key[5]].append(row)
    written = []
    for key, groups in sorted(by_setting.items()):
        path = folder / f"curves-{key[0]}-n{key[1]}-{key[5].replace(':', '-')}.svg"
        series = {s: _mean_curve(groups[s]) for s in sorted(groups, key=_strategy_order)}
        path.write_text(line_chart_svg(series, width=760, title=f"{key[0]}: ensemble dev LAS ({key[5]})",
                                       x_label="annotated tokens", y_label="dev LAS (%)",
                                       highlight="random"), encoding="utf-8")
        written.append(path)
    for key, settings in sorted(by_strategy.items()):
        if len(settings) < 2:
            continue
        path = folder / f"self-training-{key[0]}-n{key[1]}-{key[5]}.svg"
        series = {label: _mean_curve(runs) for label, runs in sorted(settings.items())}
        path.write_text(line_chart_svg(series, width=760,
                                       title=f"{key[0]}: self-training ({key[5]} selection)",
                                       x_label="annotated tokens", y_label="dev LAS (%)",
                                       highlight="none"), encoding="utf-8")
        written.append(path)
    return written


def report(path: Path, folder: Path) -> str:
    """The markdown report of the JSON lines at ``path``; curves drawn into ``folder``."""
    if not path.is_file():
        raise SystemExit(f"no results at {path}: run the simulations first")
    rows = read_rows(path)
    curves = draw_curves(rows, folder)
    return "\n".join([
        f"## Simulated annotation ({len(rows)} runs, {path})", "",
        "### Tokens needed to reach random selection's final dev LAS (% of random's tokens)", "",
        "Every annotated token, the seed trees' included:", "",
        token_share_table(rows), "",
        "Only the tokens annotated in the rounds (the seed trees, the same on both sides, left out):", "",
        token_share_table(rows, beyond_seed=True), "",
        f"### Partial annotation: tokens to reach {GAIN_SHARE:.0%} of full sentences' LAS gain", "",
        partial_gain_table(rows), "",
        "### Self-training: final-round dev LAS gain over no self-training (points)", "",
        self_training_table(rows), "",
        "Curves: " + ", ".join(str(p.relative_to(REPO) if p.is_relative_to(REPO) else p) for p in curves),
    ])

