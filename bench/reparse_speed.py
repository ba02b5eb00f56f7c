"""Server time of a re-parse around the annotator's arcs (POST /api/sentences/<id>/reparse).

Trains (once, into ``--models``) the demo's three members (graph1, eager, hybrid) and all nine
(``DEFAULT_PARSERS``) with the round's default ensemble on UD Wolof-WTB train (dev tunes it),
imports Wolof-WTB test into a fresh database as two treebanks, one per member set, each
with a finished round on its models, and picks the ``-n`` test sentences closest to 40
words. For each sentence an annotator "fixes" 1–3 arcs (words where the ensemble's tree
differs from gold get their gold head and label; random other words when fewer are wrong),
and the endpoint is timed with those arcs as constraints (the models are loaded by one
request first, as in a running server). Twice: "first" is a sentence's first re-parse (every
member parses it without and then under the constraints); "editing" is every later one (the
web process keeps a sentence's unconstrained parses, and the editor asks for them when it
opens, so an annotator's edits all cost this). Prints median and p95 per member set, and per
member the median time of its part (parse + constrained re-parse of one sentence), to show
which members dominate.

``--fast`` trains with the tests' cheap settings (2 epochs; parsing costs the same per
sentence, but the weights differ). Run on the 2-core machine while nothing else runs:

    PYTHONPATH=. .venv/bin/python bench/reparse_speed.py [-n 20] [--models /tmp/reparse-bench] [--fast]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_speed import UD, fresh_app  # noqa: E402
from page_speed import signed_in_client  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Document, Sentence, Treebank
from app.parser_models import TrainingRound
from app.services.imports import import_conllu  # noqa: E402
from app.services.parsing_adapter import load_sentences  # noqa: E402
from app.services.preannotate import DEFAULT_PARSERS, FAST_MEMBER_PARAMS  # noqa: E402
from app.services.trees import latest_versions  # noqa: E402
from app.services.users import create_user  # noqa: E402
from parsing.conllu_io import read_conllu, to_sentence  # noqa: E402
from parsing.constraints import Constraints  # noqa: E402
from parsing.ensemble.registry import DEFAULT_METHOD  # noqa: E402
from parsing.pipeline import MANIFEST, ModelBundle, load_models, train_models  # noqa: E402
from parsing.types import Sentence as ParsingSentence  # noqa: E402

WOLOF = Path(os.environ.get("ARCVOTE_UD_ROOT") or UD) / "UD_Wolof-WTB"
"""``../shared/ud`` beside the repository, or ``$ARCVOTE_UD_ROOT`` (a git worktree elsewhere)."""
MEMBER_SETS = {"demo (3)": ["graph1", "eager", "hybrid"], "default (9)": list(DEFAULT_PARSERS)}


def trained(folder: Path, names: list[str], fast: bool) -> Path:
    """``folder`` with the members ``names`` and the default ensemble (trained if missing)."""
    if not (folder / MANIFEST).is_file():
        train = [to_sentence(raw) for raw in read_conllu(WOLOF / "wo_wtb-ud-train.conllu")]
        dev = [to_sentence(raw) for raw in read_conllu(WOLOF / "wo_wtb-ud-dev.conllu")]
        print(f"training {', '.join(names)} into {folder} ...", file=sys.stderr)
        train_models(train, dev, folder, names=names, ensemble=DEFAULT_METHOD,
                     params=FAST_MEMBER_PARAMS if fast else None)
    return folder


def pick_constraints(bundle: ModelBundle, sentence: ParsingSentence, rng: random.Random
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """1–3 arcs an annotator fixes (gold where the ensemble is wrong) and the ensemble's tree."""
    _, combined = bundle.parse_with_ensemble([sentence])
    tree = combined[0]
    n = len(sentence)
    wrong = [w for w in range(1, n + 1) if tree.heads[w] != sentence.heads[w]]
    count = rng.randint(1, 3)
    words = rng.sample(wrong, min(count, len(wrong)))
    words += rng.sample([w for w in range(1, n + 1) if w not in words], count - len(words))
    chosen = {w: int(sentence.heads[w]) for w in words}
    Constraints(chosen).validate(n)  # gold arcs always fit one tree
    previous = {"heads": [int(h) for h in tree.heads[1:]], "deprels": list(tree.deprels[1:])}
    return [{"id": w, "head": h, "deprel": sentence.deprels[w]} for w, h in chosen.items()], previous


def member_times(bundle: ModelBundle, sentences: list[ParsingSentence],
                 constraints: list[Constraints]) -> dict[str, float]:
    """Median milliseconds per sentence of each member's parse plus constrained parse."""
    times: dict[str, float] = {}
    for name, parser in bundle.parsers.items():
        each = []
        for sentence, forced in zip(sentences, constraints, strict=True):
            start = time.perf_counter()
            parser.predict([sentence])
            parser.predict_constrained([sentence], [forced])
            each.append((time.perf_counter() - start) * 1000)
        times[name] = statistics.median(each)
    return times


def main() -> None:
    """Print median and p95 server milliseconds per member set."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--models", type=Path, default=Path(tempfile.gettempdir()) / "reparse-bench")
    parser.add_argument("--fast", action="store_true", help="train with the tests' cheap settings")
    parser.add_argument("--database", default=None, help="default: a temporary SQLite file")
    options = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder, threadpool_limits(limits=1, user_api="blas"):
        app = fresh_app(options.database or f"sqlite:///{Path(folder) / 'reparse.sqlite'}")
        path = WOLOF / "wo_wtb-ud-test.conllu"
        plans = {}
        with app.app_context():
            user = create_user(db.session, "bench", "bench-password")
            for label, names in MEMBER_SETS.items():
                models = trained(options.models / str(len(names)), names, options.fast)
                treebank = import_conllu(db.session, data=path.read_bytes(), filename=path.name,
                                         treebank_name=f"wo {label}", split="pool", user=user).treebank
                db.session.add(TrainingRound(
                    treebank_id=treebank.id, number=1, parsers=names, tags="gold", ensemble=DEFAULT_METHOD,
                    weights=[1.0] * len(names), model_dir=str(models), user_id=user.id,
                    finished_at=datetime.now(UTC)))
                db.session.commit()
                plans[label] = plan(treebank, load_models(models), options.n, rng)
        client = signed_in_client(app)
        print(f"Wolof-WTB test, {options.n} sentences of ~40 words, 1-3 constraints each; server ms")
        print("| members | words (mean) | re-parse | median ms | p95 ms | slowest members (median ms each) |")
        print("|---|---|---|---|---|---|")
        for label, (ids, bodies, words, per_member) in plans.items():
            warm = client.post(f"/api/sentences/{ids[0]}/reparse", json={"constraints": []})  # loads models
            assert warm.status_code == 200, warm.json
            slowest = ", ".join(f"{name} {ms:.0f}" for name, ms in
                                sorted(per_member.items(), key=lambda item: -item[1])[:4])
            for kind in ("first", "editing"):
                times = sorted(timed(client, ids, bodies))
                print(f"| {label} | {words:.1f} | {kind} | {statistics.median(times):.0f} | "
                      f"{times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]:.0f} | {slowest} |")


def timed(client: Any, ids: list[int], bodies: list[dict[str, Any]]) -> list[float]:
    """Milliseconds of one re-parse request per sentence."""
    times = []
    for sentence_id, body in zip(ids, bodies, strict=True):
        start = time.perf_counter()
        response = client.post(f"/api/sentences/{sentence_id}/reparse", json=body)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (sentence_id, response.status_code, response.json)
    return times


def plan(treebank: Treebank, bundle: ModelBundle, n: int, rng: random.Random
         ) -> tuple[list[int], list[dict[str, Any]], float, dict[str, float]]:
    """The ``n`` sentences closest to 40 words, their request bodies, mean length, member times."""
    ids = list(db.session.scalars(
        select(Sentence.id).join(Document).where(Document.treebank_id == treebank.id)
        .order_by(func.abs(Sentence.n_words - 40), Sentence.id).limit(n)))
    sentences = load_sentences(db.session, ids, latest_versions(db.session, ids, "gold"))
    bodies, constraints = [], []
    for sentence in sentences:
        forced, previous = pick_constraints(bundle, sentence, rng)
        bodies.append({"constraints": forced, "previous": previous})
        constraints.append(Constraints({c["id"]: c["head"] for c in forced}))
    words = statistics.mean(len(s) for s in sentences)
    return ids, bodies, words, member_times(bundle, sentences, constraints)


if __name__ == "__main__":
    main()
