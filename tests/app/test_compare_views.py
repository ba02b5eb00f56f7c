"""The scoreboard, compare, side-by-side and upload pages (issue #16), on the constructed treebank
of test_compare.py."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape

import pytest
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Treebank, TreeVersion
from app.services import scoreboard as scoreboard_service
from tests.app.conftest import PASSWORD
from tests.app.test_compare import EAGER, GRAPH1, ids_by_sent_id, treebank, upload_text

__all__ = ["treebank"]  # the fixture, imported for these tests


@pytest.fixture
def logged_in(client: FlaskClient, treebank: Treebank) -> FlaskClient:
    """A client signed in as ``ana``, who imported :func:`treebank`."""
    response = client.post("/auth/login", data={"username": "ana", "password": PASSWORD})
    assert response.status_code == 302
    return client


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_pages_need_a_signed_in_user(client: FlaskClient, treebank: Treebank) -> None:
    for path in ("scoreboard", "scoreboard/scores.csv", "compare?a=graph1&b=eager", "parses/upload"):
        response = client.get(f"/treebanks/{treebank.id}/{path}")
        assert response.status_code == 302 and "/auth/login" in response.headers["Location"]


def test_scoreboard_page_tables_charts_and_csv(
    logged_in: FlaskClient, treebank: Treebank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoreboard_service, "MIN_WORDS_FOR_BEST", 1)  # the tiny treebank's rows count
    page = logged_in.get(f"/treebanks/{treebank.id}/scoreboard").get_data(as_text=True)
    assert 'id="scores"' in page and "<svg" in page and "LAS by UPOS" in page
    assert re.search(r'data-source="graph1".*?85\.7', page, re.S)
    assert 'id="agreement"' in page and "Labelled F1 by relation" in page
    stars = {
        tag: re.search(rf'<th scope="row">{tag}</th>(.*?)</tr>', page, re.S)
        for tag in ("DET", "NOUN", "VERB")
    }
    # VERB: all right (ensemble, eager, graph1; never the oracle); NOUN: eager wrong; DET: eager alone right
    assert {tag: m.group(1).count("★") for tag, m in stars.items() if m} == {"DET": 1, "NOUN": 2, "VERB": 3}
    scores = rows_of(logged_in.get(f"/treebanks/{treebank.id}/scoreboard/scores.csv").get_data(as_text=True))
    assert scores[0][:6] == ["source", "kind", "rounds", "sentences", "words", "UAS"]
    assert ["graph1", "member", "", "3", "7", "85.71"] == scores[[r[0] for r in scores].index("graph1")][:6]
    upos = rows_of(logged_in.get(f"/treebanks/{treebank.id}/scoreboard/upos.csv").get_data(as_text=True))
    assert upos[0][:3] == ["UPOS", "ensemble %", "ensemble words"] and [r[0] for r in upos[1:]] == [
        "DET",
        "NOUN",
        "PUNCT",
        "VERB",
    ]
    agreement = rows_of(
        logged_in.get(f"/treebanks/{treebank.id}/scoreboard/agreement.csv").get_data(as_text=True)
    )
    assert agreement[0] == ["parser", "eager", "graph1", "unique heads", "unique arcs"]
    assert agreement[1] == ["eager", "100.0", "71.43", "1", "1"]
    assert logged_in.get(f"/treebanks/{treebank.id}/scoreboard?split=nope").status_code == 400
    assert logged_in.get(f"/treebanks/{treebank.id}/scoreboard/other.csv").status_code == 404
    assert logged_in.get("/treebanks/9999/scoreboard").status_code == 404


def test_scoreboard_of_an_unparsed_treebank_says_what_to_do(
    logged_in: FlaskClient, treebank: Treebank
) -> None:
    page = logged_in.get(f"/treebanks/{treebank.id}/scoreboard?split=train").get_data(as_text=True)
    assert "Nothing to score yet" in page


def test_compare_page_scores_tests_confusion_and_differences(
    logged_in: FlaskClient, treebank: Treebank, session: Session
) -> None:
    response = logged_in.get(f"/treebanks/{treebank.id}/compare?a=graph1&b=eager&against=gold")
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'id="significance"' in page and 'id="confusion"' in page
    ids = ids_by_sent_id(session, treebank)
    # s1 (dog: nsubj/obj; the: other head) and s2 ("!" other head) differ; s3 does not
    links = re.findall(r"/compare/sentences/(\d+)\?", page)
    assert [int(x) for x in links] == [ids["s1"], ids["s2"]]
    confusion = rows_of(
        logged_in.get(f"/treebanks/{treebank.id}/compare/confusion.csv?a=graph1&b=eager").get_data(
            as_text=True
        )
    )
    labels = confusion[0][1:]
    cell = {(row[0], label): row[i + 1] for row in confusion[1:] for i, label in enumerate(labels)}
    assert cell[("nsubj", "obj")] == "1" and cell[("punct", "root")] == "1" and cell[("root", "root")] == "3"
    sentences = rows_of(
        logged_in.get(f"/treebanks/{treebank.id}/compare/sentences.csv?a=graph1&b=eager").get_data(
            as_text=True
        )
    )
    assert [row[1] for row in sentences[1:]] == ["s1", "s2"] and sentences[1][3:5] == ["1", "1"]


def test_compare_with_the_reference_has_no_test_and_errors_are_named(
    logged_in: FlaskClient, treebank: Treebank
) -> None:
    page = logged_in.get(f"/treebanks/{treebank.id}/compare?a=eager&b=gold").get_data(as_text=True)
    assert 'id="pair-scores"' in page and 'id="significance"' not in page
    same = logged_in.get(f"/treebanks/{treebank.id}/compare?a=eager&b=eager")
    assert same.status_code == 400 and "choose two different sources" in same.get_data(as_text=True)
    bad = logged_in.get(f"/treebanks/{treebank.id}/compare?a=gold@1&b=eager")
    assert bad.status_code == 400 and "NAME@NUMBER" in bad.get_data(as_text=True)
    assert logged_in.get(f"/treebanks/{treebank.id}/compare/confusion.csv?a=eager").status_code == 400


def test_side_by_side_view_carries_both_trees(
    logged_in: FlaskClient, treebank: Treebank, session: Session
) -> None:
    sid = ids_by_sent_id(session, treebank)["s1"]
    page = logged_in.get(f"/treebanks/{treebank.id}/compare/sentences/{sid}?a=graph1&b=eager").get_data(
        as_text=True
    )
    match = re.search(r"data-compare='([^']*)'", page)
    assert match is not None
    payload = json.loads(unescape(match.group(1)))
    assert [s["source"] for s in payload["sides"]] == ["graph1", "eager"]
    assert (
        payload["sides"][0]["heads"] == GRAPH1["s1"][0] and payload["sides"][1]["deprels"] == EAGER["s1"][1]
    )
    assert [w["form"] for w in payload["words"]] == ["the", "dog", "barks"]
    assert "js/compare.js" in page
    assert (
        logged_in.get(f"/treebanks/{treebank.id + 1}/compare/sentences/{sid}?a=graph1&b=eager").status_code
        == 404
    )


def test_upload_form_stores_or_refuses(logged_in: FlaskClient, treebank: Treebank, session: Session) -> None:
    url = f"/treebanks/{treebank.id}/parses/upload"
    assert logged_in.get(url).status_code == 200
    bad = upload_text(GRAPH1).replace("cats\tcat", "kats\tcat")
    response = logged_in.post(
        url,
        data={"label": "udpipe", "file": (io.BytesIO(bad.encode()), "u.conllu")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 422
    assert "sentence 3 (sent_id s3)" in unescape(response.get_data(as_text=True))
    assert (
        session.scalar(select(func.count()).select_from(TreeVersion).where(TreeVersion.name == "udpipe")) == 0
    )
    assert (
        logged_in.post(url, data={"label": "udpipe"}, content_type="multipart/form-data").status_code == 400
    )
    good = logged_in.post(
        url,
        data={"label": "udpipe", "file": (io.BytesIO(upload_text(EAGER).encode()), "u.conllu")},
        content_type="multipart/form-data",
    )
    assert good.status_code == 302 and good.headers["Location"].endswith(
        f"/treebanks/{treebank.id}/scoreboard"
    )
    page = logged_in.get(f"/treebanks/{treebank.id}/scoreboard").get_data(as_text=True)
    assert 'data-source="udpipe"' in page and "external" in page
    # the editor lists the external parser beside the members
    editor = logged_in.get(f"/api/sentences/{ids_by_sent_id(session, treebank)['s1']}").get_json()
    assert [tree["name"] for tree in editor["members"]] == ["eager", "graph1", "udpipe"]
