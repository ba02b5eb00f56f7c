"""Word columns (UPOS, XPOS, LEMMA, FEATS) in the editor's API: validation, versions, history,
export, training data, the values offered, and the UD validator's warnings on save."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.extensions import db
from app.models import Sentence, Treebank, TreeVersion, User
from app.services.exports import export_conllu
from app.services.members import set_role
from app.services.parsing_adapter import load_sentences
from app.services.token_columns import feats_problem, value_problem
from app.services.trees import latest_versions
from tests.app import test_workspace

api = test_workspace.api
"""The fixture: a signed-in client and three seeded pool sentences (``test_workspace.seed``)."""

Api = tuple[FlaskClient, dict[str, int]]


def save(client: FlaskClient, sentence_id: int, columns: Any = None, *, version: int = 0,
         heads: list[int] | None = None, deprels: list[str] | None = None) -> Any:
    """POST a save of sentence ``a``'s ensemble tree (or the given one) with ``columns``."""
    body: dict[str, Any] = {"heads": heads or [2, 0, 2], "deprels": deprels or ["nsubj", "root", "advmod"],
                            "expected_version": version}
    if columns is not None:
        body["columns"] = columns
    return client.post(f"/api/sentences/{sentence_id}/annotations", json=body)


def versions(app: Flask) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(TreeVersion)) or 0


def test_value_rules() -> None:
    assert feats_problem("_") is None
    assert feats_problem("Case=Nom|Number=Sing") is None
    assert feats_problem("Number[psor]=Plur,Sing|PronType=Prs") is None
    assert "Name=Value" in (feats_problem("abbr=Yes") or "")
    assert "sorted by name" in (feats_problem("Number=Sing|Case=Nom") or "")
    assert "once" in (feats_problem("Case=Nom|Case=Acc") or "")
    assert "sorted and unique" in (feats_problem("Case=Nom,Acc") or "")
    assert "sorted and unique" in (feats_problem("Case=Acc,Acc") or "")
    assert "Name=Value" in (feats_problem("Case=Nom|") or "")
    assert "Name=Value" in (feats_problem("Case") or "")
    assert value_problem("upos", "NOUN") is None and value_problem("upos", "NN") is not None
    assert value_problem("upos", "noun") is not None
    assert value_problem("xpos", "NN$") is None and value_problem("xpos", "_") is None
    assert value_problem("xpos", "N N") is not None and value_problem("xpos", "") is not None
    assert value_problem("lemma", "run") is None
    assert value_problem("lemma", "New York") is not None and value_problem("lemma", "a\tb") is not None


def test_columns_are_saved_versioned_and_shown(app: Flask, api: Api) -> None:
    client, ids = api
    editor = client.get(f"/api/sentences/{ids['a']}").get_json()
    assert editor["current"]["columns"] == {"upos": ["PRON", "VERB", "ADV"], "xpos": ["_"] * 3,
                                           "lemma": ["_"] * 3, "feats": ["_"] * 3}
    reply = save(client, ids["a"], {"upos": ["PRON", "NOUN", "ADV"], "feats": ["_", "Number=Plur", "_"],
                                    "lemma": ["he", "run", "fast"], "xpos": ["PRP", "NNS", "RB"]})
    assert reply.status_code == 201, reply.get_json()
    saved = reply.get_json()["tree"]
    assert saved["columns"]["upos"] == ["PRON", "NOUN", "ADV"]
    assert saved["columns"]["feats"] == ["_", "Number=Plur", "_"]
    # A later save of the tree alone keeps the columns of the version it edits.
    again = save(client, ids["a"], version=1, heads=[2, 0, 2], deprels=["nsubj", "root", "obj"])
    assert again.status_code == 201
    reloaded = client.get(f"/api/sentences/{ids['a']}").get_json()
    assert reloaded["version"] == 2
    assert reloaded["current"]["columns"]["upos"] == ["PRON", "NOUN", "ADV"]
    assert reloaded["current"]["columns"]["lemma"] == ["he", "run", "fast"]
    with app.app_context():
        newest = db.session.scalars(select(TreeVersion).where(TreeVersion.kind == "annotation")
                                    .order_by(TreeVersion.version.desc())).first()
        assert newest is not None and newest.xpos == ["PRP", "NNS", "RB"]
        assert newest.feats == ["_", "Number=Plur", "_"]
    # A column only one word changed is stored whole; one nobody changed stays NULL.
    save(client, ids["b"], {"upos": ["PRON", "AUX"]}, heads=[2, 0], deprels=["nsubj", "root"])
    with app.app_context():
        tree = latest_versions(db.session, [ids["b"]], "latest")[ids["b"]]
        assert tree.upos == ["PRON", "AUX"] and (tree.xpos, tree.lemmas, tree.feats) == (None, None, None)


@pytest.mark.parametrize(("column", "values", "word", "needle"), [
    ("upos", ["PRON", "NN", "ADV"], 2, "17 UD tags"),
    ("feats", ["_", "Number=Sing|Case=Nom", "_"], 2, "sorted by name"),
    ("feats", ["Case=Nom|Case=Acc", "_", "_"], 1, "once"),
    ("feats", ["_", "_", "degree=pos"], 3, "Name=Value"),
    ("lemma", ["he", "run away", "fast"], 2, "without spaces"),
    ("lemma", ["", "_", "_"], 1, "non-empty"),
    ("xpos", ["_", "V\tB", "_"], 2, "without spaces or tabs"),
])
def test_a_bad_value_is_a_422_naming_the_word_and_field(
    app: Flask, api: Api, column: str, values: list[str], word: int, needle: str
) -> None:
    client, ids = api
    before = versions(app)
    reply = save(client, ids["a"], {column: values})
    assert reply.status_code == 422
    errors = reply.get_json()["errors"]
    assert [(e["word"], e["field"]) for e in errors] == [(word, column)]
    assert needle in errors[0]["message"] and f"word {word}" in errors[0]["message"]
    assert versions(app) == before


@pytest.mark.parametrize(("columns", "field"), [
    ("NOUN", "columns"),  # wrong types: the body's schema (app.views.api_schemas) names the path
    ({"upos": ["PRON", 3, "ADV"]}, "columns.upos[1]"),
    ({"upos": ["PRON", "VERB"]}, "upos"),  # the service names the column in its errors
    ({"deprel": ["a", "b", "c"]}, "deprel"),
])
def test_malformed_columns_are_a_422_naming_the_field(app: Flask, api: Api, columns: Any, field: str) -> None:
    client, ids = api
    before = versions(app)
    reply = save(client, ids["a"], columns)
    assert reply.status_code == 422
    answer = reply.get_json()
    assert field in [answer.get("field"), *(e.get("field") for e in answer.get("errors", []))]
    assert versions(app) == before


def test_unchanged_imported_values_are_accepted(app: Flask, api: Api) -> None:
    """A value as imported passes even where an edit could not set it (a lemma with a space)."""
    client, ids = api
    with app.app_context():
        from app.models import Token
        token = db.session.scalars(select(Token).where(Token.sentence_id == ids["a"], Token.word == 2)).one()
        token.lemma = "run away"
        db.session.commit()
    reply = save(client, ids["a"], {"lemma": ["_", "run away", "_"], "upos": ["PRON", "VERB", "ADV"]})
    assert reply.status_code == 201, reply.get_json()


def test_history_names_who_changed_which_column(app: Flask, api: Api, make_user: Any) -> None:
    client, ids = api
    assert save(client, ids["a"], {"upos": ["PRON", "NOUN", "ADV"]}).status_code == 201
    make_user("cy")
    with app.app_context():  # cy annotates the treebank too
        sentence = db.session.get(Sentence, ids["a"])
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        set_role(db.session, sentence.document.treebank, "cy", "annotator", by=owner)  # type: ignore[union-attr]
        db.session.commit()
    client.post("/auth/logout")
    client.post("/auth/login", data={"username": "cy", "password": "correct horse battery"})
    assert save(client, ids["a"], {"feats": ["Case=Nom", "_", "_"]}, version=1).status_code == 201
    history = client.get(f"/api/sentences/{ids['a']}/history").get_json()["history"]
    annotations = {entry["version"]: entry for entry in history if entry["kind"] == "annotation"}
    assert annotations[1]["author"] == "ana"
    assert annotations[1]["column_changes"] == [
        {"word": 2, "form": "runs", "column": "upos", "from": "VERB", "to": "NOUN"}]
    assert annotations[2]["author"] == "cy"
    assert annotations[2]["column_changes"] == [
        {"word": 1, "form": "He", "column": "feats", "from": "_", "to": "Case=Nom"}]


def test_export_and_training_data_use_the_edited_columns(app: Flask, api: Api) -> None:
    client, ids = api
    columns = {"upos": ["PRON", "NOUN", "ADV"], "feats": ["_", "Number=Plur", "_"],
               "lemma": ["he", "run", "fast"], "xpos": ["PRP", "NNS", "RB"]}
    assert save(client, ids["a"], columns).status_code == 201
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        text = export_conllu(db.session, treebank, source="latest", split="pool")
        assert "2\truns\trun\tNOUN\tNNS\tNumber=Plur\t0\troot\t_\t_" in text.splitlines()
        assert "3\tfast\tfast\tADV\tRB\t_\t2\tadvmod\t_\t_" in text.splitlines()
        gold = export_conllu(db.session, treebank, source="gold", split="train")
        assert "NOUN" not in gold
        trees = latest_versions(db.session, [ids["a"]], "latest")
        sentence = load_sentences(db.session, [ids["a"]], trees)[0]
        assert sentence.upos[1:] == ["PRON", "NOUN", "ADV"] and sentence.feats[2] == "Number=Plur"
        assert sentence.lemmas[1:] == ["he", "run", "fast"] and sentence.xpos[1:] == ["PRP", "NNS", "RB"]


def test_stale_edit_is_a_409_with_their_columns(app: Flask, api: Api) -> None:
    client, ids = api
    assert save(client, ids["a"], {"upos": ["PRON", "NOUN", "ADV"]}).status_code == 201
    before = versions(app)
    stale = save(client, ids["a"], {"upos": ["PRON", "VERB", "X"]}, version=0)
    assert stale.status_code == 409
    assert stale.get_json()["theirs"]["columns"]["upos"] == ["PRON", "NOUN", "ADV"]
    assert versions(app) == before


def test_revert_copies_an_annotation_s_columns(app: Flask, api: Api) -> None:
    client, ids = api
    first = save(client, ids["a"], {"upos": ["PRON", "NOUN", "ADV"]}).get_json()["tree"]
    assert save(client, ids["a"], {"upos": ["PRON", "VERB", "X"]}, version=1).status_code == 201
    url = f"/api/sentences/{ids['a']}/revert"
    reverted = client.post(url, json={"version_id": first["id"], "expected_version": 2})
    assert reverted.status_code == 201
    assert reverted.get_json()["tree"]["columns"]["upos"] == ["PRON", "NOUN", "ADV"]
    with app.app_context():
        ensemble = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == ids["a"], TreeVersion.kind == "ensemble")).one()
    back = client.post(url, json={"version_id": ensemble.id, "expected_version": 3})
    assert back.get_json()["tree"]["columns"]["upos"] == ["PRON", "VERB", "ADV"]  # as imported


def test_saving_returns_the_validator_s_warnings_on_words(app: Flask, api: Api) -> None:
    client, ids = api
    clean = save(client, ids["a"], {"upos": ["PRON", "VERB", "ADV"]})
    assert clean.status_code == 201
    assert [w for w in clean.get_json()["warnings"] if w["word"] > 0] == []
    # "fast" tagged PUNCT but labelled advmod: level 3 says PUNCT must be punct (word 3).
    reply = save(client, ids["a"], {"upos": ["PRON", "VERB", "PUNCT"]}, version=1)
    assert reply.status_code == 201  # a warning never blocks the save
    warnings = reply.get_json()["warnings"]
    punct = [w for w in warnings if w["test"] == "upos-rel-punct"]
    assert len(punct) == 1 and punct[0]["word"] == 3 and punct[0]["level"] == 3
    assert "punct" in punct[0]["message"]
    # The editor shows them again when the sentence is opened.
    assert any(w["test"] == "upos-rel-punct" and w["word"] == 3
               for w in client.get(f"/api/sentences/{ids['a']}").get_json()["warnings"])


def test_language_data_adds_levels_4_and_5(app: Flask, api: Api) -> None:
    """English has validator data: an undocumented feature is flagged (level 4) on its word."""
    client, ids = api
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        treebank.language = "en"
        db.session.commit()
    reply = save(client, ids["a"], {"feats": ["_", "Foo=Bar", "_"]})
    assert reply.status_code == 201
    unknown = [w for w in reply.get_json()["warnings"] if w["level"] == 4]
    assert unknown and all(w["word"] == 2 for w in unknown) and "Foo" in unknown[0]["message"]


def test_known_values_most_frequent_first(app: Flask, api: Api) -> None:
    client, ids = api
    with app.app_context():
        from app.models import Token
        rows = db.session.scalars(select(Token).join(Sentence).where(Sentence.id.in_([ids["a"], ids["c"]]))
                                  .order_by(Token.id)).all()
        for token, (xpos, feats, lemma) in zip(rows, [
            ("PRP", "Case=Nom|Number=Sing", "he"), ("VBZ", "Number=Sing", "run"), ("RB", "_", "fast"),
            ("NNS", "Number=Plur", "dog"), ("VBP", "Number=Plur", "bark"), ("RB", "_", "loudly"),
            ("NN", "Number=Sing", "today")], strict=True):
            token.xpos, token.feats, token.lemma = xpos, feats, lemma
        db.session.commit()
    known = client.get(f"/api/sentences/{ids['a']}/values").get_json()
    upos = known["upos"]  # PRON and VERB 3 times, ADV and NOUN twice, INTJ once, then the rest
    assert set(upos[:2]) == {"PRON", "VERB"} and set(upos[2:4]) == {"ADV", "NOUN"} and upos[4] == "INTJ"
    assert upos[5:] == sorted(upos[5:]) and sorted(upos) == sorted(set(upos)) and len(upos) == 17
    assert known["xpos"][0] == "RB" and set(known["xpos"]) == {"PRP", "VBZ", "RB", "NNS", "VBP", "NN"}
    assert known["feats"][:2] == ["Number=Sing", "Number=Plur"] and "Case=Nom" in known["feats"]
    assert known["lemmas"] == {"He": ["he"], "runs": ["run"], "fast": ["fast"]}


def test_values_need_a_sign_in(app: Flask, client: FlaskClient) -> None:
    assert client.get("/api/sentences/1/values").status_code == 401
