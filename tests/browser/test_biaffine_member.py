"""The neural ``biaffine`` member (issue #33) chosen under "More parsers" in the pre-annotate panel:
trained in a round (the tests' tiny settings, ``FAST_MEMBER_PARAMS``), scored in its own column of
the rounds page, and drawn in the editor among the members with its proposals in the word table."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import Document, Sentence, TreeVersion
from app.parser_models import TrainingRound
from tests.browser.helpers import import_raw_text
from tests.browser.test_rounds_page import import_rounds_demo, run_round

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]

MULTIPLES = "localStorage.removeItem('arcvote.focus'); localStorage.setItem('arcvote.view', 'multiples')"


def member_tree(live_app: Flask, sentence_id: int, name: str = "biaffine") -> tuple[list[int], list[str]]:
    """Member ``name``'s stored (heads, deprels) of ``sentence_id``."""
    with live_app.app_context():
        version = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "parser",
            TreeVersion.name == name).order_by(TreeVersion.version.desc())).first()
        assert version is not None, f"no {name} tree stored"
        return list(version.heads), list(version.deprels)


def member_in_editor(page: Any, sentence_id: int, name: str) -> tuple[list[str], list[int], list[str]]:
    """The editor of ``sentence_id`` in small multiples: the members drawn, the words whose arcs
    member ``name``'s figure draws, and its column of the word table ("HEAD label" per word)."""
    page.evaluate(MULTIPLES)
    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#members figure")
    names = page.locator("#members figure figcaption strong").all_text_contents()
    figure = page.locator(f"#members figure[data-member='{names.index(name)}'] .tree-scroll")
    drawn = figure.locator(".arc").evaluate_all("arcs => arcs.map((a) => Number(a.dataset.dep))")
    header = page.locator("#tokens thead th").all_text_contents()  # (inner text is upper-cased by the CSS)
    cells = page.locator("#tokens tbody tr").evaluate_all(
        "(rows, c) => rows.map((r) => r.cells[c].textContent)", header.index(name))
    return names, drawn, cells


def first_pool_sentence(live_app: Flask, treebank_id: int) -> int:
    with live_app.app_context():
        return int(db.session.scalars(select(Sentence.id).join(Document).where(
            Document.treebank_id == treebank_id, Document.split == "pool")
            .order_by(Document.position, Sentence.position)).first() or 0)


def import_with_dev(live_app: Flask, name: str) -> int:
    """:func:`import_rounds_demo` plus the demo file's sentences 51-62 as a dev split."""
    from app.models import User
    from app.services.demo import demo_file
    from app.services.imports import import_conllu
    from parsing.conllu_io import decode_utf8, format_conllu, parse_conllu

    treebank_id = import_rounds_demo(live_app, name)
    source = demo_file()
    sentences = parse_conllu(decode_utf8(source.read_bytes(), source=source.name), source=source.name)
    with live_app.app_context():
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        import_conllu(db.session, data=format_conllu(sentences[50:62]).encode(), filename="dev.conllu",
                      treebank_name=name, split="dev", user=ana)
        db.session.commit()
    return treebank_id


def predicted_round_tagging(page: Any, live_app: Flask, treebank_id: int) -> dict[str, Any]:
    """Run a predicted-tag round of graph1 and biaffine from the queue page; its stored ``tagging``."""
    run_round(page, treebank_id, ["graph1", "biaffine"], tags="predicted")
    with live_app.app_context():
        round_ = db.session.scalars(select(TrainingRound)
                                    .where(TrainingRound.treebank_id == treebank_id)).one()
        assert round_.tags == "predicted"
        tagging: dict[str, Any] = (round_.scores or {})["tagging"]
        return tagging


def test_biaffine_is_trained_in_a_round_scored_and_shown_in_the_editor(
    ui: Any, live_app: Flask, screenshot: Shot
) -> None:
    pytest.importorskip("torch")
    page = ui
    treebank_id = import_rounds_demo(live_app, "biaffine demo")
    page.goto(f"/workspace/treebanks/{treebank_id}")
    box = page.locator('#more-members input[name="parsers"][value="biaffine"]')
    assert box.count() == 1 and box.is_checked()  # a default with gold tags too (where PyTorch is)
    assert not page.locator('#more-members input[name="parsers"][value="lstm-hybrid"]').is_checked()
    assert "Dozat" in (page.locator('#more-members label:has(input[value="biaffine"])').get_attribute("title")
                       or "")
    assert "up to 15 minutes a round" in page.inner_text("#more-members .help")  # what it costs
    page.locator("#more-members").screenshot(path=str(screenshot(page, "queue-biaffine").with_name(
        "queue-biaffine-more-members.png")))
    run_round(page, treebank_id, ["graph1", "biaffine"])  # ticks it (and graph1 only) and waits

    with live_app.app_context():
        round_ = db.session.scalars(select(TrainingRound)
                                    .where(TrainingRound.treebank_id == treebank_id)).one()
        scored = (round_.scores or {}).get("members") or {}
    assert set(scored) == {"graph1", "biaffine"} and scored["biaffine"]["uas"] > 0

    # (a) the rounds page: a biaffine column with its score
    page.goto(f"/treebanks/{treebank_id}/rounds")
    columns = page.locator("#rounds thead tr:nth-child(2) th").all_text_contents()
    scores = columns[columns.index("ensemble"):]  # the score columns: ensemble, then each member
    assert "biaffine" in scores
    row = page.locator("#rounds tbody tr").first
    assert "biaffine" in row.locator("td.members .tag").all_text_contents()
    cell = row.locator("td.score").nth(scores.index("biaffine")).inner_text()
    assert f"{scored['biaffine']['las']:.1f}" in cell, cell
    assert page.locator(".curves svg polyline").count() == 2 * 3  # graph1, biaffine, ensemble
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shutil.copyfile(screenshot(page, "rounds-biaffine"), "/tmp/rounds-biaffine.png")

    # (b) the editor of a pool sentence: biaffine's tree among the members, its arcs in the table
    sentence_id = first_pool_sentence(live_app, treebank_id)
    heads, deprels = member_tree(live_app, sentence_id)
    names, drawn, cells = member_in_editor(page, sentence_id, "biaffine")
    assert sorted(names) == ["biaffine", "graph1"]
    assert sorted(drawn) == list(range(1, len(heads) + 1))  # one arc per word
    assert cells == [f"{h} {d}" for h, d in zip(heads, deprels, strict=True)]
    assert all((d == "root") == (h == 0) for h, d in zip(heads, deprels, strict=True))  # UD's root rule
    page.locator("#tokens tbody tr").first.click()  # word 1 in the panel: biaffine's vote among the heads
    proposals = page.locator("#panel button.candidate").all_text_contents()
    head = "ROOT" if heads[0] == 0 else f"{heads[0]} "  # after the button's one-digit key
    assert any("biaffine" in text and text[1:].lstrip().startswith(head) for text in proposals), proposals
    shutil.copyfile(screenshot(page, "editor-biaffine"), "/tmp/editor-biaffine.png")


def test_the_panel_ticks_the_neural_member_and_its_vote_when_the_pool_needs_predicted_tags(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    """A pool of raw text: the panel proposes predicted tags, the nine members and the two neural
    ones ticked, and names the predicted-tag default vote (vote-tuned-labels) among the methods."""
    pytest.importorskip("torch")
    from app.models import User
    from app.services.imports import import_text

    page = ui
    treebank_id = import_rounds_demo(live_app, "predicted defaults demo")
    with live_app.app_context():  # raw text in the pool: words without tags
        ana = db.session.scalars(select(User).where(User.username == "ana")).one()
        import_text(db.session, data=b"Die hond blaf. Die kat slaap.", filename="raw.txt",
                    treebank_name="predicted defaults demo", user=ana)
        db.session.commit()
    page.goto(f"/workspace/treebanks/{treebank_id}")
    form = page.locator("#preannotate-form")
    assert form.locator('select[name="tags"]').input_value() == "predicted"
    boxes = form.locator('input[name="parsers"]').all()
    ticked = [box.get_attribute("value") for box in boxes if box.is_checked()]
    assert ticked == ["graph1", "graph2", "eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl",
                      "neural", "biaffine", "lstm-hybrid"]
    neural = page.locator('#more-members input[value="biaffine"]')
    assert neural.is_visible() and neural.is_checked() and neural.is_enabled()
    method = form.locator('select[name="ensemble"]')
    assert "predicted: vote-tuned-labels" in method.locator("option").first.inner_text()
    assert "vote-tuned-labels" in [o.get_attribute("value") for o in method.locator("option").all()]
    assert "ticked by default" in page.locator("#more-members p.help").inner_text()
    page.locator("#more-members").scroll_into_view_if_needed()
    shutil.copyfile(screenshot(page, "queue-predicted-defaults"), "/tmp/queue-predicted-defaults.png")


def test_a_predicted_tag_round_says_whose_upos_the_members_parse_with(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    """A round with predicted tags and a dev split compares the neural member's UPOS on dev with
    the tagger's (:mod:`parsing.tag_source`); the rounds page names the source and both accuracies."""
    pytest.importorskip("torch")
    page = ui
    treebank_id = import_with_dev(live_app, "tag source demo")
    tagging = predicted_round_tagging(page, live_app, treebank_id)
    accuracy = tagging["dev_upos"]
    assert set(accuracy) == {"tagger", "biaffine", "combined"}
    assert tagging["source"] == ("biaffine" if accuracy["combined"] > accuracy["tagger"] else "tagger")
    page.goto(f"/treebanks/{treebank_id}/rounds")
    line = page.locator("#rounds tbody tr").first.locator("td.members .tag-source")
    text = line.inner_text()
    sure = f" where ≥ {100 * tagging['threshold']:.0f}% sure, else tagger" if tagging.get("threshold") else ""
    assert text.startswith(f"UPOS from {tagging['source']}{sure} (dev "), text
    for name, value in tagging["dev_upos"].items():
        assert f"{name} {value:.1f}" in text, text
    assert "the members parse with the better one's tags" in (line.get_attribute("title") or "")
    line.scroll_into_view_if_needed()
    shutil.copyfile(screenshot(page, "rounds-tag-source"), "/tmp/rounds-tag-source.png")


def test_a_round_trained_on_the_members_own_folds_says_so(
        ui: Any, live_app: Flask, screenshot: Shot, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the tagger setting ``member_folds`` (:mod:`parsing.member_folds`) and the neural member
    tagging dev better (a tagger without features here), the other members train on its jackknifed UPOS:
    the rounds page says from how many folds, with both training-tag accuracies."""
    pytest.importorskip("torch")
    from app.services.preannotate import FAST_MEMBER_PARAMS
    from tests.parsing.biaffine_data import TINY

    monkeypatch.setitem(live_app.config, "MEMBER_PARAMS", {
        **FAST_MEMBER_PARAMS, "tagger": {"max_iter": 1, "min_feature_count": 10**6, "member_folds": 2},
        "biaffine": {**TINY, "max_epochs": 40, "max_seconds": 60.0}})
    page = ui
    treebank_id = import_with_dev(live_app, "member folds demo")
    tagging = predicted_round_tagging(page, live_app, treebank_id)
    assert tagging["source"] == "biaffine", tagging  # the featureless tagger loses on dev
    folds = tagging["member_folds"]
    assert folds["folds"] == 2 and set(folds["train_upos"]) == {"tagger", "biaffine"}
    page.goto(f"/treebanks/{treebank_id}/rounds")
    line = page.locator("#rounds tbody tr").first.locator("td.members .member-folds")
    text = line.inner_text()
    assert text.startswith("trained on 2-fold biaffine tags (train "), text
    for name, value in folds["train_upos"].items():
        assert f"{name} {value:.1f}" in text, text
    assert "each trained without the trees it tagged" in (line.get_attribute("title") or "")
    line.scroll_into_view_if_needed()
    shutil.copyfile(screenshot(page, "rounds-member-folds"), "/tmp/rounds-member-folds.png")


def test_raw_text_gets_the_members_lemmas_xpos_and_feats_in_the_editor(
        ui: Any, live_app: Flask, screenshot: Shot) -> None:
    """Raw text in the pool, a predicted-tag round with ``biaffine``: the word fields show its
    XPOS and lemma (and FEATS where it predicted valid ones) for the words imported with ``_``,
    drawn dashed as predictions until the annotator changes one."""
    pytest.importorskip("torch")
    page = ui
    treebank_id = import_rounds_demo(live_app, "raw columns demo")
    (sentence_id,) = import_raw_text(live_app, "raw columns demo", "Bu kitap çok güzel.")
    run_round(page, treebank_id, ["graph1", "biaffine"], tags="predicted")
    with live_app.app_context():
        ensemble = db.session.scalars(select(TreeVersion).where(
            TreeVersion.sentence_id == sentence_id, TreeVersion.kind == "ensemble")).one()
        lemmas, xpos, feats, upos = ensemble.lemmas, ensemble.xpos, ensemble.feats, ensemble.upos
    assert lemmas is not None and xpos is not None and feats is not None and upos is not None
    word = next(i for i, lemma in enumerate(lemmas) if lemma != "_")  # a word the member lemmatised

    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#tokens tbody tr")
    page.locator("#tokens tbody tr").nth(word).click()
    fields = {column: page.locator(f"#{column}-input") for column in ("upos", "xpos", "lemma", "feats")}
    assert fields["lemma"].input_value() == lemmas[word]
    assert fields["xpos"].input_value() == xpos[word] and fields["feats"].input_value() == feats[word]
    for column, values in (("lemma", lemmas), ("xpos", xpos), ("feats", feats)):  # dashed: the parsers' value
        assert ("predicted" in (fields[column].get_attribute("class") or "")) == (values[word] != "_"), column
    assert "predicted" in (fields["upos"].get_attribute("class") or "")  # raw text: UPOS predicted too
    assert page.locator("#predicted-note").is_visible()
    style = fields["lemma"].evaluate("(node) => getComputedStyle(node).borderTopStyle")
    assert style == "dashed"
    page.locator("#word-fields").screenshot(path=str(screenshot(page, "editor-predicted-columns").with_name(
        "editor-predicted-columns-fields.png")))
    shutil.copyfile(screenshot(page, "editor-predicted-columns"), "/tmp/editor-predicted-columns.png")

    fields["lemma"].fill("kendi")  # the annotator's own value: no longer drawn as a prediction
    fields["lemma"].press("Tab")  # the fields redraw on the next animation frame: wait for it
    page.wait_for_function("() => !document.querySelector('#lemma-input').classList.contains('predicted')")
    assert page.evaluate("() => window.arcvoteEditor.columns.lemma")[word] == "kendi"
