"""The treebank settings page (issue #30): language after import, the label inventory (UD's
relations + the validator's subtypes for the language + imported + curator-added), the feature
inventory, the guidelines link, who may see and change them, and the open label set in the editor."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Treebank
from app.services.reparse import ReparseError, read_constraints
from app.services.settings import (
    SettingsError,
    feature_inventory,
    label_inventory,
    read_labels,
    read_language,
    validator_relations,
)
from app.team_models import AuditEvent
from tests.app.team_helpers import Team, build_team, client_as


def _team(app: Flask, password_hash: str) -> Team:
    with app.app_context():
        return build_team(db.session, password_hash)


def _treebank(app: Flask, team: Team) -> Treebank:
    treebank = db.session.get(Treebank, team.treebank_id)
    assert treebank is not None
    return treebank


def _save(app: Flask, team: Team, who: str, deprel: str) -> tuple[int, dict[str, Any]]:
    """Save the pool sentence ("Dogs bark") with word 1 labelled ``deprel``."""
    client = client_as(app, team.users[who])
    response = client.post(f"/api/sentences/{team.sentence_id}/annotations",
                           json={"heads": [2, 0], "deprels": [deprel, "root"], "expected_version": 0})
    return response.status_code, response.get_json()


def test_validator_data_gives_wolof_subtypes_and_features() -> None:
    wolof = validator_relations("wo")
    assert "obj:appl" in wolof and "nmod:poss" in wolof and "advmod:emph" not in wolof
    assert validator_relations("") == () and validator_relations("zz") == ()
    tb = Treebank(name="x", language="wo", labels=["dep:odd"], extra_labels=["advmod:emph"],
                  extra_feats=["Emph=Yes"])
    labels = label_inventory(tb)
    assert {"obj:appl", "dep:odd", "advmod:emph", "nsubj"} <= set(labels)
    assert {"NounClass=Wol1", "Aspect=Hab", "Emph=Yes"} <= set(feature_inventory(tb))


def test_bad_labels_and_languages_are_named() -> None:
    with pytest.raises(SettingsError, match="'emph' is not one of UD's universal relations"):
        read_labels("advmod:emph\nemph:advmod")
    with pytest.raises(SettingsError, match="not a UD relation"):
        read_labels("Advmod:Emph")
    assert read_labels("obl:tmod, advmod:emph obl:tmod") == ["advmod:emph", "obl:tmod"]
    with pytest.raises(SettingsError, match="not a language code"):
        read_language("Wolof")
    assert read_language(" WO ") == "wo"


def test_unknown_label_says_how_to_add_it_then_the_language_opens_its_subtypes(
        app: Flask, password_hash: str) -> None:
    team = _team(app, password_hash)
    code, reply = _save(app, team, "annotator", "obj:appl")
    assert code == 422
    assert reply["errors"][0]["code"] == "label"
    assert "curator adds it on the treebank's Settings page" in reply["errors"][0]["message"]
    curator = client_as(app, team.users["curator"])
    form = {"language": "wo", "guidelines_url": "https://example.org/guide", "extra_labels": "",
            "extra_feats": ""}
    assert curator.post(f"/treebanks/{team.treebank_id}/settings", data=form).status_code == 302
    assert _save(app, team, "annotator", "obj:appl")[0] == 201
    with app.app_context():
        assert _treebank(app, team).language == "wo"
        event = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "settings")).one()
        assert event.details["settings"] == {"language": "wo", "guidelines_url": "https://example.org/guide"}
        assert event.details["previous"] == {"language": "", "guidelines_url": ""}
    annotator = client_as(app, team.users["annotator"])
    editor = annotator.get(f"/workspace/sentences/{team.sentence_id}").get_data(as_text=True)
    assert 'href="https://example.org/guide"' in editor and "Annotation guidelines" in editor
    add_url = f"/api/treebanks/{team.treebank_id}/labels"
    assert add_url not in editor  # only a curator's editor offers to add a label
    assert add_url in curator.get(f"/workspace/sentences/{team.sentence_id}").get_data(as_text=True)


def test_a_curator_adds_a_label_on_the_page_or_from_the_editor(app: Flask, password_hash: str) -> None:
    team = _team(app, password_hash)
    assert _save(app, team, "annotator", "advmod:emph")[0] == 422
    curator = client_as(app, team.users["curator"])
    url = f"/api/treebanks/{team.treebank_id}/labels"
    assert curator.post(url, json={"label": 5}).get_json()["field"] == "label"
    refused = curator.post(url, json={"label": "emph"})
    assert refused.status_code == 422 and "not one of UD's universal relations" in refused.get_json()["error"]
    assert client_as(app, team.users["annotator"]).post(url, json={"label": "advmod:emph"}).status_code == 403
    added = curator.post(url, json={"label": "advmod:emph"})
    assert added.status_code == 200 and added.get_json()["added"] is True
    assert "advmod:emph" in added.get_json()["labels"]
    assert curator.post(url, json={"label": "advmod:emph"}).get_json()["added"] is False
    assert _save(app, team, "annotator", "advmod:emph")[0] == 201
    page = curator.get(f"/treebanks/{team.treebank_id}/settings").get_data(as_text=True)
    assert "advmod:emph" in page
    # the page's form: a bad label is named and nothing changes
    bad = curator.post(f"/treebanks/{team.treebank_id}/settings",
                       data={"language": "", "extra_labels": "advmod:emph\nfoo:bar", "extra_feats": "Emph"})
    assert bad.status_code == 422
    assert "&#39;foo&#39; is not one of UD&#39;s universal relations" in bad.get_data(as_text=True)
    with app.app_context():
        assert _treebank(app, team).extra_labels == ["advmod:emph"]


def test_who_sees_and_who_changes_the_settings(app: Flask, password_hash: str) -> None:
    team = _team(app, password_hash)
    url = f"/treebanks/{team.treebank_id}/settings"
    viewer = client_as(app, team.users["viewer"]).get(url)
    assert viewer.status_code == 200 and "Read only: curators and owners" in viewer.get_data(as_text=True)
    assert client_as(app, team.users["stranger"]).get(url).status_code == 404
    for who in ("viewer", "annotator"):
        assert client_as(app, team.users[who]).post(url, data={"language": "wo"}).status_code == 403
    with app.app_context():
        assert _treebank(app, team).language == ""
    # annotators per sentence: the owner only (a curator's value is ignored)
    client_as(app, team.users["curator"]).post(url, data={"language": "", "annotators_per_sentence": "3"})
    with app.app_context():
        assert _treebank(app, team).annotators_per_sentence == 1
    client_as(app, team.users["owner"]).post(url, data={"language": "", "annotators_per_sentence": "2"})
    with app.app_context():
        assert _treebank(app, team).annotators_per_sentence == 2


def test_importing_with_a_language_sets_a_blank_one(app: Flask, password_hash: str) -> None:
    team = _team(app, password_hash)
    owner = client_as(app, team.users["owner"])
    form = {"name": "team tb", "split": "pool", "file_format": "lines", "language": "wo",
            "text": "Mangi dem."}
    assert owner.post("/treebanks/import", data=form, content_type="multipart/form-data").status_code == 302
    with app.app_context():
        assert _treebank(app, team).language == "wo"
    form |= {"language": "fr", "text": "Ba beneen yoon."}
    owner.post("/treebanks/import", data=form, content_type="multipart/form-data")
    with app.app_context():
        assert _treebank(app, team).language == "wo"  # a set language is changed on the settings page only


def test_reparse_constraints_name_the_way_to_add_a_label() -> None:
    with pytest.raises(ReparseError, match="Settings page"):
        read_constraints([{"id": 1, "head": 2, "deprel": "advmod:emph"}], 2, ["nsubj", "root"])
