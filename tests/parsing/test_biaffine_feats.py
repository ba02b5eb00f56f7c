"""FEATS one category at a time (the ``biaffine`` member's ``feats="categories"``): the
vocabulary and its groups, targets, composed strings, and a member that learns its training
sentences' FEATS that way and survives its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.batching import IGNORE, build_vocabularies, encode, vocabulary_sizes  # noqa: E402
from parsing.biaffine.decoding import _joined_feats  # noqa: E402
from parsing.biaffine.feats import (  # noqa: E402
    build_feature_vocabulary,
    feature_groups,
    feature_targets,
    group_matrix,
    join_feats,
    split_feats,
)
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import TINY, short_sentences  # noqa: E402


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """40 short training sentences of UD_Welsh-CCG (rich FEATS: Gender, Number, Person, Mutation...)."""
    return short_sentences("cy", read=1500, count=40)


def test_groups_put_the_absent_value_first() -> None:
    vocabulary = build_feature_vocabulary(["Case=Nom|Number=Sing", "Number=Plur", "_", "Case=Acc"])
    groups = feature_groups(vocabulary)
    assert [name for name, _ in groups] == ["Case", "Number"]
    assert [[vocabulary.items[i] for i in ids] for _, ids in groups] == [
        ["Case=_", "Case=Acc", "Case=Nom"] if vocabulary.index["Case=Acc"] < vocabulary.index["Case=Nom"]
        else ["Case=_", "Case=Nom", "Case=Acc"],
        ["Number=_", "Number=Plur", "Number=Sing"] if vocabulary.index["Number=Plur"] < vocabulary.index[
            "Number=Sing"] else ["Number=_", "Number=Sing", "Number=Plur"]]
    case, number = groups
    targets = feature_targets("Number=Sing", vocabulary, groups, IGNORE)
    assert targets[0] == 0 and vocabulary.items[number[1][targets[1]]] == "Number=Sing"
    assert feature_targets("Case=Dat", vocabulary, groups, IGNORE)[0] == IGNORE  # never seen
    assert feature_targets("_", vocabulary, groups, IGNORE) == [0, 0]


def test_a_combination_never_seen_whole_is_composed() -> None:
    vocabulary = build_feature_vocabulary(["Case=Nom|Number=Sing", "Case=Acc|Number=Plur"])
    groups = feature_groups(vocabulary)
    choices = np.array([[vocabulary.items[i] for i in ids].index(want)
                        for (_, ids), want in zip(groups, ["Case=Acc", "Number=Sing"], strict=True)])
    assert _joined_feats(choices, vocabulary, groups) == "Case=Acc|Number=Sing"
    assert _joined_feats(np.zeros(2, dtype=int), vocabulary, groups) == "_"
    assert join_feats(split_feats("Number=Sing|Case=Acc").items()) == "Case=Acc|Number=Sing"


def test_batches_carry_one_target_per_category(sentences: list[Sentence]) -> None:
    vocabularies = build_vocabularies(sentences, feature_categories=True)
    groups = feature_groups(vocabularies["featvals"])
    batch = encode(sentences[:4], vocabularies)
    targets = batch.targets["featcats"]
    assert targets.shape == (4, batch.words.shape[1], len(groups))
    assert (targets[:, 0] == IGNORE).all()  # ROOT
    first = sentences[0]
    for d in range(1, len(first) + 1):
        chosen = [vocabularies["featvals"].items[ids[int(t)]] for (_, ids), t in zip(groups, targets[0, d],
                                                                                      strict=True)]
        assert join_feats(tuple(item.split("=", 1)) for item in chosen) == first.feats[d]  # type: ignore[misc]
    assert "featcats" not in encode(sentences[:4], build_vocabularies(sentences)).targets


def test_label_smoothing_leaves_the_category_values_alone(sentences: list[Sentence]) -> None:
    """A category's impossible values score -inf: a smoothed target there would make the loss
    infinite, so only the tag, lemma and label targets are smoothed."""
    from parsing.biaffine.network import JointNetwork, NetworkConfig

    vocabularies = build_vocabularies(sentences, feature_categories=True)
    sizes, groups = vocabulary_sizes(vocabularies)
    network = JointNetwork(NetworkConfig(**sizes, hidden=16, arc_dim=8, label_dim=8, dropout=0.0,
                                         word_dropout=0.0))
    network.get_buffer("feat_groups").copy_(group_matrix(groups, sizes["feat_width"]))
    batch = encode(sentences[:6], vocabularies)
    assert torch.isfinite(network.loss(batch, label_smoothing=0.1))


def test_the_member_learns_feats_by_category_and_round_trips(sentences: list[Sentence],
                                                             tmp_path: Path) -> None:
    parser = BiaffineParser(**TINY, feats="categories", max_epochs=40, patience=40, random_state=3)
    parser.fit(sentences[:30], sentences[:30])
    assert parser.config_["feat_categories"] == len(feature_groups(parser._network()[1]["featvals"]))
    parses = parser.predict(sentences[:30])
    words = [(p.extras["feats"][d], s.feats[d]) for p, s in zip(parses, sentences, strict=False)  # type: ignore[index]
             for d in range(1, len(s) + 1)]
    assert np.mean([got == gold for got, gold in words]) > 0.9
    parser.save(tmp_path / "feats.model")
    loaded = BiaffineParser.load(tmp_path / "feats.model")
    for first, second in zip(parser.predict(sentences[30:]), loaded.predict(sentences[30:]), strict=True):
        assert first.extras["feats"] == second.extras["feats"]
        assert first.heads.tolist() == second.heads.tolist()
    with pytest.raises(ValueError, match="feats is 'whole' or 'categories', got 'parts'"):
        BiaffineParser(**TINY, feats="parts").fit(sentences[:4], sentences[:4])
