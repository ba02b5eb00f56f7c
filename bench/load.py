"""Load test: simulated annotators against gunicorn + PostgreSQL on 127.0.0.1.

One command builds a fresh database (the demo treebank, its pool pre-annotated with the gold
trees as the ensemble's, one account per annotator), starts gunicorn on it, and lets N annotator
threads work for S seconds: each signs in (CSRF token from the form), then repeatedly opens a
sentence in the editor (the HTML page with its embedded data, as a browser does), thinks for a
moment and saves one changed label on top of the version it opened. A share of the opens goes to
a few "hot" sentences every annotator works on, so saves collide.

It reports requests/s, p50/p95 latency per kind, errors (5xx, unexpected codes, connection
failures; goal 0) and lost updates (goal 0), checked in the database afterwards: every accepted
save (201) is in the history with its tree and author, and every refused save (409) was made on
top of a version that a newer accepted one had already replaced.

    .venv/bin/python bench/load.py [--database URL] [--users 50] [--seconds 60] [--hot 5]
                                   [--workers 4] [--threads 4] [--port 8765]
                                   [--round-with-slow-plugin [--plugin-delay 3] [--plugin-trickle 2]]

With ``--round-with-slow-plugin`` a job worker keeps pre-annotation rounds running on the treebank
during the load, each calling an HTTP plugin on 127.0.0.1 that answers slowly (``load_round.py``).
"""

from __future__ import annotations

import argparse
import html
import http.cookiejar
import json
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from werkzeug.security import generate_password_hash

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from import_speed import fresh_app  # noqa: E402
from load_round import RoundsUnderLoad, SlowPlugin  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Document, Sentence, Treebank, TreeVersion, User  # noqa: E402
from app.services.demo import DEMO_NAME, demo_file, setup_demo  # noqa: E402
from app.services.members import set_role  # noqa: E402
from app.services.trees import add_version  # noqa: E402
from parsing.conllu_io import decode_utf8, parse_conllu  # noqa: E402

DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/arcvote_load"
PASSWORD = "load test password"
LABELS = ("dep", "obl", "nmod", "advmod", "amod", "obj")
ROOT_DIR = Path(__file__).resolve().parents[1]


@dataclass
class Outcome:
    """What the annotator threads saw (appended under ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[tuple[str, int, float]] = field(default_factory=list)  # (kind, status, seconds)
    errors: list[str] = field(default_factory=list)
    accepted: list[dict[str, Any]] = field(default_factory=list)  # 201: sentence, version, deprels, user
    refused: list[dict[str, Any]] = field(default_factory=list)  # 409: sentence, expected_version
    unchanged: int = 0

    def record(self, kind: str, status: int, seconds: float) -> None:
        with self.lock:
            self.requests.append((kind, status, seconds))


def prepare(database: str, users: int, sentences: int) -> tuple[list[int], str]:
    """A fresh database: demo treebank (pool with ensemble trees), ``users`` annotators (the first
    owns the treebank, the others have the annotator role on it).

    Returns the pool sentence ids and the normalised database URL.
    """
    app = fresh_app(database)
    with app.app_context():
        hashed = generate_password_hash(PASSWORD)
        people = [User(username=f"annotator{i:02d}", password_hash=hashed) for i in range(users)]
        db.session.add_all(people)
        db.session.flush()
        setup_demo(db.session, user=people[0], sentences=sentences)
        treebank = db.session.scalars(select(Treebank).where(Treebank.name == DEMO_NAME)).one()
        for person in people[1:]:  # people[0] imported the demo: its owner; the others annotate it
            set_role(db.session, treebank, person.username, "annotator", by=people[0])
        source = demo_file()
        gold = {s.sent_id: s for s in parse_conllu(decode_utf8(source.read_bytes(), source=source.name),
                                                    source=source.name)[:sentences]}
        pool = db.session.execute(select(Sentence.id, Sentence.sent_id).join(Document)
                                  .where(Document.split == "pool").order_by(Sentence.id)).all()
        for sentence_id, sent_id in pool:
            words = gold[sent_id].words
            add_version(db.session, sentence_id=sentence_id, source="ensemble", user=people[0],
                        heads=[int(w[6]) for w in words], deprels=[w[7] for w in words],
                        scores=[1.0] * len(words))
        db.session.commit()
        url = str(app.config["SQLALCHEMY_DATABASE_URI"])
        db.engine.dispose()
    return [int(sentence_id) for sentence_id, _ in pool], url


def start_server(url: str, port: int, workers: int, threads: int,
                 extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """gunicorn serving the app on 127.0.0.1:``port`` (waits until it answers); ``extra_env`` added
    to its environment."""
    env = {**os.environ, "DATABASE_URL": url, **(extra_env or {})}
    command = [str(Path(sys.executable).parent / "gunicorn"), "--bind", f"127.0.0.1:{port}",
               "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread",
               "--log-level", "warning", "app:create_app()"]
    server = subprocess.Popen(command, cwd=ROOT_DIR, env=env)
    deadline = time.monotonic() + 120  # the workers import numpy, scikit-learn, ... first
    while time.monotonic() < deadline and server.poll() is None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/auth/login", timeout=30).close()
            return server
        except OSError:  # refused, reset or timed out while the workers start
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError("gunicorn did not start")


class Annotator:
    """One simulated annotator with its own cookies."""

    def __init__(self, base: str, name: str, outcome: Outcome) -> None:
        self.base, self.name, self.outcome = base, name, outcome
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.csrf = ""

    def request(self, kind: str, path: str, *, form: dict[str, str] | None = None,
                body: dict[str, Any] | None = None) -> tuple[int, str]:
        data, headers = None, {}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
        elif body is not None:
            data = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", "X-CSRFToken": self.csrf}
        started = time.perf_counter()
        try:
            with self.opener.open(urllib.request.Request(self.base + path, data=data, headers=headers),
                                  timeout=60) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            with self.outcome.lock:
                self.outcome.errors.append(f"{kind} {path}: {error}")
            return 0, ""
        self.outcome.record(kind, status, time.perf_counter() - started)
        return status, text

    def sign_in(self) -> None:
        _, page = self.request("sign-in", "/auth/login")
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
        status, _ = self.request("sign-in", "/auth/login", form={
            "username": self.name, "password": PASSWORD, "csrf_token": token.group(1) if token else ""})
        if status != 200:  # urllib follows the redirect to the start page
            raise RuntimeError(f"{self.name} could not sign in ({status})")

    def work(self, sentence_id: int, rng: random.Random, think: tuple[float, float] = (0.2, 1.0)) -> None:
        """Open a sentence in the editor, think (``think``: uniform between the two, seconds), save
        one changed label on top of what was opened."""
        status, page = self.request("open", f"/workspace/sentences/{sentence_id}")
        editor = re.search(r'data-editor="([^"]*)"', page)
        token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page)
        if status != 200 or not editor or not token:
            if status not in (0, 200):
                with self.outcome.lock:
                    self.outcome.errors.append(f"open {sentence_id}: {status}")
            return
        self.csrf = token.group(1)
        data = json.loads(html.unescape(editor.group(1)))
        heads, deprels = list(data["current"]["heads"]), list(data["current"]["deprels"])
        time.sleep(rng.uniform(*think))  # reading the tree
        word = rng.choice([w for w in range(len(heads)) if heads[w] != 0])
        deprels[word] = rng.choice([label for label in LABELS if label != deprels[word]])
        version = data["version"]
        status, text = self.request("save", f"/api/sentences/{sentence_id}/annotations", body={
            "heads": heads, "deprels": deprels, "expected_version": version,
            "based_on_id": data["current"]["id"]})
        reply = json.loads(text) if text.startswith("{") else {}
        with self.outcome.lock:
            if status == 201:
                self.outcome.accepted.append({"sentence": sentence_id, "version": reply["tree"]["version"],
                                              "deprels": deprels, "user": self.name})
            elif status == 409:
                self.outcome.refused.append({"sentence": sentence_id, "expected": version})
            elif status == 200 and reply.get("unchanged"):
                self.outcome.unchanged += 1
            elif status != 0:
                self.outcome.errors.append(f"save {sentence_id}: {status} {text[:200]}")


def run(base: str, pool: list[int], users: int, seconds: float, hot: int,
        think: tuple[float, float] = (0.2, 1.0)) -> Outcome:
    """``users`` annotator threads for ``seconds``; ~30% of their opens go to ``hot`` sentences;
    each reads a tree for ``think`` seconds (uniform) before saving it."""
    outcome = Outcome()
    hot_ids, rest = pool[:hot], pool[hot:]
    deadline = time.monotonic() + seconds
    signed_in = threading.Barrier(users)

    def annotator(index: int) -> None:
        rng = random.Random(index)
        person = Annotator(base, f"annotator{index:02d}", outcome)
        try:
            person.sign_in()
        except RuntimeError as error:
            with outcome.lock:
                outcome.errors.append(str(error))
        signed_in.wait()
        own = rest[index::users] or rest
        while time.monotonic() < deadline:
            person.work(rng.choice(hot_ids) if rng.random() < 0.3 else rng.choice(own), rng, think)

    threads = [threading.Thread(target=annotator, args=(i,)) for i in range(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome


def lost_updates(url: str, outcome: Outcome) -> list[str]:
    """Accepted saves missing from the history, and 409s that replaced no newer version."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    problems = []
    engine = create_engine(url)
    with Session(engine) as session:
        rows = session.execute(select(TreeVersion.sentence_id, TreeVersion.version, TreeVersion.deprels,
                                      User.username).join(User, User.id == TreeVersion.user_id)
                               .where(TreeVersion.kind == "annotation")).all()
    engine.dispose()
    stored = {(sentence, version): (deprels, user) for sentence, version, deprels, user in rows}
    newest: Counter[int] = Counter()
    for (sentence, version) in stored:
        newest[sentence] = max(newest[sentence], version)
    for save in outcome.accepted:
        if stored.get((save["sentence"], save["version"])) != (save["deprels"], save["user"]):
            problems.append(f"accepted save not in the history: {save}")
    for stale in outcome.refused:
        if newest[stale["sentence"]] <= stale["expected"]:
            problems.append(f"409 without a newer version: {stale}")
    if len(stored) != len(outcome.accepted):
        problems.append(f"{len(stored)} annotation versions stored, {len(outcome.accepted)} saves accepted")
    for sentence, top in newest.items():  # versions 1..top, no gap
        missing = [v for v in range(1, top + 1) if (sentence, v) not in stored]
        if missing:
            problems.append(f"sentence {sentence} lacks versions {missing}")
    return problems


def report(outcome: Outcome, seconds: float, problems: list[str]) -> None:
    def percentiles(times: list[float]) -> str:
        if len(times) < 2:
            return "n/a"
        cuts = statistics.quantiles(times, n=100)
        return (f"p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms, p99 {cuts[98] * 1000:.0f} ms, "
                f"max {max(times) * 1000:.0f} ms")

    timed = [(kind, status, secs) for kind, status, secs in outcome.requests if kind != "sign-in"]
    print(f"requests: {len(timed)} in {seconds:.0f} s = {len(timed) / seconds:.1f} requests/s "
          f"(plus {len(outcome.requests) - len(timed)} for signing in)")
    print(f"latency, all: {percentiles([s for _, _, s in timed])}")
    for kind in ("open", "save"):
        print(f"latency, {kind}: {percentiles([s for k, _, s in timed if k == kind])}")
    print("status codes:", dict(sorted(Counter(f"{k} {s}" for k, s, _ in outcome.requests).items())))
    saves = len(outcome.accepted) + len(outcome.refused) + outcome.unchanged
    print(f"saves: {saves}: {len(outcome.accepted)} accepted (201), {len(outcome.refused)} conflicts "
          f"(409), {outcome.unchanged} already saved by someone else (200)")
    server_errors = sum(1 for _, status, _ in outcome.requests if status >= 500)
    print(f"errors: {len(outcome.errors)} ({server_errors} server errors)")
    for error in outcome.errors[:10]:
        print("  ", error)
    print(f"lost updates: {len(problems)}")
    for problem in problems[:10]:
        print("  ", problem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default=DEFAULT_DATABASE, help="emptied and rebuilt (PostgreSQL)")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--hot", type=int, default=5, help="sentences every annotator also works on")
    parser.add_argument("--sentences", type=int, default=1000, help="demo sentences (20%% go to the pool)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 1.0), metavar=("MIN", "MAX"),
                        help="seconds an annotator reads a tree before saving it (uniform; default "
                             "0.2 1.0, a stress test: a person takes seconds to minutes)")
    parser.add_argument("--round-with-slow-plugin", action="store_true",
                        help="keep rounds with a slow HTTP plugin running during the load")
    parser.add_argument("--plugin-delay", type=float, default=3.0, help="seconds before its reply starts")
    parser.add_argument("--plugin-trickle", type=float, default=2.0, help="seconds its reply trickles over")
    args = parser.parse_args()
    pool, url = prepare(args.database, args.users, args.sentences)
    print(f"{len(pool)} pool sentences, {args.users} annotators reading {args.think[0]:g}-"
          f"{args.think[1]:g} s a tree, {args.hot} hot sentences; gunicorn "
          f"{args.workers} workers x {args.threads} threads on 127.0.0.1:{args.port}; {url.split('@')[-1]}")
    secret = {"FLASK_SECRET_KEY": json.dumps(secrets.token_hex(32))}
    rounds = worker = None
    if args.round_with_slow_plugin:
        rounds = RoundsUnderLoad(url, SlowPlugin(args.plugin_delay, args.plugin_trickle))
        worker = rounds.start(secret)
    server = start_server(url, args.port, args.workers, args.threads,
                          {**secret, **(rounds.env() if rounds else {})})
    try:
        started = time.monotonic()
        round_thread = rounds.keep_running(args.seconds) if rounds else None
        outcome = run(f"http://127.0.0.1:{args.port}", pool, args.users, args.seconds, args.hot,
                      tuple(args.think))
        elapsed = time.monotonic() - started
        if round_thread is not None:
            round_thread.join(timeout=120)  # the last round may end after the load
    finally:
        for process in (server, worker):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    report(outcome, elapsed, lost_updates(url, outcome))
    for line in rounds.summary() if rounds else []:
        print(line)


if __name__ == "__main__":
    main()
