"""Searched corpora saved on disk (issue #32): a corpus searched twice is saved, a new process's
first search reads it and finds the same hits, and any change of the treebank (a new tree
version, a token edit, an import) makes it build again, never read the old file."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Sentence, Treebank, User
from app.services import search_corpora
from app.services.imports import import_conllu
from app.services.search import SearchResult, search_treebank
from app.services.search_cache import clear
from app.services.token_edits.words import split_word
from tests.app.test_search import AFRIKAANS, import_afrikaans, relabel_first_sentence

PATTERN = "pattern { H -[nsubj]-> S; S << H }"


@pytest.fixture
def corpora(app: Flask, tmp_path: Path) -> Iterator[Path]:
    """The app saves searched corpora in a fresh folder (tests save none otherwise)."""
    assert app.config["SEARCH_CORPORA_DIR"] is None
    app.config["SEARCH_CORPORA_DIR"] = str(tmp_path)
    clear()
    yield tmp_path
    app.config["SEARCH_CORPORA_DIR"] = None
    clear()



@pytest.fixture
def afrikaans(session: Session, user: User) -> Treebank:
    return import_afrikaans(session, user)


def _same(one: SearchResult, other: SearchResult) -> bool:
    return (one.hits, one.searched, one.truncated) == (other.hits, other.searched, other.truncated)


def _saved(folder: Path) -> list[Path]:
    return sorted(folder.glob("*" + search_corpora.SUFFIX))


def test_a_corpus_searched_twice_is_read_by_a_new_process(
    session: Session, afrikaans: Treebank, corpora: Path, builds: list[int]
) -> None:
    first = search_treebank(session, afrikaans, PATTERN, source="latest")
    assert builds == [1] and _saved(corpora) == []  # built once: not worth a file yet
    assert _same(search_treebank(session, afrikaans, PATTERN, source="latest"), first)
    assert len(_saved(corpora)) == 1
    clear()  # a new process: nothing kept in memory
    again = search_treebank(session, afrikaans, PATTERN, source="latest")
    assert builds == [1] and _same(again, first) and first.matches > 0
    other = search_treebank(session, afrikaans, "pattern { N [upos=NOUN] }", source="latest")
    assert builds == [1] and other.matches > 0  # read once, kept in memory as before
    search_treebank(session, afrikaans, PATTERN, source="gold")
    assert builds == [1, 1]  # another source: its own corpus


def test_a_new_version_a_token_edit_or_an_import_is_never_answered_from_an_old_file(
    session: Session, afrikaans: Treebank, corpora: Path, builds: list[int], user: User
) -> None:
    dislocated = "pattern { H -[dislocated]-> D }"

    def saved_then_new_process() -> None:
        search_treebank(session, afrikaans, dislocated, source="latest")
        search_treebank(session, afrikaans, dislocated, source="latest")
        clear()

    saved_then_new_process()
    assert len(builds) == 1
    first, word = relabel_first_sentence(session, user)
    found = search_treebank(session, afrikaans, dislocated, source="latest")
    assert len(builds) == 2 and [(h.sentence_id, h.nodes["D"]) for h in found.hits] == [(first.id, word + 1)]

    saved_then_new_process()
    words = first.n_words
    split_word(session, first, word=1, at=1, user=user)
    session.commit()
    split = search_treebank(session, afrikaans, "pattern { N [] }", source="latest")
    assert len(builds) == 3 and split.matches == sum(s.n_words for s in session.scalars(select(Sentence)))
    assert session.get(Sentence, first.id).n_words == words + 1  # type: ignore[union-attr]

    saved_then_new_process()
    before = search_treebank(session, afrikaans, "pattern { N [] }", source="latest").searched
    import_conllu(session, data=AFRIKAANS.read_bytes(), filename="again.conllu", treebank_name="af",
                  split="test", user=user)
    session.commit()
    after = search_treebank(session, afrikaans, "pattern { N [] }", source="latest")
    assert len(builds) == 4 and after.searched == 2 * before


def test_an_unreadable_or_foreign_file_is_ignored(tmp_path: Path) -> None:
    from parsing.grew import Corpus, Graph

    graph = Graph(({}, {"form": "Hi", "upos": "INTJ"}), (-1, 0), ("", "root"), "s1")
    search_corpora.save(tmp_path, "tag", ([7], Corpus([graph])))
    loaded = search_corpora.load(tmp_path, "tag")
    assert loaded is not None and loaded[0] == [7] and loaded[1].graphs == [graph]
    assert search_corpora.load(tmp_path, "another tag") is None
    search_corpora.path_of(tmp_path, "tag").write_bytes(b"\x00not marshal")
    assert search_corpora.load(tmp_path, "tag") is None
    stopped = tmp_path / ".stopped-while-writing.tmp"
    stopped.write_bytes(b"half")
    os.utime(stopped, (time.time() - 7200, time.time() - 7200))
    for number in range(search_corpora.KEEP + 3):
        search_corpora.save(tmp_path, f"tag {number}", ([7], Corpus([graph])))
    assert len(list(tmp_path.glob("*" + search_corpora.SUFFIX))) == search_corpora.KEEP
    assert search_corpora.load(tmp_path, f"tag {search_corpora.KEEP + 2}") is not None
    assert not stopped.exists() and not list(tmp_path.glob(".*.tmp"))
    (tmp_path / "a-file").write_text("")
    search_corpora.save(tmp_path / "a-file" / "below", "tag", ([7], Corpus([graph])))  # cannot: no error
    assert search_corpora.load(tmp_path / "a-file" / "below", "tag") is None
