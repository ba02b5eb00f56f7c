"""The demo's scoreboard is not empty after `make run`: `demo preannotate` parses the demo's test
split (gold trees nobody trained or tuned on) beside its pool (issue #16)."""

from __future__ import annotations

import json
from pathlib import Path

from flask.testing import FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, User
from app.services.demo import setup_demo


def test_demo_preannotation_scores_every_parser_on_the_test_split(
    runner: FlaskCliRunner, session: Session, user: User, fast: Path
) -> None:
    counts = setup_demo(session, user=user, sentences=50, test_sentences=8)
    assert counts == {"train": 30, "dev": 10, "pool": 10, "test": 8}
    session.commit()
    done = runner.invoke(args=["demo", "preannotate", "--user", "ana", "--parsers", "graph1,eager"])
    assert done.exit_code == 0 and "parsed 18 sentences" in done.output, done.output
    shown = runner.invoke(args=["treebank", "scoreboard", "Turkish demo", "--split", "test", "--json",
                                "--user", "ana"])
    assert shown.exit_code == 0, shown.output
    board = json.loads(shown.output)
    assert board["against"] == "gold"
    assert set(board["sources"]) == {"ensemble", "oracle", "graph1", "eager"}
    test_words = sum(session.scalars(select(Sentence.n_words).join(Document).where(Document.split == "test")))
    assert all(source["words"] == test_words for source in board["sources"].values())
    assert board["sources"]["oracle"]["UAS"] >= max(board["sources"][n]["UAS"] for n in ("graph1", "eager"))
