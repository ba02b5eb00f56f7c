"""The arc error detector's feature columns (``parsing.detect.features``) on real Telugu trees."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from parsing.conllu_io import load_sentences
from parsing.detect import TreebankCounts
from parsing.detect.counts import tree_events
from parsing.detect.features import feature_names, word_features
from parsing.types import Sentence


def test_word_features_have_one_column_per_name(ud_root: Path) -> None:
    trees = load_sentences(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-dev.conllu")[:10]
    counts = TreebankCounts.build(trees[1:])
    sentence = trees[0]
    members = np.stack([sentence.heads, sentence.heads, np.where(np.arange(len(sentence) + 1) > 0, 0, -1)])
    labels = [sentence.deprels, sentence.deprels, ["", *(["dep"] * len(sentence))]]
    names = feature_names(["a", "b", "c"], ["NOUN", "VERB"], ["nsubj", "root"])
    x = word_features(sentence, sentence.heads, sentence.deprels, members, labels, [1.0, 1.0, 1.0], counts,
                      ["NOUN", "VERB"], ["nsubj", "root"])
    assert x.shape == (len(sentence), len(names))
    column = {name: i for i, name in enumerate(names)}
    root = int(np.flatnonzero(sentence.heads == 0)[0])
    assert x[root - 1, column["head_share"]] == pytest.approx(1.0)  # every member: ROOT
    others = [d - 1 for d in range(1, len(sentence) + 1) if d != root]
    assert np.allclose(x[others, column["head_share"]], 2 / 3)
    assert np.all(x[others, column["agrees:c"]] == 0) and np.all(x[others, column["agrees:a"]] == 1)
    with pytest.raises(ValueError, match="words"):
        word_features(sentence, sentence.heads[:-1], sentence.deprels[:-1], members, labels, [1.0] * 3,
                      counts, [], [])


def test_a_tag_the_training_trees_never_gave_the_form_has_a_low_share(ud_root: Path) -> None:
    """``form_tag_p`` and ``head_form_tag_p``: how often the training trees tag the word's form
    (and its head's) as it is read now; a tag error every member parsed with shows there."""
    dev = load_sentences(ud_root / "UD_Telugu-MTG" / "te_mtg-ud-dev.conllu")
    first = next(i for i, s in enumerate(dev) if any(h not in (0, -1) and s.heads[h] != 0 for h in s.heads))
    trees = [dev[first], *dev[:first], *dev[first + 1:]]  # a sentence with a word between ROOT and others
    counts = TreebankCounts.build(trees[1:])
    sentence = trees[0]
    column = {name: i for i, name in enumerate(feature_names(["a"], [], []))}
    member = np.stack([sentence.heads])

    def shares(tagged: Sentence) -> np.ndarray:  # type: ignore[type-arg]
        x = word_features(tagged, sentence.heads, sentence.deprels, member, [sentence.deprels], [1.0], counts,
                          [], [])
        return x[:, [column["form_tag_p"], column["head_form_tag_p"]]]

    seen = Counter(s.forms[d].lower() for s in trees[1:] for d in range(1, len(s) + 1))
    word = max((d for d in range(1, len(sentence) + 1) if sentence.heads[d] != 0 and d in sentence.heads),
               key=lambda d: seen[sentence.forms[d].lower()])  # the best-known form with dependents
    right = shares(sentence)
    wrong_tags = list(sentence.upos)
    wrong_tags[word] = "SYM"  # a tag no Telugu training tree gives that form
    wrong = shares(Sentence(sentence.forms, sentence.lemmas, wrong_tags, sentence.xpos, sentence.feats,
                            sentence.heads, sentence.deprels, sentence.sent_id))
    assert right[word - 1, 0] > 3 * wrong[word - 1, 0]
    dependents = [d - 1 for d in range(1, len(sentence) + 1) if sentence.heads[d] == word]
    assert dependents and np.all(wrong[dependents, 1] < right[dependents, 1])  # they see their head's tag
    root = int(np.flatnonzero(sentence.heads == 0)[0])
    assert right[root - 1, 1] == 1.0  # ROOT's tag is sure
    alone = TreebankCounts.build(trees[:1])  # a counted tree does not vouch for its own tags
    x = word_features(sentence, sentence.heads, sentence.deprels, member, [sentence.deprels], [1.0], alone,
                      [], [], own=tree_events(sentence))
    assert np.allclose(x[:, column["form_tag_p"]], 1 / 17)
