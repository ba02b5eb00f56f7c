"""A sentence's tree as a download for papers: ``tree.svg`` and ``tree.tex`` (tikz-dependency),
for whoever may read the treebank, linked from the sentence page."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from flask import Flask

from app.extensions import db
from app.models import User
from app.services.trees import add_version
from tests.app.team_helpers import Team, build_team, client_as


@pytest.fixture
def team(app: Flask, password_hash: str) -> Team:
    """The team treebank; its pool sentence p1 (Dogs bark) has a gold tree and an ensemble tree."""
    with app.app_context():
        built = build_team(db.session, password_hash)
        owner = db.session.get(User, built.users["owner"])
        assert owner is not None
        add_version(db.session, sentence_id=built.sentence_id, source="ensemble", heads=[0, 1],
                    deprels=["root", "dep_x"], user=owner)
        db.session.commit()
        return built


def test_svg_and_latex_of_the_tree_shown(app: Flask, team: Team) -> None:
    viewer = client_as(app, team.users["viewer"])
    base = f"/sentences/{team.sentence_id}"
    svg = viewer.get(f"{base}/tree.svg?source=gold")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    assert svg.headers["Content-Disposition"] == 'attachment; filename="p1-gold.svg"'
    drawing = ET.fromstring(svg.data)
    arcs = drawing.findall("{http://www.w3.org/2000/svg}g[@class='arc']")
    assert sorted(arc.get("data-dep", "") for arc in arcs) == ["1", "2"]
    assert "Dogs" in svg.get_data(as_text=True) and "NOUN" in svg.get_data(as_text=True)
    tex = viewer.get(f"{base}/tree.tex?source=ensemble")
    text = tex.get_data(as_text=True)
    assert tex.status_code == 200
    assert tex.headers["Content-Disposition"].endswith('filename="p1-ensemble.tex"')
    assert "\\deproot{1}{root}" in text and "\\depedge{1}{2}{dep\\_x}" in text  # the ensemble's, escaped
    assert "Dogs \\& bark \\\\" in text and "\\begin{dependency}" in text
    page = viewer.get(f"{base}?source=ensemble").get_data(as_text=True)
    links = page[page.index('id="figure-downloads"'):].split("</span>")[0]
    assert f'href="{base}/tree.svg?source=ensemble"' in links
    assert f'href="{base}/tree.tex?source=ensemble"' in links


def test_who_may_download_and_missing_trees(app: Flask, team: Team) -> None:
    url = f"/sentences/{team.sentence_id}/tree.svg"
    assert client_as(app, team.users["stranger"]).get(url).status_code == 404  # a private treebank
    assert client_as(app, None).get(url).status_code in (302, 401)
    viewer = client_as(app, team.users["viewer"])
    missing = viewer.get(f"{url}?source=graph1")
    assert missing.status_code == 404 and "has no tree from graph1" in missing.get_data(as_text=True)
    assert viewer.get(f"/sentences/{team.sentence_id}/tree.pdf").status_code == 404
    assert viewer.get("/sentences/999999/tree.tex").status_code == 404
