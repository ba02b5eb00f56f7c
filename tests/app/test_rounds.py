"""Round records: what a round trained on, how it scored (dev or a held-out slice), what it
changed; the rounds page, its CSV and the list of changed sentences."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.parser_models import TrainingRound
from app.services.demo import setup_demo
from app.services.parsing_adapter import load_sentences
from app.services.preannotate import (
    HELD_OUT_EVERY,
    MIN_HELD_OUT,
    MIN_TREES_TO_HOLD_OUT,
    held_out_slice,
    training_data,
)
from app.services.rounds import CHANGED_IDS_CAP, csv_header, finish_round, round_rows, rounds_csv
from app.services.trees import add_version, latest_versions
from app.services.workspace import set_state
from parsing.pipeline import load_models, read_manifest
from parsing.scorer.metrics import evaluate
from tests.app.helpers import import_without_dev, run_round


def ids_of(session: Session, treebank: Treebank, split: str) -> list[int]:
    return list(session.scalars(select(Sentence.id).join(Document).where(
        Document.treebank_id == treebank.id, Document.split == split).order_by(Sentence.id)))


def review(session: Session, sentence_id: int, user: User) -> None:
    """Give the sentence a corrected tree (a chain: every word attached to the next, the last to ROOT)."""
    sentence = session.get(Sentence, sentence_id)
    assert sentence is not None
    n = sentence.n_words
    add_version(session, sentence_id=sentence_id, source="annotation", heads=[*range(2, n + 1), 0],
                deprels=["dep"] * (n - 1) + ["root"], user=user)
    set_state(session, sentence, user=user, status="reviewed")


# -- the held-out slice ---------------------------------------------------------------------------

@pytest.mark.parametrize("ids", [
    list(range(1, 41)), list(range(101, 113)), [3, 17, 25, 31, 44, 58, 62, 79, 83, 96]])
def test_held_out_slice_is_fixed_and_big_enough(ids: list[int]) -> None:
    held = held_out_slice(ids)
    assert set(held) <= set(ids) and held == sorted(held)
    assert {sid for sid in ids if sid % HELD_OUT_EVERY == 0} <= set(held)
    assert len(held) == max(MIN_HELD_OUT, sum(sid % HELD_OUT_EVERY == 0 for sid in ids))
    shuffled = list(ids)
    random.Random(7).shuffle(shuffled)
    assert held_out_slice(shuffled) == held  # the order the ids come in does not matter
    grown = held_out_slice([*ids, max(ids) + 1, max(ids) + 3])
    assert {sid for sid in held if sid % HELD_OUT_EVERY == 0} <= set(grown)  # stays held out


def test_too_few_trees_hold_nothing_out() -> None:
    assert held_out_slice(list(range(1, MIN_TREES_TO_HOLD_OUT))) == []
    assert held_out_slice(list(range(1, MIN_TREES_TO_HOLD_OUT + 1))) != []


def test_training_data_without_dev_holds_out_and_never_trains_on_it(session: Session, user: User) -> None:
    treebank = import_without_dev(session, user)
    pool = ids_of(session, treebank, "pool")
    review(session, pool[0], user)
    data = training_data(session, treebank)
    candidates = ids_of(session, treebank, "train") + [pool[0]]
    assert data.evaluation_source == "held-out" and data.dev == []
    assert data.held_out_ids == held_out_slice(candidates)
    assert not set(data.held_out_ids) & set(data.train_ids)
    assert sorted(data.train_ids + data.held_out_ids) == sorted(candidates)
    assert len(data.train) == len(data.train_ids) == data.gold + data.corrected
    assert data.corrected == (0 if pool[0] in data.held_out_ids else 1)
    words = dict(session.execute(
        select(Sentence.id, Sentence.n_words).where(Sentence.id.in_(data.train_ids))).all())
    assert data.annotated_tokens == sum(words.values())
    held_words = [len(s) for s in data.evaluation]
    assert held_words == [words_of(session, sid) for sid in data.held_out_ids]


def test_too_few_trees_without_dev_are_all_trained_on(session: Session, user: User) -> None:
    treebank = import_without_dev(session, user, train=MIN_TREES_TO_HOLD_OUT - 1, pool=2)
    data = training_data(session, treebank)
    assert data.evaluation_source is None and data.held_out_ids == [] and data.evaluation == []
    assert data.train_ids == ids_of(session, treebank, "train")


def words_of(session: Session, sentence_id: int) -> int:
    return session.get(Sentence, sentence_id).n_words  # type: ignore[union-attr]


# -- rounds run as jobs ----------------------------------------------------------------------------

def test_round_without_dev_is_scored_on_the_held_out_slice(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    treebank = import_without_dev(session, user)
    pool, train = ids_of(session, treebank, "pool"), ids_of(session, treebank, "train")
    # The held-out slice depends on ids (PostgreSQL does not reuse them between tests): review a
    # pool sentence that stays out of it, so it is trained on as a corrected sentence.
    reviewed = next(sid for sid in pool[1:] if sid not in held_out_slice([*train, sid]))
    review(session, reviewed, user)
    session.commit()
    round_ = run_round(app, session, user, treebank, ["graph1", "eager"])
    expected = training_data(session, treebank)
    assert round_.evaluation == "held-out" and round_.held_out_ids == expected.held_out_ids
    assert (round_.gold_sentences, round_.corrected_sentences, round_.automatic_sentences) == (
        expected.gold, expected.corrected, 0)
    assert round_.self_training is None and round_.corrected_sentences == 1
    assert round_.train_sentences == read_manifest(round_.model_dir)["train_sentences"]  # what it trained on
    assert round_.train_sentences == len(expected.train)
    assert round_.annotated_tokens == expected.annotated_tokens
    assert round_.started_at is not None and round_.finished_at is not None
    assert round_.finished_at >= round_.started_at
    # the stored scores are the CoNLL 2018 scores of the round's own models on the held-out trees
    held_ids = round_.held_out_ids or []
    held = load_sentences(session, held_ids, latest_versions(session, held_ids, "latest"))
    members, combined = load_models(round_.model_dir).parse_with_ensemble(held)
    assert round_.scores is not None and set(round_.scores["members"]) == {"graph1", "eager"}
    for name, parses in members.items():
        las = 100 * evaluate(held, parses).las.f1
        assert round_.scores["members"][name]["las"] == pytest.approx(las, abs=0.01)
    assert round_.scores["ensemble"]["uas"] == pytest.approx(100 * evaluate(held, combined).uas.f1, abs=0.01)
    # each score with its bootstrap interval and the per-sentence counts that pair it with the next round
    ensemble = round_.scores["ensemble"]
    assert ensemble["las_ci"][0] <= ensemble["las"] <= ensemble["las_ci"][1] < 100.01
    assert ensemble["uas_ci"][0] <= ensemble["uas"] <= ensemble["uas_ci"][1]
    assert sum(ensemble["per_sentence"]["words"]) == evaluate(held, combined).words
    counts = ensemble["per_sentence"]
    assert 100 * sum(counts["las"]) / sum(counts["words"]) == pytest.approx(ensemble["las"], abs=0.01)
    assert round_.scores["sentence_ids"] == held_ids
    assert round_.compared_sentences == 0 and round_.changed_sentences == 0  # nothing to compare with


def test_second_round_counts_the_sentences_it_changed(
    app: Flask, session: Session, user: User, fast: Path
) -> None:
    setup_demo(session, user=user, sentences=50)  # 30 train, 10 dev, 10 pool
    treebank = session.scalars(select(Treebank)).one()
    first = run_round(app, session, user, treebank, ["graph1", "eager", "hybrid"])
    assert first.evaluation == "dev" and first.dev_sentences == 10 and first.held_out_ids == []
    assert set(first.scores["members"]) == {"graph1", "eager", "hybrid"}  # type: ignore[index]
    pool = ids_of(session, treebank, "pool")
    review(session, pool[0], user)
    session.commit()
    second = run_round(app, session, user, treebank, ["eager"])  # another member set: trees change
    assert (second.number, second.corrected_sentences, second.gold_sentences) == (2, 1, 30)
    assert second.annotated_tokens > first.annotated_tokens
    changed = []
    for sentence_id in pool[1:]:
        versions = session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "ensemble")
            .order_by(TreeVersion.version)).all()
        assert len(versions) == 2
        if (versions[0].heads, versions[0].deprels) != (versions[1].heads, versions[1].deprels):
            changed.append(sentence_id)
    assert second.compared_sentences == len(pool) - 1
    assert second.changed_sentences == len(changed) and second.changed_ids == changed
    assert changed, "a one-member round should re-parse some sentence differently from three members"


def test_changed_ids_are_capped_but_the_count_is_not() -> None:
    round_ = TrainingRound()
    finish_round(round_, compared=CHANGED_IDS_CAP + 50, changed=list(range(CHANGED_IDS_CAP + 20)))
    assert round_.changed_sentences == CHANGED_IDS_CAP + 20
    assert round_.changed_ids == list(range(CHANGED_IDS_CAP))
    assert round_.finished_at is not None


# -- the page, the CSV, the changed sentences (constructed rounds, no training) --------------------

@pytest.fixture
def recorded(session: Session, logged_in: FlaskClient) -> Callable[..., TrainingRound]:
    """Factory: a finished round (started by ``ana``, who is signed in) of the demo treebank with
    the given scores and counts."""
    user = session.scalars(select(User)).one()
    setup_demo(session, user=user, sentences=50)
    treebank = session.scalars(select(Treebank)).one()
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

    def make(number: int, *, las: float, tokens: int, evaluation: str = "held-out",
             changed: list[int] | None = None, parsers: tuple[str, ...] = ("graph1", "eager")
             ) -> TrainingRound:
        scores = {"members": {name: {"uas": las + 5 + i, "las": las - i} for i, name in enumerate(parsers)},
                  "ensemble": {"uas": las + 6, "las": las + 1}}
        round_ = TrainingRound(
            treebank_id=treebank.id, number=number, parsers=list(parsers), tags="gold", ensemble="vote-power",
            model_dir="/nowhere", user_id=user.id, started_at=start + timedelta(hours=number),
            finished_at=start + timedelta(hours=number, seconds=75), gold_sentences=30,
            corrected_sentences=number, annotated_tokens=tokens, evaluation=evaluation,
            held_out_ids=[10, 20, 30] if evaluation == "held-out" else [], dev_sentences=10, scores=scores,
            compared_sentences=10, changed_sentences=len(changed or []), changed_ids=changed or [])
        session.add(round_)
        session.commit()
        return round_
    return make


def test_rounds_page_lists_every_round_with_curves(
    logged_in: FlaskClient, session: Session, recorded: Callable[..., TrainingRound]
) -> None:
    pool = ids_of(session, session.scalars(select(Treebank)).one(), "pool")
    recorded(1, las=61.25, tokens=400)
    second = recorded(2, las=64.5, tokens=520, changed=pool[:3])
    page = logged_in.get(f"/treebanks/{second.treebank_id}/rounds")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert html.count("<polyline") == 2 * 3  # two charts, a line each for the ensemble and two members
    assert 'id="held-out-note"' in html and "multiple of 10" in html
    assert "65.5" in html and "62.2" in html  # ensemble LAS of each round, one decimal
    assert "1 min 15 s" in html and '<td class="num">30</td><td class="num">2</td>' in html
    assert f'/treebanks/{second.treebank_id}/rounds/2/changed">3</a> of 10' in html
    assert "ana" in html


def test_empty_state_says_how_to_start(logged_in: FlaskClient, session: Session) -> None:
    setup_demo(session, user=session.scalars(select(User)).one(), sentences=50)
    session.commit()
    treebank = session.scalars(select(Treebank)).one()
    html = logged_in.get(f"/treebanks/{treebank.id}/rounds").get_data(as_text=True)
    assert "No training round yet" in html and "Train and pre-annotate" in html and "<svg" not in html
    assert f'href="/workspace/treebanks/{treebank.id}"' in html
    for linking in (f"/workspace/treebanks/{treebank.id}", f"/treebanks/{treebank.id}/sentences"):
        assert f'href="/treebanks/{treebank.id}/rounds"' in logged_in.get(linking).get_data(as_text=True)


def test_rounds_csv_has_a_row_per_round_and_every_score(
    logged_in: FlaskClient, session: Session, recorded: Callable[..., TrainingRound]
) -> None:
    first = recorded(1, las=61.25, tokens=400)
    recorded(2, las=64.5, tokens=520, evaluation="dev", parsers=("graph1", "hybrid"))
    response = logged_in.get(f"/treebanks/{first.treebank_id}/rounds.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"] == 'attachment; filename="Turkish_demo-rounds.csv"'
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    header = list(rows[0])
    treebank = session.get(Treebank, first.treebank_id)
    assert treebank is not None and header == csv_header(round_rows(session, treebank))
    las_columns = [c for c in header if c.endswith("_las")]
    assert las_columns == ["ensemble_las", "graph1_las", "eager_las", "hybrid_las"]
    assert [r["round"] for r in rows] == ["1", "2"]
    assert rows[0]["ensemble_las"] == "62.25" and rows[0]["eager_las"] == "60.25"
    assert rows[0]["hybrid_las"] == ""
    assert rows[1]["hybrid_uas"] == "70.50" and rows[1]["eager_uas"] == ""
    assert rows[0]["held_out_ids"] == "10 20 30" and rows[1]["evaluation"] == "dev"
    assert rows[1]["evaluation_sentences"] == "10" and rows[0]["evaluation_sentences"] == "3"
    assert rows[0]["duration_s"] == "75.0" and rows[0]["started_by"] == "ana"
    assert rows[0]["started_at"] == "2026-11-20T10:00:00+00:00"
    assert rows[0]["members"] == "graph1 eager" and rows[0]["annotated_tokens"] == "400"


def test_csv_quotes_what_needs_quoting(session: Session, recorded: Callable[..., TrainingRound]) -> None:
    round_ = recorded(1, las=50.0, tokens=10)
    round_.self_training = {"source": "ensemble", "select": "agreement, k=3"}
    session.flush()
    text = rounds_csv(round_rows(session, session.get(Treebank, round_.treebank_id)))  # type: ignore[arg-type]
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["self_training"] == '{"select": "agreement, k=3", "source": "ensemble"}'


def test_changed_sentences_link_to_the_editor(
    logged_in: FlaskClient, session: Session, recorded: Callable[..., TrainingRound]
) -> None:
    pool = ids_of(session, session.scalars(select(Treebank)).one(), "pool")
    round_ = recorded(1, las=50.0, tokens=10, changed=[pool[4], pool[1]])
    html = logged_in.get(f"/treebanks/{round_.treebank_id}/rounds/1/changed").get_data(as_text=True)
    links = [html.index(f'href="/workspace/sentences/{sid}"') for sid in (pool[4], pool[1])]
    assert links == sorted(links)  # in the stored order
    assert html.count('href="/workspace/sentences/') == 2
    assert logged_in.get(f"/treebanks/{round_.treebank_id}/rounds/9/changed").status_code == 404
    assert logged_in.get("/treebanks/999999/rounds").status_code == 404


@pytest.mark.parametrize("path", [
    "/treebanks/1/rounds", "/treebanks/1/rounds.csv", "/treebanks/1/rounds/1/changed"])
def test_rounds_pages_need_a_login(client: FlaskClient, app: Flask, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302 and "/auth/login" in response.headers["Location"]


def test_unscored_and_unrecorded_rounds_say_so(
    logged_in: FlaskClient, session: Session, recorded: Callable[..., TrainingRound]
) -> None:
    scored = recorded(1, las=50.0, tokens=10)
    user_id, treebank_id = scored.user_id, scored.treebank_id
    session.add_all([  # round 2 ran before migration 0005; round 3 had too few trees and no dev
        TrainingRound(treebank_id=treebank_id, number=2, parsers=["graph1"], tags="gold", model_dir="/x",
                      user_id=user_id),
        TrainingRound(treebank_id=treebank_id, number=3, parsers=["graph1"], tags="gold", model_dir="/x",
                      user_id=user_id, started_at=datetime(2026, 11, 21, tzinfo=UTC),
                      finished_at=datetime(2026, 11, 21, 0, 0, 3, tzinfo=UTC), compared_sentences=0,
                      changed_sentences=0)])
    session.commit()
    html = logged_in.get(f"/treebanks/{treebank_id}/rounds").get_data(as_text=True)
    assert html.count("not recorded") == 1 and html.count('<span class="muted">not scored</span>') == 1
    assert "fewer than 10 training trees" in html and "not finished" not in html
    assert html.count("<polyline") == 2 * 3  # unscored rounds add no point
