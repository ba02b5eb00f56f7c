"""Archive, restore and delete: owner only, with the name typed to confirm."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from sqlalchemy import func, select, update

from app.extensions import db
from app.job_models import Job
from app.models import Document, Membership, Sentence, Treebank, TreeVersion
from app.parser_models import TrainingRound
from app.team_models import AuditEvent
from tests.app.team_helpers import TREEBANK, build_team, client_as


def _count(app: Flask, model: type) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model)) or 0


def test_archive_hides_and_freezes_until_restored(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
    owner, viewer = client_as(app, team.users["owner"]), client_as(app, team.users["viewer"])
    url = f"/treebanks/{team.treebank_id}"
    assert owner.post(f"{url}/archive", data={"confirm": "wrong"}).status_code == 422
    assert owner.post(f"{url}/archive", data={"confirm": TREEBANK}).status_code == 302
    assert viewer.get(f"{url}/sentences").status_code == 404
    assert "team tb" not in viewer.get("/treebanks/").get_data(as_text=True)
    listing = owner.get("/treebanks/").get_data(as_text=True)
    assert "Archived" in listing and "restore or delete" in listing
    editor = owner.get(f"/workspace/sentences/{team.sentence_id}").get_data(as_text=True)
    assert "Read only: team tb is archived" in editor and 'id="save" disabled' in editor
    frozen = owner.post(f"/api/sentences/{team.sentence_id}/state", json={"status": "reviewed"})
    assert frozen.status_code == 403 and "is archived" in frozen.get_json()["error"]
    assert owner.post(f"{url}/restore").status_code == 302
    assert viewer.get(f"{url}/sentences").status_code == 200


def test_delete_a_document_then_the_treebank(
    app: Flask, password_hash: str, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    inside, outside = models / "1" / "1", tmp_path / "elsewhere"
    for folder in (inside, outside):
        folder.mkdir(parents=True)
    with app.app_context():
        team = build_team(db.session, password_hash)
        db.session.execute(update(TrainingRound).values(model_dir=str(inside)))
        db.session.add(TrainingRound(treebank_id=team.treebank_id, number=2, parsers=[], tags="gold",
                                     model_dir=str(outside), user_id=team.users["owner"]))
        db.session.commit()
    app.config["MODELS_DIR"], saved = str(models), app.config["MODELS_DIR"]
    try:
        owner = client_as(app, team.users["owner"])
        url = f"/treebanks/{team.treebank_id}"
        page = owner.get(f"{url}/remove").get_data(as_text=True)
        assert "Delete for good" in page and '<input id="delete-confirm" name="confirm"' in page
        assert client_as(app, team.users["curator"]).post(
            f"{url}/documents/{team.document_id}/delete", data={"confirm": "train.conllu"}).status_code == 403
        doc_url = f"{url}/documents/{team.document_id}/delete"
        assert owner.post(doc_url, data={"confirm": "x"}).status_code == 422
        assert owner.post(doc_url, data={"confirm": "train.conllu"}).status_code == 302
        assert _count(app, Document) == 1 and _count(app, Sentence) == 1
        assert owner.post(f"{url}/delete", data={"confirm": TREEBANK}).status_code == 302
    finally:
        app.config["MODELS_DIR"] = saved
    for model in (Treebank, Document, Sentence, TreeVersion, Membership, Job, TrainingRound):
        assert _count(app, model) == 0, model
    assert not inside.exists() and outside.exists()  # only folders inside MODELS_DIR go
    with app.app_context():
        actions = list(db.session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)))
    assert actions[-2:] == ["delete-document", "delete-treebank"]  # the log outlives the treebank


def test_delete_waits_for_running_jobs(app: Flask, password_hash: str) -> None:
    with app.app_context():
        team = build_team(db.session, password_hash)
        db.session.execute(update(Job).values(state="running"))
        db.session.commit()
    refused = client_as(app, team.users["admin"]).post(f"/treebanks/{team.treebank_id}/delete",
                                                       data={"confirm": TREEBANK})
    assert refused.status_code == 422 and "still running" in refused.get_data(as_text=True)
    assert _count(app, Treebank) == 1
