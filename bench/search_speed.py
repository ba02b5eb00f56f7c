"""How long Grew-pattern search takes over about 100,000 words of ../shared/ud (issue #32: ≤ 1 s
for a simple pattern).

    PYTHONPATH=. .venv/bin/python bench/search_speed.py [--words 100000] [--repeat 3] [--app]
                                                        [--baseline REV]

Reads the shared UD files (never copied into the repo) until ``--words`` words are loaded, builds
the corpus once (timed apart: the app keeps no corpus between requests, so both numbers count),
then times each pattern: the first run (which builds the index entries it needs) and the best of
``--repeat`` later runs. ``--app`` also imports the same files into a temporary SQLite database
and times the app's whole search (``app.services.search.search_treebank``: reading the trees of
a source from the database, then matching), as the search page and ``flask treebank search`` do:
the first pattern of each source reads the trees, the next ones find them kept
(``app/services/search_cache.py``). ``--baseline REV`` also times the matcher of git revision
``REV`` (``parsing/grew/matcher.py`` as committed there) on the same corpus in the same run,
runs alternating, and checks both find the same matches: the speed-up as a same-run ratio; with
``--app``, also the app's first search (which reads the trees) against REV's search service.
"""

from __future__ import annotations

import argparse
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
        app_search(args.words, args.baseline)


def app_search(words: int, baseline: str | None = None) -> None:
    """Import the files :func:`load` reads (whole files, so a little over ``words``) and time the
    app's search of the first patterns over ``gold`` and ``latest``; with ``baseline``, the first
    search of ``gold`` against the search service of that revision, in the same run."""
    import statistics
    import tempfile

    from flask_migrate import upgrade

    import app.services.search as search_module
    from app import create_app
    from app.extensions import db
    from app.models import User
    from app.services.imports import import_conllu
    from app.services.search import search_treebank
    from app.services.search_cache import clear

    folder = tempfile.mkdtemp()
    app = create_app({"TESTING": True, "SECRET_KEY": "bench-search-speed",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.sqlite"})
    with app.app_context():
        upgrade()
        user = User(username="bench", password_hash="-")
        db.session.add(user)
        total, treebank = 0, None
        for path in sorted(UD.glob("*/*.conllu")):
            result = import_conllu(db.session, data=path.read_bytes(), filename=path.name,
                                   treebank_name="bench", split="test", user=user)
            total, treebank = total + result.words, result.treebank
            if total >= words:
                break
        db.session.commit()
        assert treebank is not None
        print(f"app: {total} words in SQLite")
        expected = 0
        for source in ("gold", "latest"):
            clear()
            for name in ("one node", "edge", "edge + without"):
                start = time.perf_counter()
                found = search_treebank(db.session, treebank, PATTERNS[name], source=source)
                took = time.perf_counter() - start
                print(f"app {source:6s} {name:24s} {found.matches:7d} matches  {took:.3f} s")
                expected = found.matches if (source, name) == ("gold", "one node") else expected
        if baseline is None:
            return
        # the first search of a source reads its trees: this search service against REV's
        # (app/services/search.py as committed there, run on this checkout's other modules),
        # alternating, 8 runs each (wall and CPU time: the machine is shared), the same matches
        old = _module_at(baseline, "app/services/search.py", "baseline_search")
        runs: dict[tuple[str, str], list[float]] = {}
        for _ in range(8):
            for name, module in (("this", search_module), (baseline, old)):
                clear()
                search_module._pairs.cache_clear()
                start, cpu = time.perf_counter(), time.process_time()
                found = module.search_treebank(db.session, treebank, PATTERNS["one node"], source="gold")
                runs.setdefault((name, "wall"), []).append(time.perf_counter() - start)
                runs.setdefault((name, "CPU"), []).append(time.process_time() - cpu)
                assert found.matches == expected
        for (name, clock), times in runs.items():
            print(f"app first search, {name:8s} {clock:4s}: best {min(times):.3f} s, "
                  f"median {statistics.median(times):.3f} s ({' '.join(f'{t:.2f}' for t in times)})")


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
