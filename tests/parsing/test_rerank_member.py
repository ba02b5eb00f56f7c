"""Tests of the reranked neural member (parsing.rerank.member) on real Telugu sentences: it picks
trees of its own k-best list, trains its reranker only when held-out sentences exist, saves and
loads without pickle, keeps forced arcs, and is built by name like any member."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints
from parsing.members import build_member, member_names
from parsing.rerank.member import RerankedNeuralParser
from parsing.scorer.metrics import evaluate
from parsing.types import Sentence
from tests.parsing.conftest import UD_ROOT

TELUGU = UD_ROOT / "UD_Telugu-MTG"
SMALL = {"max_epochs": 3, "hidden": 24, "random_state": 1}


@pytest.fixture(scope="module")
def data() -> tuple[list[Sentence], list[Sentence], list[Sentence]]:
    """300 training sentences, 80 dev sentences (the reranker's) and 60 others to parse."""
    train, dev = TELUGU / "te_mtg-ud-train.conllu", TELUGU / "te_mtg-ud-dev.conllu"
    if not (train.is_file() and dev.is_file()):
        pytest.skip(f"UD_Telugu-MTG not found under {UD_ROOT} (../shared/ud beside the repo)")
    dev_sentences = load_sentences(dev)
    return load_sentences(train)[:300], dev_sentences[:80], dev_sentences[80:140]


@pytest.fixture(scope="module")
def member(data: tuple[list[Sentence], list[Sentence], list[Sentence]]) -> RerankedNeuralParser:
    train, dev, _ = data
    return RerankedNeuralParser(k=6, rates=(0.01, 1.0), epochs=2, neural_params=SMALL).fit(train, dev)


def _is_tree(heads: np.ndarray) -> bool:
    """Every word reaches ROOT (index 0) and exactly one word hangs from it."""
    n = len(heads) - 1
    for word in range(1, n + 1):
        seen, node = set(), word
        while node != 0:
            if node in seen:
                return False
            seen.add(node)
            node = int(heads[node])
    return int(np.count_nonzero(heads[1:] == 0)) == 1


def test_predictions_are_trees_of_its_own_kbest_list(
    member: RerankedNeuralParser, data: tuple[list[Sentence], list[Sentence], list[Sentence]]
) -> None:
    assert member.reranked_
    sentences = data[2]
    parses = member.predict(sentences)
    assert len(parses) == len(sentences)
    for sentence, parse in zip(sentences, parses, strict=True):
        kbest, rank = parse.extras["kbest"], parse.extras["rank"]
        assert isinstance(kbest, list) and isinstance(rank, int) and 0 <= rank < len(kbest) <= member.k
        heads, deprels, _ = kbest[rank]
        assert parse.heads.tolist() == heads.tolist() and parse.deprels == list(deprels)
        assert len(parse) == len(sentence) and _is_tree(parse.heads)
        scores = parse.arc_scores
        assert scores is not None and np.all((scores[1:] > 0) & (scores[1:] <= 1))


def test_the_reranker_is_the_adaptation_to_held_out_sentences(
    member: RerankedNeuralParser, data: tuple[list[Sentence], list[Sentence], list[Sentence]]
) -> None:
    """The reranker trains on the dev lists, the network never does: its 1-best is the same
    network parse with or without the reranker, and the chosen trees are scored like any member's."""
    reranker = member.reranker_
    assert reranker is not None and reranker.n_train_ > 0
    sentences = data[2]
    plain = member.neural_.kbest_derivations(sentences, member.k)
    parses = member.predict(sentences)
    for listed, parse in zip(plain, parses, strict=True):
        assert parse.extras["kbest"][0][0].tolist() == listed[0][0].tolist()
    assert evaluate(sentences, parses).las.f1 > 0.3


def test_without_held_out_sentences_it_parses_as_the_network(
    data: tuple[list[Sentence], list[Sentence], list[Sentence]]
) -> None:
    train, _, sentences = data
    plain = RerankedNeuralParser(k=4, neural_params=SMALL).fit(train)
    assert not plain.reranked_
    expected = plain.neural_.predict_kbest(sentences, 4)
    for parse, listed in zip(plain.predict(sentences), expected, strict=True):
        assert parse.extras["rank"] == 0 and parse.heads.tolist() == listed[0].heads.tolist()


def test_save_and_load_give_the_same_parses(
    member: RerankedNeuralParser, data: tuple[list[Sentence], list[Sentence], list[Sentence]], tmp_path: Path
) -> None:
    path = tmp_path / "neural-rerank.model"
    member.save(path)
    loaded = RerankedNeuralParser.load(path)
    assert loaded.reranked_
    sentences = data[2][:30]
    for a, b in zip(member.predict(sentences), loaded.predict(sentences), strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels


def test_forced_arcs_are_kept(
    member: RerankedNeuralParser, data: tuple[list[Sentence], list[Sentence], list[Sentence]]
) -> None:
    sentences = [s for s in data[2] if len(s) >= 4][:10]
    constraints = [Constraints({1: int(s.heads[1]), 3: int(s.heads[3])}, {3: s.deprels[3]})
                   for s in sentences]
    for forced, parse in zip(constraints, member.predict_constrained(sentences, constraints), strict=True):
        assert forced.satisfied_by(parse.heads) and _is_tree(parse.heads)
        assert parse.deprels[3] == forced.labels[3]


def test_it_is_a_member_by_name_but_not_a_default_one() -> None:
    assert "neural-rerank" not in member_names()
    built = build_member("neural-rerank", k=8)
    assert isinstance(built, RerankedNeuralParser) and built.get_params()["k"] == 8
    with pytest.raises(ValueError, match="k must be at least 2"):
        RerankedNeuralParser(k=1).fit([])
