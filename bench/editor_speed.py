"""Server time to open the sentence editor for a ~40-word sentence with 6 member trees.

Imports ``en_ewt-ud-dev.conllu`` from ``../shared/ud`` into a fresh database, moves the
sentence closest to 40 words into a pool, stores 6 member trees (perturbed copies of gold,
so members disagree), an ensemble tree with vote shares, a few annotation versions and
notes, then times N requests of the editor page (``/workspace/sentences/<id>``, which embeds
all editor data) and of its JSON (``/api/sentences/<id>``). Prints median and p90.

    .venv/bin/python bench/editor_speed.py [-n 50] [--database URL]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_speed import UD, fresh_app  # noqa: E402
from page_speed import print_timings, signed_in_client  # noqa: E402

from app.extensions import db  # noqa: E402
from app.models import Sentence, SentenceNote, SentenceState  # noqa: E402
from app.services.imports import import_conllu  # noqa: E402
from app.services.trees import add_version, latest_versions  # noqa: E402
from app.services.users import create_user  # noqa: E402

MEMBERS = ("graph1", "graph2", "eager", "eager-rtl", "hybrid", "neural")


def perturbed(heads: list[int], rng: random.Random) -> list[int]:
    """Gold heads with ~15% of the non-root words reattached to their grandparent."""
    out = list(heads)
    for i, head in enumerate(heads):
        if head > 0 and heads[head - 1] > 0 and rng.random() < 0.15:
            out[i] = heads[head - 1]
    return out


def seed(user_id: int, sentence_id: int) -> None:
    """Member, ensemble and annotation trees, a state and notes for one sentence."""
    from app.models import User

    user = db.session.get(User, user_id)
    assert user is not None
    gold = latest_versions(db.session, [sentence_id], "gold")[sentence_id]
    rng = random.Random(0)
    for name in MEMBERS:
        add_version(db.session, sentence_id=sentence_id, source=name, heads=perturbed(gold.heads, rng),
                    deprels=gold.deprels, user=user, scores=[rng.random() for _ in gold.heads])
    add_version(db.session, sentence_id=sentence_id, source="ensemble", heads=gold.heads,
                deprels=gold.deprels, user=user, scores=[rng.random() for _ in gold.heads])
    for version in range(3):
        add_version(db.session, sentence_id=sentence_id, source="annotation", heads=gold.heads,
                    deprels=gold.deprels, user=user, expected_version=version)
    db.session.add(SentenceState(sentence_id=sentence_id, status="in_progress", disagreement=0.3,
                                 reviewed_words=[1, 2, 3]))
    db.session.add_all(SentenceNote(sentence_id=sentence_id, body=f"note {i}", user_id=user_id)
                       for i in range(3))
    db.session.commit()


def main() -> None:
    """Print median and p90 server times of the editor page and its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--database", default=None, help="default: a temporary SQLite file")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        app = fresh_app(options.database or f"sqlite:///{Path(folder) / 'editor.sqlite'}")
        path = UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
        with app.app_context():
            user = create_user(db.session, "bench", "bench-password")
            import_conllu(db.session, data=path.read_bytes(), filename=path.name, treebank_name="EWT",
                          split="pool", user=user)
            db.session.commit()
            sentence = db.session.scalars(
                select(Sentence).order_by(func.abs(Sentence.n_words - 40), Sentence.id).limit(1)
            ).one()
            sentence_id, words = sentence.id, sentence.n_words
            seed(user.id, sentence_id)
        client = signed_in_client(app)
        pages = {
            f"editor page ({words} words, {len(MEMBERS)} members)": f"/workspace/sentences/{sentence_id}",
            "editor JSON (GET /api/sentences/<id>)": f"/api/sentences/{sentence_id}",
            "history JSON": f"/api/sentences/{sentence_id}/history",
        }
        print_timings(client, pages, options.n, app.config["SQLALCHEMY_DATABASE_URI"])


if __name__ == "__main__":
    main()
