"""Shared by the browser tests: the demo pool pre-annotated straight in the database (no
training), and reading the editor's state in the page.

:func:`store_pool_trees` gives each pool sentence of the 50-sentence demo treebank a
``graph1`` tree (the demo's gold tree), an ``eager`` tree (gold with one leaf moved under the
root word), the ``ensemble`` tree (gold, vote share 0.5 where the two disagree) and a
disagreement score, all by ``bo``, as a pre-annotation run would store them.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, SentenceState, Treebank, User
from app.services import DbSession
from app.services.demo import DEMO_NAME, demo_file, setup_demo
from app.services.imports import import_conllu
from app.services.trees import add_version
from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu


@dataclass(frozen=True)
class PoolTrees:
    treebank_id: int
    pool: list[int]
    """Pool sentence ids in document order (the queue's ``position`` order)."""
    ensemble: dict[int, tuple[list[int], list[str]]]
    """Sentence id → the ensemble's (heads, deprels)."""
    bo: User
    """The user who 'ran' the pre-annotation."""


def leaves(heads: list[int]) -> list[int]:
    """Words nothing attaches to and that do not attach to the root word (re-attaching them is safe)."""
    root = heads.index(0) + 1
    return [w for w in range(1, len(heads) + 1) if w not in heads and heads[w - 1] not in (0, root)]


def store_pool_trees(session: DbSession, ana: User) -> PoolTrees:
    """Import the demo (as ``ana``), add user ``bo`` and the pool's trees; flushes, no commit."""
    bo = User(username="bo", password_hash="x")
    session.add(bo)
    setup_demo(session, user=ana, sentences=50)
    source = demo_file()
    gold = {s.sent_id: s for s in parse_conllu(decode_utf8(source.read_bytes(), source=source.name),
                                                source=source.name)[:50]}
    treebank_id = session.scalars(select(Treebank.id).where(Treebank.name == DEMO_NAME)).one()
    rows = session.execute(
        select(Sentence.id, Sentence.sent_id).join(Document)
        .where(Document.treebank_id == treebank_id, Document.split == "pool")
        .order_by(Document.position, Sentence.position)).all()
    ensemble: dict[int, tuple[list[int], list[str]]] = {}
    for sentence_id, sent_id in rows:
        words = gold[sent_id].words
        heads, deprels = [int(w[6]) for w in words], [w[7] for w in words]
        eager_heads = list(heads)
        if leaves(heads):
            eager_heads[leaves(heads)[0] - 1] = heads.index(0) + 1
        for name, member_heads in (("graph1", heads), ("eager", eager_heads)):
            add_version(session, sentence_id=sentence_id, source=name, heads=member_heads,
                        deprels=deprels, user=bo)
        shares = [1.0 if a == b else 0.5 for a, b in zip(heads, eager_heads, strict=True)]
        add_version(session, sentence_id=sentence_id, source="ensemble", heads=heads, deprels=deprels,
                    user=bo, scores=shares)
        disputed = sum(a != b for a, b in zip(heads, eager_heads, strict=True))
        session.add(SentenceState(sentence_id=sentence_id, status="todo",
                                  disagreement=disputed / len(heads) / 2))
        ensemble[sentence_id] = (heads, deprels)
    session.flush()
    return PoolTrees(treebank_id, [sentence_id for sentence_id, _ in rows], ensemble, bo)


def import_one_sentence(session: DbSession, conllu: str, treebank_name: str) -> tuple[User, int]:
    """Import ``conllu`` (one sentence) as the pool of a new treebank owned by ``ana``; returns
    ``ana`` and the sentence's id (flushes, no commit)."""
    ana = session.scalars(select(User).where(User.username == "ana")).one()
    import_conllu(session, data=conllu.encode(), filename=f"{treebank_name}.conllu",
                  treebank_name=treebank_name, split="pool", user=ana)
    sentence_id = session.scalars(select(Sentence.id).join(Document).join(Treebank)
                                  .where(Treebank.name == treebank_name)).one()
    return ana, int(sentence_id)


def import_demo_test_split(app: Flask, treebank_name: str, sentences: int = 40) -> int:
    """A treebank owned by ``ana`` with the demo file's first ``sentences`` sentences as its test
    split (gold trees); its id."""
    source = demo_file()
    text = decode_utf8(source.read_bytes(), source=source.name)
    chosen = parse_conllu(text, source=source.name)[:sentences]
    with app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        result = import_conllu(db.session, data=format_conllu(chosen).encode(), filename="test.conllu",
                               treebank_name=treebank_name, split="test", user=ana)
        db.session.commit()
        return result.treebank.id


def block_tree(n: int, root: int) -> tuple[list[int], list[str]]:
    """A long sentence's tree in blocks of ten words: each block's 5th word (or the last word)
    heads its block and attaches to word ``root``, the root. ``(heads, labels)`` of words 1..n."""
    heads, labels = [], []
    for word in range(1, n + 1):
        block_head = min((word - 1) // 10 * 10 + 5, n)
        if word == root:
            heads.append(0)
            labels.append("root")
        elif word == block_head:
            heads.append(root)
            labels.append("obl")
        else:
            heads.append(block_head)
            labels.append("det" if word % 2 else "amod")
    return heads, labels


def committed_pool_trees(app: Flask) -> PoolTrees:
    """:func:`store_pool_trees` for the live app's user ``ana``, committed."""
    with app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        stored = store_pool_trees(db.session, ana)
        db.session.commit()
        return stored


KEY_TIME = """(key) => {
  const tree = document.querySelector("#tree");
  const start = performance.now();
  tree.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
  void document.body.offsetHeight;  // the style and layout the key caused, too
  return performance.now() - start;
}"""
"""Milliseconds one key takes in the editor (``page.evaluate(KEY_TIME, "j")``)."""


def key_times(page: Any, keys: tuple[str, ...], rounds: int) -> tuple[dict[str, float], dict[str, float]]:
    """Press ``keys`` in turn ``rounds`` times: each key's ms in the least disturbed round, and its median.

    The least disturbed round is the one whose slowest key was fastest: another process on a
    shared machine (CI runs on one) or a garbage collection only ever adds time, so that round
    shows the keys' own work (``timeit`` takes the fastest repeat for the same reason). A key
    pressed twice in a round counts at its slower press. bench/long_sentences.py reports the
    medians on a quiet machine.
    """
    runs: list[dict[str, float]] = []
    for _ in range(rounds):
        run: dict[str, float] = {}
        for key in keys:
            run[key] = max(run.get(key, 0.0), page.evaluate(KEY_TIME, key))
        runs.append(run)
    best = min(runs, key=lambda run: max(run.values()))
    medians = {key: round(statistics.median(run[key] for run in runs), 1) for key in best}
    return {key: round(value, 1) for key, value in best.items()}, medians


def editor_state(page: Any) -> dict[str, Any]:
    """The editor's current heads, labels, version, selection and words (``window.arcvoteEditor``)."""
    state: dict[str, Any] = page.evaluate("""() => { const S = window.arcvoteEditor;
        return {heads: S.heads, deprels: S.deprels, version: S.version, selected: S.selected,
                pending: S.pending, dirty: S.dirty, words: S.words.map((w) => w.form)}; }""")
    return state


def open_editor(page: Any, sentence_id: int) -> dict[str, Any]:
    """Open the editor of ``sentence_id`` and wait for its tree; its state."""
    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#tree svg")
    return editor_state(page)


def queue_listed(page: Any) -> list[int]:
    """The sentence ids the queue page lists, in order."""
    hrefs = page.locator("ol.queue li a").evaluate_all("links => links.map((a) => a.pathname)")
    return [int(href.rsplit("/", 1)[1]) for href in hrefs]


def submit_preannotate(page: Any, button: str, seconds: float = 90.0) -> dict[str, Any]:
    """Click ``button`` (a selector) of a pre-annotation form, wait until the job it posted ends
    and the queue page has reloaded itself to show the outcome (``static/js/jobs.js`` does so
    once it sees the job done: a ``goto`` before that reload was aborted by it), and return that
    job (``GET /jobs/<id>``; asserted done)."""
    page.evaluate("window.awaitingReload = true")  # a reload gives the page a fresh window
    with page.expect_response(lambda response: response.url.endswith("/preannotate")) as posted:
        page.click(button)
    assert posted.value.status == 202, posted.value.json()
    job_id = posted.value.json()["job"]["id"]  # the page shows the previous job until this one starts
    deadline = time.monotonic() + seconds
    while (state := page.request.get(f"/jobs/{job_id}").json())["state"] not in ("done", "failed"):
        assert time.monotonic() < deadline, state
        time.sleep(0.3)
    assert state["state"] == "done", state
    page.wait_for_function("() => window.awaitingReload !== true", timeout=15_000)
    page.wait_for_load_state()
    job: dict[str, Any] = state
    return job


def import_raw_text(app: Flask, treebank_name: str, text: str, filename: str = "raw.txt") -> list[int]:
    """Import ``text`` into the pool of ``treebank_name`` as ana; the new sentences' ids, in order."""
    from app.services.imports import import_text

    with app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        result = import_text(db.session, data=text.encode(), filename=filename, treebank_name=treebank_name,
                             user=ana)
        db.session.commit()
        return list(db.session.scalars(select(Sentence.id).where(Sentence.document_id == result.document.id)
                                       .order_by(Sentence.position)))
