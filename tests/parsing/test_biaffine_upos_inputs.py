"""The ``biaffine`` member reading the tagger's UPOS with predicted tags (``upos_inputs``): the gold
tags stay its targets, the tagger's (``Sentence.tagger_upos``) are its input, in training, in a
round and in parsing after its own UPOS replaced the tagger's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.batching import build_vocabularies, encode  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.network import JointNetwork, NetworkConfig  # noqa: E402
from parsing.conllu_io import load_sentences  # noqa: E402
from parsing.persist import load_model  # noqa: E402
from parsing.tag_source import with_member_upos, with_tagger_upos  # noqa: E402
from parsing.types import ROOT, Parse, Sentence  # noqa: E402
from tests.parsing.biaffine_data import AFRIKAANS, TINY, short_sentences  # noqa: E402
from tests.parsing.conftest import UD_ROOT  # noqa: E402


def _mistagged(sentence: Sentence) -> Sentence:
    """``sentence`` as a tagger that calls every noun a verb would give it."""
    return replace(sentence, upos=[ROOT, *("VERB" if tag == "NOUN" else tag for tag in sentence.upos[1:])])


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    return short_sentences("af", 1500, 40)


def test_the_input_upos_is_the_taggers_and_the_target_the_gold(sentences: list[Sentence]) -> None:
    gold = sentences[:6]
    paired = with_tagger_upos(gold, [_mistagged(s) for s in gold])
    vocabularies = build_vocabularies(gold)
    batch = encode(paired, vocabularies)
    upos = vocabularies["upos"]
    for row, sentence in enumerate(paired):
        n = len(sentence) + 1
        assert sentence.tagger_upos is not None
        assert batch.tags["upos"][row, :n].tolist() == upos.ids(sentence.tagger_upos)
        assert batch.targets["upos"][row, 1:n].tolist() == upos.ids(sentence.upos)[1:]
    assert any(s.tagger_upos != s.upos for s in paired)  # the test can tell the two apart
    assert encode(gold, vocabularies).tags["upos"].tolist() != batch.tags["upos"].tolist()


def test_a_network_reading_upos_embeds_that_column_alone(sentences: list[Sentence]) -> None:
    sizes = {name: len(vocabulary) for name, vocabulary in build_vocabularies(sentences).items()}
    assert NetworkConfig(**sizes).input_columns == ()
    assert NetworkConfig(**sizes, upos_input=True).input_columns == ("upos",)
    assert NetworkConfig(**sizes, upos_input=True, tag_inputs=True).input_columns == ("upos", "xpos", "feats")
    network = JointNetwork(NetworkConfig(**sizes, upos_input=True, hidden=16, arc_dim=8, label_dim=8))
    assert set(network.tag_embeddings) == {"upos"}
    assert network.encoder.input_size == 100 + 2 * 50 + 32


def _head_probabilities(parser: BiaffineParser, sentences: list[Sentence]) -> np.ndarray[Any, Any]:
    return np.concatenate([np.asarray(parse.arc_scores[1:]) for parse in parser.predict(sentences)])


def test_the_member_parses_from_the_upos_it_is_given_and_keeps_its_own(sentences: list[Sentence],
                                                                        tmp_path: Path) -> None:
    train = with_tagger_upos(sentences[:30], [_mistagged(s) for s in sentences[:30]])
    parser = BiaffineParser(**TINY, max_epochs=6, patience=6, random_state=1, upos_inputs=True)
    parser.fit(train, sentences[30:])
    assert parser.config_["upos_input"] is True
    tagged, retagged = sentences[30:], [_mistagged(s) for s in sentences[30:]]
    assert not np.allclose(_head_probabilities(parser, tagged), _head_probabilities(parser, retagged))
    parses = parser.predict(retagged)
    assert all(p.extras["own_tags"] and p.upos == p.extras["upos"] for p in parses)
    parser.save(tmp_path / "biaffine.model")
    loaded = load_model(tmp_path / "biaffine.model", BiaffineParser)
    assert loaded.get_params()["upos_inputs"] is True
    assert np.allclose(_head_probabilities(loaded, retagged), _head_probabilities(parser, retagged))
    forms_only = BiaffineParser(**TINY, max_epochs=2, random_state=1).fit(sentences[:30], sentences[30:])
    assert np.allclose(_head_probabilities(forms_only, tagged), _head_probabilities(forms_only, retagged))


def test_after_its_upos_replaced_the_taggers_it_still_reads_the_taggers(sentences: list[Sentence]) -> None:
    """The editor's re-parse gives the member sentences whose UPOS is its own (the tag source); it
    must read what it read when it parsed them first: the tagger's."""
    parser = BiaffineParser(**TINY, max_epochs=3, random_state=2, upos_inputs=True)
    parser.fit(with_tagger_upos(sentences[:30], sentences[:30]), sentences[30:])
    tagged = [_mistagged(s) for s in sentences[30:]]
    own = parser.predict(tagged)
    combined = with_member_upos(tagged, own)
    assert [s.tagger_upos for s in combined] == [s.upos for s in tagged]
    again = parser.predict(combined)
    assert [p.heads.tolist() for p in again] == [p.heads.tolist() for p in own]
    assert np.allclose(_head_probabilities(parser, combined), _head_probabilities(parser, tagged))


def test_a_round_gives_it_gold_targets_paired_with_the_jackknifed_tags(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    import parsing.pipeline as pipeline
    from parsing.pipeline import load_models, train_models

    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    sentences = [s for s in load_sentences(AFRIKAANS)[:600] if len(s) <= 9][:40]
    train, dev = sentences[:30], sentences[30:]
    seen: dict[str, list[Sentence]] = {}
    real_fit = pipeline.fit_member

    def spy(job: Any) -> Any:
        seen[job.name] = list(job.train)
        return real_fit(job)

    monkeypatch.setattr(pipeline, "fit_member", spy)
    small = {**TINY, "max_epochs": 1, "upos_inputs": True}
    train_models(train, dev, tmp_path, names=["biaffine", "graph1"], tags="predicted",
                 params={"biaffine": small, "tagger": {"max_iter": 2}})
    own, other = seen["biaffine"], seen["graph1"]
    assert [s.upos for s in own] == [s.upos for s in train]  # gold targets
    assert [s.tagger_upos for s in own] == [s.upos for s in other]  # the tagger's jackknifed tags
    assert all(s.tagger_upos is None for s in other)
    assert any(s.tagger_upos != s.upos for s in own)
    member = load_models(tmp_path).parsers["biaffine"]
    assert member.config_["upos_input"] is True  # type: ignore[attr-defined]


def test_a_sentence_refuses_tagger_tags_of_another_length() -> None:
    sentence = Sentence.from_words(["a", "b"], heads=[0, 1])
    with pytest.raises(ValueError, match="tagger_upos must have n\\+1 entries"):
        replace(sentence, tagger_upos=[ROOT, "NOUN"])
    with pytest.raises(ValueError, match="sentence 1: tagged with 1 words, the gold one has 2"):
        with_tagger_upos([sentence], [Sentence.from_words(["a"], heads=[0])])
    with pytest.raises(ValueError, match="1 tagged sentences for 2 gold ones"):
        with_tagger_upos([sentence, sentence], [sentence])
    parse = Parse(np.array([-1, 0, 1]), ["", "root", "dep"], extras={"upos": [ROOT, "X", "Y"]})
    twice = with_member_upos(with_member_upos([sentence], [parse]), [parse])[0]
    assert twice.tagger_upos == sentence.upos  # the tagger's, not the member's first pass


def test_the_tag_source_examples_hold() -> None:
    import doctest

    import parsing.tag_source

    assert doctest.testmod(parsing.tag_source).failed == 0
