"""The lexicon page (issue #32): entries of AfriBooms dev whose FEATS or DEPREL vary, as counted
straight from the file; each variant's search and rule links find exactly its words."""

from __future__ import annotations

import html as markup
import re
from collections import Counter
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from parsing.conllu_io import DEPREL, FEATS, FORM, ID, LEMMA, UPOS, read_conllu
from tests.app.test_search import AFRIKAANS
from tests.app.test_search_views import build_world


@pytest.fixture
def world(app: Flask, make_user: Callable[..., int]) -> tuple[int, dict[str, FlaskClient]]:
    return build_world(app, make_user)


def _direct(column: int) -> dict[tuple[str, str, str], Counter[str]]:
    """Per (form, lemma, upos) of the file, each value of ``column`` counted; only those that vary."""
    found: dict[tuple[str, str, str], Counter[str]] = {}
    for raw in read_conllu(AFRIKAANS):
        for row in raw.rows:
            if row[ID].isdigit():
                found.setdefault((row[FORM], row[LEMMA], row[UPOS]), Counter())[row[column]] += 1
    return {key: counts for key, counts in found.items() if len(counts) > 1}


def _links(page: str, kind: str) -> list[str]:
    return [markup.unescape(href) for href in re.findall(rf'class="{kind}" href="([^"]+)"', page)]


@pytest.mark.parametrize(("compare", "column"), [("feats", FEATS), ("deprel", DEPREL)])
def test_the_page_lists_the_entries_that_vary_with_their_counts(
        world: tuple[int, dict[str, FlaskClient]], compare: str, column: int) -> None:
    treebank_id, clients = world
    expected = _direct(column)
    response = clients["viewer"].get(f"/treebanks/{treebank_id}/lexicon", query_string={"compare": compare})
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert f"{len(expected)} entries vary in" in page
    entries = re.findall(r'<tbody class="lexicon-entry" data-form="([^"]*)" data-total="(\d+)">(.*?)</tbody>',
                         page, re.S)
    assert len(entries) == min(50, len(expected))
    shares = []
    for form, total, body in entries:
        counts = [int(c) for c in re.findall(r'data-count="(\d+)"', body)]
        matching = [c for key, c in expected.items() if key[0] == markup.unescape(form)]
        assert sorted(counts, reverse=True) in [sorted(c.values(), reverse=True) for c in matching]
        assert int(total) == sum(counts)
        shares.append(min(counts) / sum(counts))
    assert shares == sorted(shares)  # rare minority first


def test_a_variant_search_finds_its_words_and_a_rule_fixes_them(
        world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    page = clients["curator"].get(f"/treebanks/{treebank_id}/lexicon").get_data(as_text=True)
    first = re.search(r'<tbody class="lexicon-entry".*?</tbody>', page, re.S)
    assert first is not None
    counts = [int(c) for c in re.findall(r'data-count="(\d+)"', first.group(0))]
    searches = _links(first.group(0), "variant-search")
    assert len(searches) == len(counts) >= 2
    for url, count in zip(searches, counts, strict=True):
        found = clients["curator"].get(url).get_data(as_text=True)
        assert f"{count} match{'es' if count != 1 else ''} in" in " ".join(found.split())
    rules = _links(first.group(0), "variant-rule")
    assert len(rules) == len(counts) - 1  # every variant but the most frequent
    preview = clients["curator"].get(rules[-1]).get_data(as_text=True)
    assert f"{counts[-1]} match{'es' if counts[-1] != 1 else ''} change" in " ".join(preview.split())
    viewer_page = clients["viewer"].get(f"/treebanks/{treebank_id}/lexicon").get_data(as_text=True)
    assert 'class="variant-rule"' not in viewer_page and 'class="variant-search"' in viewer_page


def test_bad_choices_and_strangers_are_refused(world: tuple[int, dict[str, FlaskClient]]) -> None:
    treebank_id, clients = world
    url = f"/treebanks/{treebank_id}/lexicon"
    assert clients["viewer"].get(url, query_string={"compare": "upos"}).status_code == 400
    assert clients["viewer"].get(url, query_string={"sort": "size"}).status_code == 400
    assert clients["viewer"].get(url, query_string={"split": "nosuch"}).status_code == 400
    bad = clients["viewer"].get(url, query_string={"source": "nobody"})
    assert bad.status_code == 400 and 'id="lexicon-error"' in bad.get_data(as_text=True)
    assert clients["stranger"].get(url).status_code == 404
    empty = clients["viewer"].get(url, query_string={"split": "train"}).get_data(as_text=True)
    assert "0 entries vary in 0 sentences" in empty and 'id="lexicon-empty"' in empty
