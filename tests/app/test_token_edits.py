"""Token and sentence split and merge (issue #32): ``POST /api/sentences/<id>/tokens`` and
:mod:`app.services.token_edits` on a small English treebank with a multiword token, member,
ensemble and annotation trees: every source carried over as new versions (always trees), the
history kept and superseded versions refused, undo, review marks, audit, notes, exports that the
UD validator reads without a format or tree error, refusals naming the field, and permissions.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, Sentence, SentenceNote, SentenceState, TokenEdit, Treebank, TreeVersion, User
from app.services import DbSession
from app.services.audit import events
from app.services.exports import export_treebank
from app.services.imports import import_conllu
from app.services.members import set_role
from app.services.token_edits import token_rows
from app.services.trees import add_version
from app.services.ud_checks import ud_warnings
from app.services.validation import validate_tree
from app.services.workspace import newest_trees
from parsing.conllu_io import parse_conllu
from tests.app.conftest import PASSWORD
from tests.app.helpers import empty_database

GOLD = """# sent_id = d1
# text = We can't stop thecat now.
1\tWe\twe\tPRON\tPRP\tCase=Nom|Number=Plur|Person=1|PronType=Prs\t4\tnsubj\t_\t_
2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_
2\tca\tcan\tAUX\tMD\tVerbForm=Fin\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\tPolarity=Neg\t4\tadvmod\t_\t_
4\tstop\tstop\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\t_
5\tthecat\tthecat\tNOUN\tNN\tNumber=Sing\t4\tobj\t_\t_
6\tnow\tnow\tADV\tRB\t_\t4\tadvmod\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = d2
# text = Dogs bark loudly
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
3\tloudly\tloudly\tADV\tRB\t_\t2\tadvmod\t_\t_

# sent_id = d3
# text = They sleep .
1\tThey\tthey\tPRON\tPRP\tCase=Nom|Number=Plur|Person=3|PronType=Prs\t2\tnsubj\t_\t_
2\tsleep\tsleep\tVERB\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

"""


def seed(session: DbSession, user: User) -> dict[str, int]:
    """The gold file (dev split), a member's and the ensemble's tree of d1 and d2, an annotation
    of d1 (reviewed words 1-4); returns sent_id → sentence id."""
    import_conllu(
        session,
        data=GOLD.encode(),
        filename="dev.conllu",
        treebank_name="tb",
        split="dev",
        user=user,
        language="en",
    )
    ids = {str(s): i for s, i in session.execute(select(Sentence.sent_id, Sentence.id))}
    d1 = ids["d1"]
    add_version(
        session,
        sentence_id=d1,
        source="graph1",
        heads=[4, 4, 4, 0, 6, 4, 4],
        deprels=["nsubj", "aux", "advmod", "root", "nmod", "advmod", "punct"],
        user=user,
    )
    add_version(
        session,
        sentence_id=d1,
        source="ensemble",
        heads=[4, 4, 4, 0, 4, 4, 4],
        deprels=["nsubj", "aux", "advmod", "root", "obj", "advmod", "punct"],
        user=user,
        scores=[0.9] * 7,
        columns={"upos": ["PRON", "AUX", "PART", "VERB", "NOUN", "ADV", "PUNCT"]},
    )
    add_version(
        session,
        sentence_id=d1,
        source="annotation",
        heads=[4, 4, 4, 0, 4, 4, 4],
        deprels=["nsubj", "aux", "advmod", "root", "obj", "advmod", "punct"],
        user=user,
        provenance=["human"] * 4 + ["parser"] * 3,
    )
    for sid in ("d2", "d3"):
        add_version(
            session,
            sentence_id=ids[sid],
            source="graph1",
            heads=[2, 0, 2],
            deprels=["nsubj", "root", "advmod"],
            user=user,
        )
    session.add(SentenceState(sentence_id=d1, status="in_progress", reviewed_words=[1, 2, 3, 4]))
    session.commit()
    return ids


@pytest.fixture
def api(app: Flask, logged_in: FlaskClient) -> tuple[FlaskClient, dict[str, int]]:
    with app.app_context():
        ids = seed(db.session, db.session.scalars(select(User)).one())
    return logged_in, ids


def post(client: FlaskClient, sentence_id: int, **body: Any) -> Any:
    return client.post(f"/api/sentences/{sentence_id}/tokens", json=body)


def lines(sentence_id: int) -> list[list[str]]:
    return token_rows(db.session, sentence_id)


def check_trees(sentence_id: int) -> dict[tuple[str, str], TreeVersion]:
    """Every source's newest tree of the sentence is a valid tree over its words."""
    sentence = db.session.get(Sentence, sentence_id)
    assert sentence is not None
    newest = newest_trees(db.session, sentence_id)
    for tree in newest.values():
        assert len(tree.heads) == sentence.n_words, tree.source
        assert validate_tree(tree.heads, tree.deprels, ["dep", "parataxis", "obj", "nmod"]) == [], tree.source
        for column in ("upos", "xpos", "lemmas", "feats", "scores", "provenance"):
            values = getattr(tree, column)
            assert values is None or len(values) == sentence.n_words, (tree.source, column)
    return newest


def exports_validate(treebank: Treebank) -> None:
    """Gold and latest exports read back as CoNLL-U trees, and the UD validator finds no format,
    tree or metadata (text) problem (levels 1 and 2) in any sentence."""
    for source in ("gold", "latest", "ensemble", "graph1"):
        text = export_treebank(db.session, treebank, source=source).text
        for sentence in parse_conllu(text, check_trees=True, single_root=True):
            serious = [w for w in ud_warnings(sentence, "en") if w["level"] <= 2]
            assert serious == [], (source, sentence.sent_id, serious)


def test_split_word_carries_every_source_and_keeps_the_history(
    app: Flask, api: tuple[FlaskClient, dict[str, int]]
) -> None:
    client, ids = api
    d1 = ids["d1"]
    answer = post(client, d1, operation="split-word", word=5, at=3)
    assert answer.status_code == 201, answer.get_json()
    with app.app_context():
        sentence = db.session.get(Sentence, d1)
        assert sentence is not None and sentence.n_words == 8
        assert sentence.text == "We can't stop thecat now."  # the text stays: SpaceAfter=No on "the"
        rows = lines(d1)
        assert [r[1] for r in rows if r[0].isdigit()] == ["We", "ca", "n't", "stop", "the", "cat", "now", "."]
        assert rows[5][9] == "SpaceAfter=No" and rows[6][6:8] == ["5", "dep"]
        newest = check_trees(d1)
        gold = newest[("gold", "")]
        assert gold.version == 2 and gold.heads == [4, 4, 4, 0, 4, 5, 4, 4]
        member = newest[("parser", "graph1")]
        assert member.heads == [4, 4, 4, 0, 7, 5, 4, 4]  # its arc 5 -> 6 became 5 -> 7 (renumbered)
        annotation = newest[("annotation", "")]
        assert annotation.version == 2 and annotation.provenance is not None
        assert annotation.provenance[5] == "parser" and annotation.provenance[:4] == ["human"] * 4
        ensemble = newest[("ensemble", "")]
        assert ensemble.upos is not None and ensemble.upos[4:6] == ["NOUN", "X"]
        assert ensemble.scores is not None and ensemble.scores[5] == 0.0
        state = db.session.get(SentenceState, d1)
        assert state is not None and state.reviewed_words == [1, 2, 3, 4]
        note = db.session.scalars(select(SentenceNote).where(SentenceNote.sentence_id == d1)).one()
        assert "6 cat" in note.body
        actions = [(e.action, e.details.get("operation")) for e in events(db.session, sentence_id=d1)]
        assert ("token-edit", "split-word") in actions
        exports_validate(sentence.document.treebank)
        old_gold = db.session.scalar(
            select(TreeVersion.id).where(
                TreeVersion.sentence_id == d1, TreeVersion.kind == "gold", TreeVersion.version == 1
            )
        )
    history = client.get(f"/api/sentences/{d1}/history").get_json()["history"]
    superseded = {(e["source"], e["version"]) for e in history if e["superseded"]}
    assert ("gold", 1) in superseded and ("annotation", 1) in superseded and ("gold", 2) not in superseded
    assert any(e["token_edit"] and e["token_edit"]["operation"] == "split-word" for e in history)
    refused = client.post(f"/api/sentences/{d1}/revert", json={"version_id": old_gold, "expected_version": 2})
    assert refused.status_code == 409 and "token edit" in refused.get_json()["error"]
    assert (
        client.post(
            f"/api/sentences/{d1}/revert", json={"version_id": gold.id, "expected_version": 2}
        ).status_code
        == 201
    )


def test_merge_and_undo_give_the_words_and_trees_back(
    app: Flask, api: tuple[FlaskClient, dict[str, int]]
) -> None:
    client, ids = api
    d1 = ids["d1"]
    with app.app_context():
        original = lines(d1)
        before = {key: (t.heads, t.deprels) for key, t in newest_trees(db.session, d1).items()}
    assert post(client, d1, operation="split-word", word=5, at=3).status_code == 201
    merged = post(client, d1, operation="merge-words", word=5)
    assert merged.status_code == 201
    with app.app_context():
        rows = lines(d1)
        assert [r[1] for r in rows] == [r[1] for r in original]
        assert [r[6:8] for r in rows] == [r[6:8] for r in original]
        assert {key: (t.heads, t.deprels) for key, t in check_trees(d1).items()} == before
        edit = db.session.scalars(
            select(TokenEdit).where(TokenEdit.sentence_id == d1).order_by(TokenEdit.id.desc())
        ).first()
        assert edit is not None and edit.operation == "merge-words"
    undone = post(client, d1, operation="undo", edit_id=edit.id)
    assert undone.status_code == 201, undone.get_json()
    with app.app_context():
        assert [r[1] for r in lines(d1)] == ["We", "can't", "ca", "n't", "stop", "the", "cat", "now", "."]
        check_trees(d1)
        assert db.session.scalar(select(func.count()).select_from(TokenEdit)) == 3
    again = post(client, d1, operation="undo", edit_id=edit.id)
    assert again.status_code == 409  # undone already, and an undo is the newest edit now


def test_multiword_tokens_add_and_remove(app: Flask, api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    d1 = ids["d1"]
    with app.app_context():
        original = lines(d1)
        trees = db.session.scalar(select(func.count()).select_from(TreeVersion))
    assert post(client, d1, operation="remove-multiword", first=2).status_code == 201
    with app.app_context():
        sentence = db.session.get(Sentence, d1)
        assert sentence is not None and sentence.text == "We can't stop thecat now."  # ca, n't: no space
        assert [r[0] for r in lines(d1)][:3] == ["1", "2", "3"] and lines(d1)[1][9] == "SpaceAfter=No"
        assert db.session.scalar(select(func.count()).select_from(TreeVersion)) == trees  # no word changed
        exports_validate(sentence.document.treebank)
    assert post(client, d1, operation="add-multiword", first=2, last=3, form="can't").status_code == 201
    with app.app_context():
        assert lines(d1) == original
    bad = post(client, d1, operation="add-multiword", first=2, last=3, form="can't")
    assert bad.status_code == 422 and bad.get_json()["field"] == "first"


def test_split_and_merge_sentences(app: Flask, api: tuple[FlaskClient, dict[str, int]]) -> None:
    client, ids = api
    d2 = ids["d2"]
    answer = post(client, d2, operation="split-sentence", after=1)
    assert answer.status_code == 201, answer.get_json()
    new_id = answer.get_json()["new_sentence_id"]
    with app.app_context():
        first, second = db.session.get(Sentence, d2), db.session.get(Sentence, new_id)
        assert first is not None and second is not None
        assert (first.n_words, second.n_words, second.sent_id) == (1, 2, "d2-2")
        assert (first.text, second.text) == ("Dogs", "bark loudly")
        order = list(db.session.scalars(select(Sentence.sent_id).join(Document).order_by(Sentence.position)))
        assert order == ["d1", "d2", "d2-2", "d3"]
        check_trees(d2)
        check_trees(new_id)
        assert newest_trees(db.session, d2)[("gold", "")].heads == [0]
        exports_validate(first.document.treebank)
    # merge d2 with d2-2 again: one sentence, the second root under the first as parataxis
    merged = post(client, d2, operation="merge-sentence")
    assert merged.status_code == 201, merged.get_json()
    with app.app_context():
        assert db.session.get(Sentence, new_id) is None
        sentence = db.session.get(Sentence, d2)
        assert sentence is not None and sentence.text == "Dogs bark loudly"
        gold = check_trees(d2)[("gold", "")]
        assert gold.heads == [0, 1, 2] and gold.deprels == ["root", "parataxis", "advmod"]
        edit = db.session.scalars(select(TokenEdit).where(TokenEdit.operation == "merge-sentence")).one()
        exports_validate(sentence.document.treebank)
    undone = post(client, d2, operation="undo", edit_id=edit.id)
    assert undone.status_code == 201, undone.get_json()
    with app.app_context():
        back = db.session.scalars(select(Sentence).where(Sentence.sent_id == "d2-2")).one()
        assert back.n_words == 2 and back.text == "bark loudly"
        assert len(check_trees(back.id)) == 2  # gold and graph1, as the split made them
        order = list(db.session.scalars(select(Sentence.sent_id).join(Document).order_by(Sentence.position)))
        assert order == ["d1", "d2", "d2-2", "d3"]


def test_merging_the_last_sentence_and_bad_arguments_are_refused(
    api: tuple[FlaskClient, dict[str, int]],
) -> None:
    client, ids = api
    cases = [
        (ids["d3"], {"operation": "merge-sentence"}, "sentence"),
        (ids["d1"], {"operation": "split-word", "word": 5, "at": 0}, "at"),
        (ids["d1"], {"operation": "split-word", "word": 5, "at": 6}, "at"),
        (ids["d1"], {"operation": "split-word", "at": 2}, "word"),
        (ids["d1"], {"operation": "split-word", "word": 99, "at": 1}, "word"),
        (ids["d1"], {"operation": "merge-words", "word": 3}, "word"),  # n't + stop: across the MWT's edge
        (ids["d1"], {"operation": "split-sentence", "after": 2}, "after"),  # inside can't
        (ids["d1"], {"operation": "add-multiword", "first": 5, "last": 6, "form": "a b"}, "form"),
        (ids["d1"], {"operation": "shuffle"}, "operation"),
        (ids["d1"], {"operation": "undo", "edit_id": "x"}, "edit_id"),
    ]
    for sentence_id, body, field in cases:
        answer = client.post(f"/api/sentences/{sentence_id}/tokens", json=body)
        assert answer.status_code == 422, (body, answer.get_json())
        assert answer.get_json()["field"] == field, (body, answer.get_json())
    assert post(client, ids["d1"], operation="undo", edit_id=123456).status_code == 404


def test_who_may_edit_tokens(app: Flask, api: tuple[FlaskClient, dict[str, int]], make_user: Any) -> None:
    _, ids = api
    make_user("vic")
    make_user("ann")
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        owner = db.session.scalars(select(User).where(User.username == "ana")).one()
        for name, role in (("vic", "viewer"), ("ann", "annotator")):
            set_role(db.session, treebank, name, role, by=owner)
        db.session.commit()
    for name, status in (("vic", 403), ("ann", 201)):
        client = app.test_client()
        client.post("/auth/login", data={"username": name, "password": PASSWORD})
        answer = client.post(
            f"/api/sentences/{ids['d3']}/tokens", json={"operation": "split-word", "word": 1, "at": 2}
        )
        assert answer.status_code == status, (name, answer.get_json())
    with app.app_context():
        treebank = db.session.scalars(select(Treebank)).one()
        treebank.assigned_only = True
        db.session.commit()
    client = app.test_client()
    client.post("/auth/login", data={"username": "ann", "password": PASSWORD})
    answer = client.post(f"/api/sentences/{ids['d3']}/tokens", json={"operation": "merge-words", "word": 1})
    assert answer.status_code == 403 and "assigned" in answer.get_json()["error"]


def test_backup_and_restore_keep_token_edits(
    app: Flask, api: tuple[FlaskClient, dict[str, int]], runner: Any, tmp_path: Any
) -> None:
    import json


    client, ids = api
    assert post(client, ids["d1"], operation="split-word", word=5, at=3).status_code == 201
    assert post(client, ids["d2"], operation="split-sentence", after=1).status_code == 201
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert (
        runner.invoke(args=["treebank", "backup", "tb", "--output", str(first), "--user", "ana"]).exit_code
        == 0
    )
    records = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    edits = [r for r in records if r["type"] == "token_edit"]
    assert [e["operation"] for e in edits] == ["split-word", "split-sentence"] and all(
        e["written"] for e in edits
    )
    empty_database(app)  # an empty instance with one admin
    restored = runner.invoke(args=["treebank", "restore", str(first)])
    assert restored.exit_code == 0, restored.output
    assert runner.invoke(args=["treebank", "backup", "tb", "--output", str(second)]).exit_code == 0

    def own(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if not (r["type"] == "event" and r["action"] in ("backup", "restore-backup"))]

    assert own([json.loads(line) for line in second.read_text(encoding="utf-8").splitlines()]) == own(records)
    with app.app_context():
        d1 = db.session.scalars(select(Sentence).where(Sentence.sent_id == "d1")).one()
        from app.services.history import history

        entries = {(e["source"], e["version"]): e["superseded"] for e in history(db.session, d1)}
        assert entries[("gold", 1)] and not entries[("gold", 2)]
        from app.services.token_edits import undoable

        assert undoable(db.session, d1) is None  # what it replaced is not in the backup


def test_double_annotation_branches_are_carried_and_blind_annotators_refused(
    app: Flask, password_hash: str
) -> None:
    from tests.app.double_helpers import build_double_team
    from tests.app.team_helpers import client_as

    with app.app_context():
        team = build_double_team(db.session, password_hash)
    tb, first = team.team.treebank_id, team.pool[0]
    owner = client_as(app, team.user("owner"))
    owner.post(f"/treebanks/{tb}/assignments/settings", data={"annotators_per_sentence": "2"})
    owner.post(f"/treebanks/{tb}/assignments", data={"annotators": ["annotator", "ann2"], "ids": f"{first}"})
    trees = {
        "annotator": ([2, 0, 2], ["nsubj", "root", "obj"]),
        "ann2": ([2, 0, 1], ["nsubj", "root", "nmod"]),
    }
    for who, (heads, labels) in trees.items():
        saved = client_as(app, team.user(who)).post(
            f"/api/sentences/{first}/annotations",
            json={"heads": heads, "deprels": labels, "expected_version": 0},
        )
        assert saved.status_code == 201
    blind = client_as(app, team.user("annotator")).post(
        f"/api/sentences/{first}/tokens", json={"operation": "split-word", "word": 3, "at": 2}
    )
    assert blind.status_code == 403 and "blind" in blind.get_json()["error"]
    curator = client_as(app, team.user("curator"))
    done = curator.post(
        f"/api/sentences/{first}/tokens", json={"operation": "split-word", "word": 3, "at": 2}
    )
    assert done.status_code == 201, done.get_json()
    with app.app_context():
        newest = check_trees(first)
        assert newest[("annotation", "annotator")].heads == [2, 0, 2, 3]  # "bi" + "rds" under it
        assert newest[("annotation", "ann2")].heads == [2, 0, 1, 3]
        assert ("annotation", "") not in newest  # no adjudicated tree is made up by the edit
    # the blind annotator's editor loads their carried branch, one word more
    data = client_as(app, team.user("ann2")).get(f"/api/sentences/{first}").get_json()
    assert len(data["words"]) == 4 and data["current"]["heads"] == [2, 0, 1, 3] and data["tokens"]["refusal"]
