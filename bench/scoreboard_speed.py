"""Server time of the scoreboard and compare pages on a treebank of about 10,000 words (issue #30).

Imports the first sentences of ``en_ewt-ud-dev.conllu`` (``../shared/ud``, read in place) up to
``--words`` words as a test split into a fresh database, then stores what one training round
leaves: a round row, a tree version from each of ``--members`` parsers (the gold tree with
random head and label errors at about a member's error rate, with per-word scores) and an
ensemble tree (fewer errors). Signs in and requests each page N times after a warm-up; prints
the median and 90th percentile (milliseconds, Flask test client, so no network) and the median
CPU time of the process (what a busy shared machine does not inflate) and, with
``--jsonl``, appends one line per page.

    .venv/bin/python bench/scoreboard_speed.py [-n 7] [--words 10000] [--database URL]
        [--jsonl bench/results/scoreboard_speed.jsonl] [--profile PAGE]

``--profile scoreboard`` (or ``compare``) prints a cProfile of one request instead.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import select

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # this checkout's app and parsing, not an installed copy
from import_speed import UD, fresh_app  # noqa: E402
from page_speed import signed_in_client  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Document, Sentence, TreeVersion  # noqa: E402
from app.parser_models import TrainingRound  # noqa: E402
from app.services.imports import import_conllu  # noqa: E402
from app.services.users import create_user  # noqa: E402
from parsing.conllu_io import parse_conllu, to_sentence  # noqa: E402

SOURCE = UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
MEMBERS = ("eager", "graph1", "hybrid", "graph2")
HEAD_ERRORS = {"ensemble": 0.08, "eager": 0.14, "graph1": 0.12, "hybrid": 0.13, "graph2": 0.16}
LABEL_ERRORS = 0.05


def first_words(path: Path, words: int) -> tuple[bytes, int, int]:
    """The CoNLL-U text of the file's first sentences holding at least ``words`` words."""
    blocks, total = [], 0
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        if not block.strip():
            continue
        blocks.append(block.strip("\n") + "\n\n")
        total += sum(1 for line in block.splitlines() if line.split("\t", 1)[0].isdigit())
        if total >= words:
            break
    return "".join(blocks).encode("utf-8"), len(blocks), total


def perturbed(heads: list[int], deprels: list[str], labels: list[str], rate: float,
              rng: np.random.Generator) -> tuple[list[int], list[str]]:
    """A copy of a gold tree with about ``rate`` of its heads moved and some labels changed."""
    n = len(heads)
    new_heads, new_labels = list(heads), list(deprels)
    for i in range(n):
        if n > 1 and rng.random() < rate:
            new_heads[i] = int(rng.choice([h for h in range(n + 1) if h not in (i + 1, heads[i])]))
        if rng.random() < LABEL_ERRORS:
            new_labels[i] = str(rng.choice(labels))
    return new_heads, new_labels


def store_round(data: bytes, treebank_id: int, sentence_ids: list[int], user_id: int,
                members: tuple[str, ...]) -> None:
    """A finished round 1 and its member and ensemble trees (one version each per sentence)."""
    gold = [to_sentence(raw) for raw in parse_conllu(data.decode("utf-8"))]
    labels = sorted({label for sentence in gold for label in sentence.deprels[1:]})
    start = datetime.now(UTC) - timedelta(hours=1)
    db.session.add(TrainingRound(treebank_id=treebank_id, number=1, parsers=list(members),
                                 tags="gold", ensemble="vote-accuracy", model_dir="", user_id=user_id,
                                 created_at=start, started_at=start, finished_at=start))
    rng = np.random.default_rng(0)
    rows = []
    for sid, sentence in zip(sentence_ids, gold, strict=True):
        heads, deprels = [int(h) for h in sentence.heads[1:]], list(sentence.deprels[1:])
        for name in (*members, "ensemble"):
            new_heads, new_labels = perturbed(heads, deprels, labels, HEAD_ERRORS.get(name, 0.15), rng)
            rows.append(TreeVersion(
                sentence_id=sid, kind="ensemble" if name == "ensemble" else "parser",
                name="" if name == "ensemble" else name, version=1, heads=new_heads, deprels=new_labels,
                scores=[round(float(x), 3) for x in rng.random(len(heads))], user_id=user_id,
                created_at=start + timedelta(minutes=5)))
    db.session.add_all(rows)
    db.session.commit()


def setup(database: str, words: int, members: tuple[str, ...]) -> tuple[object, int, int, int]:
    """(app, treebank id, sentences, words) of a fresh database holding the bench treebank."""
    app = fresh_app(database)
    data, _, total = first_words(SOURCE, words)
    with app.app_context():
        user = create_user(db.session, "bench", "bench-password")
        result = import_conllu(db.session, data=data, filename="ewt-10k.conllu", treebank_name="EWT 10k",
                               split="test", user=user)
        db.session.commit()
        treebank_id = result.treebank.id
        ids = list(db.session.scalars(select(Sentence.id).join(Document).where(
            Document.treebank_id == treebank_id).order_by(Document.position, Sentence.position)))
        store_round(data, treebank_id, ids, user.id, members)
        db.session.remove()
    return app, treebank_id, len(ids), total


def pages(treebank_id: int, members: tuple[str, ...]) -> dict[str, str]:
    """``label: url`` of the timed requests."""
    base = f"/treebanks/{treebank_id}"
    return {
        "scoreboard (against gold)": f"{base}/scoreboard",
        "scoreboard (against reviewed)": f"{base}/scoreboard?against=reviewed",
        f"compare {members[0]} vs {members[1]} (against gold)":
            f"{base}/compare?a={members[0]}&b={members[1]}",
        "compare ensemble vs gold": f"{base}/compare?a=ensemble&b=gold",
    }


def timed(client, url: str, n: int) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """Wall and CPU milliseconds of ``n`` GETs of ``url`` after one warm-up (CPU time: the
    process's, so other work on a shared machine does not count)."""
    assert client.get(url).status_code == 200
    wall, cpu = [], []
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert response.status_code == 200
    return wall, cpu


def profile(client, url: str) -> None:  # type: ignore[no-untyped-def]
    """CPU-time cProfile of one request of ``url`` (after a warm-up), top 35 by cumulative time."""
    client.get(url)
    profiler = cProfile.Profile(time.process_time)  # CPU time: a busy machine does not skew it
    profiler.enable()
    assert client.get(url).status_code == 200
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)


def main() -> None:
    """Print (and optionally append to JSON lines) the median and p90 server times."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=7)
    parser.add_argument("--words", type=int, default=10_000)
    parser.add_argument("--members", default=",".join(MEMBERS))
    parser.add_argument("--database", default=None, help="default: a temporary SQLite file")
    parser.add_argument("--jsonl", type=Path, default=None)
    parser.add_argument("--label", default="", help="written to each JSON line (e.g. before/after)")
    parser.add_argument("--profile", choices=("scoreboard", "compare"), default=None)
    options = parser.parse_args()
    members = tuple(options.members.split(","))
    with tempfile.TemporaryDirectory() as folder:
        app, treebank_id, sentences, words = setup(
            options.database or f"sqlite:///{Path(folder) / 'scoreboard.sqlite'}", options.words, members)
        client = signed_in_client(app)  # type: ignore[arg-type]
        urls = pages(treebank_id, members)
        if options.profile:
            profile(client, next(url for label, url in urls.items() if label.startswith(options.profile)))
            return
        database = app.config["SQLALCHEMY_DATABASE_URI"].split(":")[0]  # type: ignore[attr-defined]
        print(f"database: {database}, {sentences} sentences, {words} words, "
              f"{len(members)} members + ensemble, n={options.n}")
        print("| request | median ms | p90 ms | median CPU ms |")
        print("|---|---|---|---|")
        for label, url in urls.items():
            wall, cpu = timed(client, url, options.n)
            times = sorted(wall)
            median, p90 = statistics.median(times), times[int(0.9 * (len(times) - 1))]
            print(f"| {label} | {median:.1f} | {p90:.1f} | {statistics.median(cpu):.1f} |")
            if options.jsonl:
                with options.jsonl.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps({
                        "label": options.label, "request": label, "database": database,
                        "sentences": sentences, "words": words, "members": list(members), "n": options.n,
                        "median_ms": round(median, 1), "p90_ms": round(p90, 1),
                        "median_cpu_ms": round(statistics.median(cpu), 1),
                        "load_1min": round(os.getloadavg()[0], 2),
                        "python": platform.python_version()}) + "\n")


if __name__ == "__main__":
    main()
