"""Long sentences (issue 30, item 3): server re-parse time at ~100 words with nine members, and
the browser's time per edit with re-parse at ~100 and ~300 words.

UD Wolof-WTB's longest test sentence has 66 words, so long sentences are made by joining
consecutive test sentences (each next sentence's root attaches to the first one's root as
``parataxis``; multiword-token lines are dropped, the syntactic words kept) until a sentence
reaches the target length. The nine default members and the round's default ensemble are
trained once into ``--models`` (``--fast``: the tests' cheap settings, as
bench/reparse_speed.py), and a fresh database gets a treebank of the joined sentences with a
finished round on those models.

Server: in each of ``-n`` sentences of ~100 words an annotator fixes the ensemble's wrong heads
one after another (4 edits: one more gold arc each time, as the editor sends every human arc so
far), and ``POST /api/sentences/<id>/reparse`` is timed with the test client: the "first edit"
(the members also parse the sentence unconstrained) and the "later edits" (the web process keeps
the unconstrained parses and the members' parses of the last re-parse: a member whose parse holds
the new arc is not decoded again), each twice, interleaved with the same run decoding every
member again (the reuse switched off). ``--profile`` prints the top of a cProfile of the later
edits with reuse.

Measured (``-n 10 --fast``, 2026-11-27, a 2-core machine about 3x slower than the one below and
shared with two helpers' tests, load average 5–6): later edits 850 and 1,110 ms median with the
last re-parse against 1,374 and 1,603 ms decoding every member again (0.66x); first edit 2.8–3.5 s.
Again after the graph members kept their arc scores (load average 3): 431 and 564 ms against 648
and 690 ms (0.74x); first edit 1.3–1.5 s. Where the later edits go now (``--profile``, which
slows the runs with reuse, so read only its shares): the transition members' guided greedy
parses 62%, the neural member's constrained beam 26%, the graph members 10%.
On the same machine alone an hour earlier, before the reuse, the repeated-constraints "editing"
request of the older version of this script took 834 ms median (first 1,333 ms), where the
machine below took 240 ms: the 300 ms goal is not met on this machine.

On 2026-11-27 (evening) on a faster 2-core machine (the editor's key benchmark: j 7 ms where
the slow one took 23 ms), with two other jobs running (load average 2-3): later edits 127 and
131 ms median with the last re-parse against 164 and 166 ms decoding every member again (0.78x),
first edit 344 ms cold. Then, with the transition members replaying their last guided parse
(``GuidedTrace``) and the app's passes sending the editor's warm-up first, load average 3.5:
later edits **139 and 154 ms** (p95 248) against 232 and 255 ms reusing nothing (0.60x); the
first edit after the warm-up 219 and 235 ms, cold 482 and 497 ms. In the browser, per edit (key,
re-parse and redraw) at 93 words: 249-269 ms with the focused window, 232-288 ms without; at
301 words 726-781 ms. Then with the constraint guide's shortcut (the network's constrained beam
0.35x), one other job on the machine (load average 2-3): later edits **95 and 143 ms** against
164 and 179 ms reusing nothing, the first edit after the warm-up 155 and 223 ms (cold 360-373);
in the browser at 93 words **167 and 266 ms** per edit with the focused window, 189 and 212 ms
without; at 301 words 557-581 ms (``bench/results/long_sentences.txt``).

Browser (``--browser``, needs Chromium and Playwright as tests/browser): the app on a live
server, the editor of a ~100- and a ~300-word sentence, ``--edits`` edits each (select a word
with two proposed heads, press 2: the head changes and the sentence is re-parsed). Per edit,
with performance.now() in the page: "key" (the key's own work, layout included), "server"
(the re-parse request, from fetch to its reply), "apply" (the reply's JSON, the redraw and
layout) and "browser" (key + apply: what the page itself costs per edit).

    PYTHONPATH=. .venv/bin/python bench/long_sentences.py [-n 10] [--models /tmp/long-bench/models]
        [--fast] [--profile] [--browser] [--edits 8] [--no-server] [--profile-browser]

Measured (``-n 10 --fast --profile --browser --edits 6``, 2026-11-27, the 2-core machine shared
with other jobs: load average 7–8, so every number is inflated, the server's most). Server, 10
sentences of 99.7 words, nine members: first re-parse 2009 ms median (p95 3223), editing 743 ms
(p95 1180): over the 300 ms budget. Where it goes (cProfile of the editing requests): the six
transition members' guided greedy parses 50% (59 of 60 re-decoded: feature hashing and the
constraint guide's ``allowed`` lead), the network's constrained beam 28%, the two graph members
20% (second-order Eisner about half of it); the web code around them under 2%.

| words | focus window | open s | j key ms | key ms | server ms | apply ms | browser ms | total ms |
|---|---|---|---|---|---|---|---|---|
| 93 | on (auto) | 1.03 | 22.8 | 11 | 669 | 21 | 32 | 686 |
| 93 | off | 0.50 | 2.5 | 10 | 654 | 35 | 44 | 687 |
| 301 | on (auto) | 0.93 | 12.5 | 13 | 3185 | 44 | 57 | 3263 |
| 301 | off | 1.47 | 6.5 | 45 | 2913 | 179 | 224 | 3284 |

(6 edits each, medians; "open" includes the page's server time and, for the first row, loading
the scripts.) Before the focused window and the in-place updates, issue 30 measured 2 s to draw
and 1.6 s per edit with re-parse in the browser at 311 words.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import long_sentences_browser  # noqa: E402
from import_speed import fresh_app  # noqa: E402
from page_speed import signed_in_client  # noqa: E402
from reparse_speed import WOLOF, timed, trained  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Document, Sentence  # noqa: E402
from app.parser_models import TrainingRound  # noqa: E402
from app.services.imports import import_conllu  # noqa: E402
from app.services.model_cache import CachedModels, ModelCache  # noqa: E402
from app.services.parsing_adapter import load_sentences  # noqa: E402
from app.services.preannotate import DEFAULT_PARSERS  # noqa: E402
from app.services.trees import add_version, latest_versions  # noqa: E402
from app.services.users import create_user  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD  # noqa: E402
from parsing.pipeline import load_models  # noqa: E402
from parsing.transition.decoding import GreedyDecoding  # noqa: E402


def word_rows(block: str) -> list[list[str]]:
    """The syntactic word lines of one CoNLL-U sentence, split into their 10 columns."""
    rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
    return [row for row in rows if row[0].isdigit()]


def joined(blocks: list[list[list[str]]], sent_id: str) -> str:
    """One CoNLL-U sentence of ``blocks`` in a row: later roots attach to the first root."""
    out: list[str] = []
    offset, first_root = 0, 0
    for rows in blocks:
        for row in rows:
            word, head = int(row[0]) + offset, int(row[6])
            label = row[7]
            if head == 0 and first_root:
                head, label = first_root, "parataxis"
            elif head:
                head += offset
            else:
                first_root = word
            out.append("\t".join([str(word), *row[1:6], str(head), label, "_", "_"]))
        offset += len(rows)
    return f"# sent_id = {sent_id}\n" + "\n".join(out) + "\n\n"


def long_conllu(target: int, count: int) -> str:
    """``count`` sentences of 0.85–1.1 × ``target`` words (fewer when one test sentence is longer) joined
    from Wolof-WTB test."""
    text = (WOLOF / "wo_wtb-ud-test.conllu").read_text(encoding="utf-8")
    sentences = [word_rows(block) for block in text.split("\n\n") if block.strip()]
    out: list[str] = []
    current: list[list[list[str]]] = []
    for rows in sentences:
        total = sum(len(r) for r in current)
        if total >= 0.85 * target and total + len(rows) > 1.1 * target:  # the next one overshoots: close here
            out.append(joined(current, f"long-{target}-{len(out) + 1}"))
            current = []
        if len(out) == count:
            break
        current.append(rows)
    return "".join(out)


def setup(app: Any, models: Path, n: int) -> tuple[dict[int, list[int]], int]:
    """A treebank of joined sentences (n of ~100 words, 2 of ~300) with a round on ``models``."""
    with app.app_context():
        user = create_user(db.session, "bench", "bench-password")
        data = long_conllu(100, n) + long_conllu(300, 2)
        treebank = import_conllu(db.session, data=data.encode(), filename="long.conllu",
                                 treebank_name="wo long", split="pool", user=user).treebank
        db.session.add(TrainingRound(
            treebank_id=treebank.id, number=1, parsers=list(DEFAULT_PARSERS), tags="gold",
            ensemble=DEFAULT_METHOD, weights=[1.0] * len(DEFAULT_PARSERS), model_dir=str(models),
            user_id=user.id, finished_at=datetime.now(UTC)))
        db.session.commit()
        rows = db.session.execute(select(Sentence.id, Sentence.n_words).join(Document)
                                  .where(Document.treebank_id == treebank.id).order_by(Sentence.id)).all()
        by_length: dict[int, list[int]] = {100: [], 300: []}
        for sentence_id, words in rows:
            by_length[300 if words >= 300 else 100].append(int(sentence_id))
        return by_length, int(user.id)


EDITS = 4
"""Arcs an annotator fixes one after another in each sentence (the server bench)."""


def edit_sequence(bundle: Any, sentence: Any, edits: int) -> list[dict[str, Any]]:
    """The bodies of ``edits`` re-parse requests on ``sentence``: an annotator fixes the
    ensemble's wrong heads left to right, one more gold arc each time (the editor sends every
    human arc so far), and sends the tree shown before the edit."""
    _, combined = bundle.parse_with_ensemble([sentence])
    tree = combined[0]
    wrong = [w for w in range(1, len(sentence) + 1) if tree.heads[w] != sentence.heads[w]][:edits]
    previous = {"heads": [int(h) for h in tree.heads[1:]], "deprels": list(tree.deprels[1:])}
    return [{"constraints": [{"id": w, "head": int(sentence.heads[w]), "deprel": sentence.deprels[w]}
                             for w in wrong[:k]], "previous": previous} for k in range(1, len(wrong) + 1)]


def server_bench(app: Any, ids: list[int], models: Path, profile: bool) -> None:
    """Print median and p95 server ms of the re-parses of an edit sequence at ~100 words: the
    first edit and each later one (one more arc), as the app runs (the editor's warm-up request
    when it opens has the sentence parsed without constraints before the first edit; the last
    re-parse's member parses are reused, the transition members replay their last guided parse)
    and without any of it (the same run: the first edit cold, the members also parse the
    sentence unconstrained; ``CachedModels.earlier`` and ``GreedyDecoding._traced`` answering
    None): the later edits' ratio is the reuse's gain."""
    bundle = load_models(models)
    with app.app_context():
        sentences = load_sentences(db.session, ids, latest_versions(db.session, ids, "gold"))
    sequences = [edit_sequence(bundle, sentence, EDITS) for sentence in sentences]
    words = statistics.mean(len(s) for s in sentences)
    client = signed_in_client(app)
    warm = client.post(f"/api/sentences/{ids[0]}/reparse", json={"constraints": []})  # loads the models
    assert warm.status_code == 200, warm.json
    print(f"Wolof-WTB test joined, {len(ids)} sentences of {words:.1f} words (mean), nine members, "
          f"{EDITS} edits each (one more gold arc each time); server ms")
    print("| re-parse | median ms | p95 ms |")
    print("|---|---|---|")
    real_earlier, real_traced = CachedModels.earlier, GreedyDecoding._traced
    profiler = cProfile.Profile() if profile else None
    for reuse in (False, True, False, True):  # each twice, interleaved: the machine drifts
        if not reuse:
            CachedModels.earlier = lambda self, key, constraints: None  # type: ignore[method-assign]
            GreedyDecoding._traced = lambda self, key, constraints: None  # type: ignore[method-assign]
        app.extensions["arcvote.models"] = ModelCache()  # nothing parsed yet
        client.post(f"/api/sentences/{ids[0]}/reparse", json={"constraints": []})  # reload the models
        first: list[float] = []
        later: list[float] = []
        for sentence_id, bodies in zip(ids, sequences, strict=True):
            if reuse:  # as the editor does when it opens (reparse.js, warmReparse): not timed
                client.post(f"/api/sentences/{sentence_id}/reparse", json={"constraints": []})
            for k, body in enumerate(bodies):
                if profiler is not None and reuse and k:
                    profiler.enable()
                (later if k else first).extend(timed(client, [sentence_id], [body]))
                if profiler is not None:
                    profiler.disable()
        CachedModels.earlier = real_earlier  # type: ignore[method-assign]
        GreedyDecoding._traced = real_traced  # type: ignore[method-assign]
        kind = "with the last re-parse" if reuse else "decoding every member again"
        opening = "first edit after the editor's warm-up" if reuse else "first edit, cold"
        for label, times in ((opening, first), (f"later edits, {kind}", later)):
            times.sort()
            print(f"| {label} | {statistics.median(times):.0f} | "
                  f"{times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]:.0f} |")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(35)
        print(out.getvalue())


def preannotate(app: Any, sentence_ids: list[int], user_id: int) -> None:
    """Store the round's member and ensemble trees of the sentences (as a pre-annotation run)."""
    from app.models import User

    client = signed_in_client(app)
    for sentence_id in sentence_ids:
        reply = client.post(f"/api/sentences/{sentence_id}/reparse", json={"constraints": []})
        assert reply.status_code == 200, reply.json
        body = reply.json
        assert body is not None
        with app.app_context():
            user = db.session.get(User, user_id)
            assert user is not None
            for tree in [*body["members"], {**body["ensemble"], "name": "ensemble"}]:
                add_version(db.session, sentence_id=sentence_id, source=tree["name"], heads=tree["heads"],
                            deprels=tree["deprels"], scores=tree["scores"], user=user)
            db.session.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=10)
    parser.add_argument("--models", type=Path, default=Path(tempfile.gettempdir()) / "long-bench" / "models")
    parser.add_argument("--fast", action="store_true", help="train with the tests' cheap settings")
    parser.add_argument("--profile", action="store_true", help="cProfile the editing re-parses")
    parser.add_argument("--browser", action="store_true", help="time edits in Chromium too")
    parser.add_argument("--edits", type=int, default=8)
    parser.add_argument("--no-server", action="store_true", help="only the browser's timing")
    parser.add_argument("--profile-browser", action="store_true", help="where the page's time goes")
    options = parser.parse_args()
    long_sentences_browser.PROFILE_BROWSER = options.profile_browser
    models = trained(options.models / "9", list(DEFAULT_PARSERS), options.fast)
    with tempfile.TemporaryDirectory() as folder, threadpool_limits(limits=1, user_api="blas"):
        app = fresh_app(f"sqlite:///{Path(folder) / 'long.sqlite'}")
        by_length, user_id = setup(app, models, options.n)
        if not options.no_server:
            server_bench(app, by_length[100], models, options.profile)
        if options.browser:
            preannotate(app, [by_length[100][0], by_length[300][0]], user_id)
            long_sentences_browser.browser_bench(app, by_length, options.edits)


if __name__ == "__main__":
    main()
