"""How long Grew-pattern search takes over about 100,000 words of ../shared/ud (issue #32: ≤ 1 s
for a simple pattern).

    PYTHONPATH=. .venv/bin/python bench/search_speed.py [--words 100000] [--repeat 3] [--app]
                                                        [--baseline REV] [--database URL] [--runs 8]

Reads the shared UD files (never copied into the repo) until ``--words`` words are loaded, builds
the corpus once (timed apart: the app keeps no corpus between requests, so both numbers count),
then times each pattern: the first run (which builds the index entries it needs) and the best of
``--repeat`` later runs. ``--app`` also imports the same files into a temporary SQLite database
(or the database at ``--database URL``, e.g. an empty PostgreSQL one: the files are imported
once, a later run finds the ``bench`` treebank there and reuses it) and times the app's whole
search (``app.services.search.search_treebank``: reading the trees of a source from the
database, then matching), as the search page and ``flask treebank search`` do: the first pattern
of each source reads the trees, the next ones find them kept (``app/services/search_cache.py``).
``--baseline REV`` also times the matcher of git revision ``REV`` (``parsing/grew/matcher.py`` as
committed there) on the same corpus in the same run, runs alternating, and checks both find the
same matches: the speed-up as a same-run ratio; with ``--app``, also the app's first search of
``gold`` (the cold one, which reads the trees) of this checkout against the whole checkout of
REV (``git archive``, in a temporary folder): ``--runs`` fresh processes each, alternating,
over the same database, each timing its first search (wall and CPU time: the machine is shared)
and checking that every pattern's hits (sentence ids and nodes) equal REV's; then ``--runs`` more
of this checkout that read the corpora a first one saved on disk (``SEARCH_CORPORA_DIR``, in a
temporary folder; the others save none), against REV's medians.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

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
    options.add_argument("--app", action="store_true", help="also time the app's search over SQLite")
    options.add_argument("--baseline", metavar="REV", help="also time the matcher of git revision REV")
    options.add_argument("--database", metavar="URL", help="with --app: this database, not a new SQLite one")
    options.add_argument("--runs", type=int, default=8, help="with --app and --baseline: processes of each")
    args = options.parse_args()
    start = time.perf_counter()
    corpus = Corpus(load(args.words))
    print(f"loaded {len(corpus)} sentences, {corpus.words} words in {time.perf_counter() - start:.2f} s")
    old = baseline_matcher(args.baseline) if args.baseline else None
    for name, pattern in PATTERNS.items():
        matcher = Matcher(pattern)
        start = time.perf_counter()
        found = matcher.run(corpus)
        first = time.perf_counter() - start
        if old is None:
            best = min(_timed(matcher, corpus) for _ in range(args.repeat))
            print(f"{name:24s} {len(found):7d} matches  first {first:.3f} s  best {best:.3f} s   {pattern}")
            continue
        before = old(pattern)
        assert [(m.sentence, m.nodes) for m in before.run(corpus)] == [(m.sentence, m.nodes) for m in found]
        new_times, old_times = [], []
        for _ in range(args.repeat):  # alternating, so both see the same machine
            new_times.append(_timed(matcher, corpus))
            old_times.append(_timed(before, corpus))
        best, best_old = min(new_times), min(old_times)
        print(f"{name:24s} {len(found):7d} matches  best {best:.3f} s  {args.baseline} {best_old:.3f} s  "
              f"ratio {best_old / best:.2f}x   {pattern}")
    if args.app:
        app_search(args.words, args.baseline, args.database, args.runs)


def app_search(words: int, baseline: str | None = None, database: str | None = None, runs: int = 8) -> None:
    """Import the files :func:`load` reads (whole files, so a little over ``words``) and time the
    app's search of the first patterns over ``gold`` and ``latest``; with ``baseline``, the first
    search of ``gold`` in fresh processes of this checkout and of that revision, alternating."""
    import statistics
    import tempfile

    from flask_migrate import upgrade
    from sqlalchemy import select

    from app import create_app, normalise_database_url
    from app.extensions import db
    from app.models import Treebank, User
    from app.services.imports import import_conllu
    from app.services.search import search_treebank
    from app.services.search_cache import clear

    url = normalise_database_url(database) if database else f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite"
    app = create_app({"TESTING": True, "SECRET_KEY": "bench-search-speed", "SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        upgrade()
        treebank = db.session.scalar(select(Treebank).where(Treebank.name == "bench"))
        if treebank is None:
            user = User(username="bench", password_hash="-")
            db.session.add(user)
            total = 0
            for path in sorted(UD.glob("*/*.conllu")):
                result = import_conllu(db.session, data=path.read_bytes(), filename=path.name,
                                       treebank_name="bench", split="test", user=user)
                total, treebank = total + result.words, result.treebank
                if total >= words:
                    break
            db.session.commit()
        assert treebank is not None
        print(f"app: {treebank_words(treebank.id)} words in {db.engine.dialect.name}")
        for source in ("gold", "latest"):
            clear()
            for name in ("one node", "edge", "edge + without"):
                start = time.perf_counter()
                found = search_treebank(db.session, treebank, PATTERNS[name], source=source)
                took = time.perf_counter() - start
                print(f"app {source:6s} {name:24s} {found.matches:7d} matches  {took:.3f} s")
    if baseline is None:
        return
    folder = tempfile.mkdtemp()
    archive = subprocess.run(["git", "archive", baseline], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    times: dict[tuple[str, str, str], list[float]] = {}
    answers: dict[str, list[list[Any]]] = {}
    for _ in range(runs):
        for name, checkout in (("this", str(Path(__file__).resolve().parents[1])), (baseline, folder)):
            printed = first_search(checkout, url)
            for (source, clock), taken in zip(FIRST_SEARCHES, printed[0], strict=True):
                times.setdefault((source, name, clock), []).append(taken)
            answers.setdefault(name, printed[1:])
            assert printed[1:] == answers[name]
    assert answers["this"] == answers[baseline], "different hits"
    print(f"app first searches in fresh processes, {runs} each, alternating; the same hits for "
          f"{', '.join(FIRST_PATTERNS)} over gold and latest")
    for (source, name, clock), taken in times.items():
        print(f"app {source:26s} {name:8s} {clock:4s}: best {min(taken):.3f} s, median "
              f"{statistics.median(taken):.3f} s ({' '.join(f'{t:.2f}' for t in taken)})")
    for source, clock in FIRST_SEARCHES:
        before, now = (statistics.median(times[(source, name, clock)]) for name in (baseline, "this"))
        ratio = before / now
        print(f"app {source:26s} {clock:4s}: median ratio {baseline}/this {ratio:.2f}x")
    # this checkout's fresh processes again, reading the corpora a first one saved on disk
    here, saved = str(Path(__file__).resolve().parents[1]), tempfile.mkdtemp()
    assert first_search(here, url, saved)[1:] == answers["this"]
    read: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        printed = first_search(here, url, saved)
        assert printed[1:] == answers["this"]
        for (source, clock), taken in zip(FIRST_SEARCHES, printed[0], strict=True):
            read.setdefault((source, clock), []).append(taken)
    for (source, clock), taken in read.items():
        print(f"app {source:26s} saved corpus {clock:4s}: best {min(taken):.3f} s, median "
              f"{statistics.median(taken):.3f} s ({' '.join(f'{t:.2f}' for t in taken)}); ratio "
              f"{statistics.median(times[(source, baseline, clock)]) / statistics.median(taken):.2f}x")


def treebank_words(treebank_id: int) -> int:
    """Words of the treebank's sentences."""
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models import Document, Sentence

    return int(db.session.scalar(select(func.sum(Sentence.n_words)).join(Document)
                                 .where(Document.treebank_id == treebank_id)) or 0)


FIRST_PATTERNS = ("one node", "edge", "edge + without")
"""What each fresh process searches in gold, then in latest."""

FIRST_SEARCHES = (("first search (fresh process)", "wall"), ("first search (fresh process)", "CPU"),
                  ("first of a 2nd source", "wall"), ("first of a 2nd source", "CPU"))
"""What a fresh process times: its first search (``gold``, one node), and the first one of
``latest`` (a cold search in a process that keeps a corpus already, like a server's)."""

_FIRST_SEARCH = """
import hashlib, json, sys, time
from sqlalchemy import select
from app import create_app
from app.extensions import db
from app.models import Treebank
from app.services.search import search_treebank
app = create_app({"TESTING": True, "SECRET_KEY": "bench", "SQLALCHEMY_DATABASE_URI": sys.argv[1],
                  "SEARCH_CORPORA_DIR": sys.argv[3] or None})
times, found = [], []
with app.app_context():
    treebank = db.session.scalar(select(Treebank).where(Treebank.name == "bench"))
    for source in ("gold", "latest"):
        for number, pattern in enumerate(json.loads(sys.argv[2])):
            start, cpu = time.perf_counter(), time.process_time()
            result = search_treebank(db.session, treebank, pattern, source=source)
            if number == 0:
                times += [time.perf_counter() - start, time.process_time() - cpu]
            hits = repr([(hit.sentence_id, hit.sent_id, sorted(hit.nodes.items())) for hit in result.hits])
            found.append([result.matches, result.searched, hashlib.sha1(hits.encode()).hexdigest()])
print(json.dumps([times, *found]))
"""
"""A fresh process's searches (run in a checkout), what it prints: ``[[the times of
FIRST_SEARCHES], [matches, searched, digest of the hits] per search]``."""


def first_search(checkout: str, url: str, saved: str = "") -> list[list[Any]]:
    """What :data:`_FIRST_SEARCH` prints when run in ``checkout`` over the database at ``url``
    (with ``saved``: the app's ``SEARCH_CORPORA_DIR``)."""
    patterns = json.dumps([PATTERNS[name] for name in FIRST_PATTERNS])
    command = [sys.executable, "-c", _FIRST_SEARCH, url, patterns, saved]
    done = subprocess.run(command, cwd=checkout, check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": checkout})
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _module_at(revision: str, path: str, name: str) -> Any:
    """The module ``path`` as committed at git ``revision`` (its imports: this checkout's)."""
    source = subprocess.run(["git", "show", f"{revision}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)  # noqa: S102
    return module


def baseline_matcher(revision: str) -> Any:
    """The ``Matcher`` class of ``parsing/grew/matcher.py`` at git ``revision`` (run against this
    checkout's corpus, request and graph modules)."""
    return _module_at(revision, "parsing/grew/matcher.py", "baseline_matcher").Matcher


def _timed(matcher: Any, corpus: Corpus) -> float:
    start = time.perf_counter()
    matcher.run(corpus)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
