"""The pure parts of ``bench/round_workers.py``: the pool, the treebank choice, the log's phase
times, the worker's settings and the report table (the measurement itself is run by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from bench.round_workers import (
    backend,
    build_pool,
    largest_treebank,
    log_events,
    parse_options,
    phase_times,
    worker_environment,
)
from bench.round_workers_report import report_table
from parsing.conllu_io import format_conllu, parse_conllu

SOURCE = """# sent_id = a
# text = Vámonos ya
1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tVamos\tir\tVERB\tV\tMood=Imp\t0\troot\t0:root\t_
2\tnos\tnos\tPRON\tP\t_\t1\tobj\t1:obj\t_
3\tya\tya\tADV\tR\t_\t1\tadvmod\t1:advmod\tSpaceAfter=No

# sent_id = b
# text = Bien
1\tBien\tbien\tADV\tR\t_\t0\troot\t0:root\t_

"""


def test_pool_cycles_the_sentences_without_trees_under_new_ids() -> None:
    pool = build_pool(parse_conllu(SOURCE), 5, blank_tags=False)
    assert [s.sent_id for s in pool] == ["pool-1-a", "pool-2-b", "pool-3-a", "pool-4-b", "pool-5-a"]
    assert [s.text for s in pool] == ["Vámonos ya", "Bien", "Vámonos ya", "Bien", "Vámonos ya"]
    first = pool[0]
    assert [row[0] for row in first.rows] == ["1-2", "1", "2", "3"]  # the multiword token stays
    assert all(row[6:9] == ["_", "_", "_"] for row in first.rows)
    assert [row[3] for row in first.words] == ["VERB", "PRON", "ADV"]  # gold tags kept
    assert first.rows[3][9] == "SpaceAfter=No"
    again = parse_conllu(format_conllu(pool))  # written and read back as the importer will
    assert len(again) == 5 and all(all(row[6] == "_" for row in s.rows) for s in again)


def test_pool_with_predicted_tags_is_raw_words() -> None:
    (sentence,) = build_pool(parse_conllu(SOURCE), 1, blank_tags=True)
    assert [row[1] for row in sentence.words] == ["Vamos", "nos", "ya"]
    assert all(row[2:9] == ["_"] * 7 for row in sentence.rows)


def test_pool_needs_sentences() -> None:
    assert build_pool([], 0, blank_tags=False) == []
    with pytest.raises(ValueError, match="no sentences"):
        build_pool([], 3, blank_tags=False)


def write_treebank(root: Path, name: str, words_per_sentence: list[int], split: str = "train") -> None:
    folder = root / name
    folder.mkdir()
    blocks = []
    for n in words_per_sentence:
        rows = [f"{i}\tw\tw\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_"
                for i in range(1, n + 1)]
        blocks.append("\n".join(rows) + "\n")
    (folder / f"xx_{name.lower()}-ud-{split}.conllu").write_text("\n".join(blocks) + "\n", encoding="utf-8")


def test_largest_treebank_counts_train_words_not_sentences(tmp_path: Path) -> None:
    write_treebank(tmp_path, "UD_Many", [2] * 10)  # 20 words
    write_treebank(tmp_path, "UD_Long", [15, 15])  # 30 words
    write_treebank(tmp_path, "UD_DevOnly", [100], split="dev")
    assert largest_treebank(tmp_path).name == "UD_Long"
    with pytest.raises(FileNotFoundError):
        largest_treebank(tmp_path / "UD_DevOnly")


def event(time: str, name: str, job: int, **fields: Any) -> str:
    return json.dumps({"time": f"2026-11-24T20:{time}+00:00", "level": "info", "event": name, "job": job,
                       **fields})


def test_phase_times_come_from_the_round_jobs_log_lines() -> None:
    log = "\n".join([
        "arcvote worker: 2 on the sqlite queue; Ctrl-C stops it.",
        event("00:01.000", "job.started", 1, kind="preannotate"),
        event("00:02.000", "job.started", 2, kind="train_member"),
        event("00:09.000", "job.progress", 1, message="trained graph1 in 7.0s"),
        event("00:10.500", "job.progress", 1, message="round 1 trained", progress=0.6),
        "{not json",
        event("00:11.000", "job.progress", 1, message="parsed 25 of 300 sentences"),
        event("00:20.250", "job.done", 2),
        event("00:30.250", "job.done", 1),
    ])
    times = phase_times(log_events(log), 1)
    assert (times["trained"] - times["started"]).total_seconds() == 9.5
    assert (times["finished"] - times["trained"]).total_seconds() == 19.75
    assert set(phase_times(log_events(log), 2)) == {"started", "finished"}


def test_the_worker_gets_the_bench_apps_database_queue_and_member_settings() -> None:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI="sqlite:////tmp/x/arcvote.sqlite", JOB_QUEUE="sqlite",
                      REDIS_URL="redis://127.0.0.1:6379/0", JOB_QUEUE_FILE="/tmp/x/q.sqlite",
                      JOB_QUEUE_NAME="arcvote-bench-1", MODELS_DIR="/tmp/x/models", STAGING_DIR="/tmp/x/s",
                      MEMBER_PARAMS={"eager": {"epochs": 2}}, ENSEMBLE_PARAMS={}, PREANNOTATE_PROCESSES=2)
    env = worker_environment(app)
    assert json.loads(env["FLASK_PREANNOTATE_PROCESSES"]) == 2
    assert env["DATABASE_URL"] == "sqlite:////tmp/x/arcvote.sqlite" and env["JOB_QUEUE"] == "sqlite"
    assert json.loads(env["FLASK_MEMBER_PARAMS"]) == {"eager": {"epochs": 2}}
    assert json.loads(env["FLASK_JOB_QUEUE_FILE"]) == "/tmp/x/q.sqlite"
    assert len(json.loads(env["FLASK_SECRET_KEY"])) >= 16  # a worker refuses to start without one


def test_options_default_to_the_issues_measurement() -> None:
    options = parse_options([])
    assert (options.workers, options.pool, options.parsers, options.tags) == ("1,2", 10_000, None, "gold")
    assert options.treebank is None and not options.fast and backend(options) == "sqlite+sqlite"
    remote = parse_options(["--redis", "--database-url", "postgres://u@127.0.0.1/bench"])
    assert backend(remote) == "redis+postgresql" and remote.redis == "redis://127.0.0.1:6379/0"


def record(workers: int, train_s: float, *, pool: int = 300, **changes: Any) -> dict[str, Any]:
    base = {"treebank": "UD_Telugu-MTG", "tags": "gold", "members": ["graph1", "eager"], "workers": workers,
            "backend": "sqlite+sqlite", "fast": False, "train_sentences": 1051, "train_words": 5082,
            "pool_sentences": pool, "pool_words": 1500, "total_s": train_s + 12.0, "train_s": train_s,
            "preannotate_s": 10.0, "sentences_per_s": pool / 10.0, "words_per_s": 150.0, "dev_las": 80.5,
            "member_seconds": {"graph1": 20.0, "eager": 5.25}, "worker_processes_used": workers}
    return {**base, **changes}


def test_report_table_gives_the_training_speed_up_against_one_worker_of_the_same_setting() -> None:
    rows = [record(1, 30.0), record(2, 20.0), record(2, 20.0, pool=600), record(1, 40.0), record(2, 20.0)]
    lines = report_table(rows).splitlines()
    assert len(lines) == 7 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    speedup, rate = header.index("train speed-up"), header.index("sents/s")
    # no 1-worker run with a pool of 600; a later 1-worker run is the base of the runs after it
    assert [row[speedup] for row in cells] == ["1.00x", "1.50x", "", "1.00x", "2.00x"]
    assert [row[rate] for row in cells] == ["30.0", "30.0", "60.0", "30.0", "30.0"]
    assert cells[0][header.index("member train s (processes)")] == "graph1 20.0, eager 5.2 (1)"
    assert cells[0][header.index("train trees / words")] == "1,051 / 5,082"
    fits = header.index("tagger fits: summed / wall s (processes)")
    assert cells[0][fits] == ""  # a gold-tags round fits no tagger
    predicted = record(2, 20.0, tagger_fits_s=30.25, tagger_wall_s=16.5,
                       tagger_fit_workers={"full": "vm:1", "seed0-fold0": "vm:2", "seed0-fold1": "vm:1"})
    last = report_table([predicted]).splitlines()[-1].strip("|").split("|")
    assert last[fits].strip() == "30.2 / 16.5 (2)"
