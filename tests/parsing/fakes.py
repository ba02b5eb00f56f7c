"""Tiny stand-in members with known outputs, for the ensemble tests.

They follow the :class:`~parsing.base.BaseParser` contract (so ensembles can clone them)
but learn nothing: :class:`FixedParser` returns given heads per sentence id,
:class:`RuleParser` a fixed rule (gold copy with seeded noise, left or right chain). Every
``fit`` call is recorded in :data:`FIT_LOG` under the parser's ``tag``, so a test can check
which sentences each copy was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Self

import numpy as np

from parsing.base import BaseParser
from parsing.types import Parse, Scores, Sentence

FIT_LOG: dict[str, list[list[str | None]]] = {}
"""``tag -> [sent_ids of each fit call]``; clear it between tests."""


def _record(tag: str, sentences: Sequence[Sentence]) -> None:
    if tag:
        FIT_LOG.setdefault(tag, []).append([sentence.sent_id for sentence in sentences])


class FixedParser(BaseParser):
    """Returns ``heads[sent_id]`` (without ROOT) and ``label`` for every word.

    Examples:
        >>> s = Sentence.from_words(["a", "b"], sent_id="s1")
        >>> FixedParser({"s1": [2, 0]}).fit([]).predict([s])[0].heads.tolist()
        [-1, 2, 0]
    """

    name = "fixed"

    def __init__(self, heads: Mapping[str, Sequence[int]] | None = None, *, label: str = "dep",
                 tag: str = "") -> None:
        self.heads = heads
        self.label = label
        self.tag = tag

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        _record(self.tag, sentences)
        self.fitted_ = True
        return self

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        table = self.heads or {}
        parses = []
        for sentence in sentences:
            heads = np.array([-1, *table[str(sentence.sent_id)]], dtype=np.intp)
            parses.append(Parse(heads, ["", *[self.label] * len(sentence)], np.ones(len(heads))))
        return parses


class RuleParser(BaseParser):
    """Heads by a rule: ``"gold"`` (with ``noise``), ``"left"`` (``d-1``), ``"right"`` (``d+1``),
    ``"memorise"`` (gold for sentences it was fitted on, ``"left"`` for the others).

    ``"gold"`` copies the input's gold heads and labels (a test-only cheat), replacing each
    head by a random other position with probability ``noise``. ``"left"``/``"right"`` chain
    the words (the first/last word on ROOT) and label them ``label``. ``score_arcs`` gives a
    matrix preferring the rule's heads by ``margin``.
    """

    name = "rule"

    def __init__(self, rule: str = "gold", *, noise: float = 0.0, label: str = "dep",
                 margin: float = 1.0, tag: str = "", random_state: int | None = 0) -> None:
        self.rule = rule
        self.noise = noise
        self.label = label
        self.margin = margin
        self.tag = tag
        self.random_state = random_state

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        _record(self.tag, sentences)
        self.n_fit_sentences_ = len(sentences)
        self.seen_ = {sentence.sent_id for sentence in sentences}
        return self

    def _heads(self, sentence: Sentence, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
        n = len(sentence)
        if self.rule == "left" or (self.rule == "memorise" and sentence.sent_id not in self.seen_):
            return np.arange(-1, n, dtype=np.intp), ["", *[self.label] * n]
        if self.rule == "right":
            heads = np.arange(1, n + 2, dtype=np.intp)
            heads[0], heads[n] = -1, 0
            return heads, ["", *[self.label] * n]
        heads = sentence.heads.copy()
        for d in np.flatnonzero(rng.random(n + 1) < self.noise).tolist():
            if d > 0 and n > 1:
                heads[d] = rng.choice([h for h in range(n + 1) if h not in (d, heads[d])])
        return heads, list(sentence.deprels)

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        rng = np.random.default_rng(self.random_state)
        parses = []
        for sentence in sentences:
            heads, labels = self._heads(sentence, rng)
            parses.append(Parse(heads, labels, np.ones(len(heads))))
        return parses

    def score_arcs(self, sentence: Sentence) -> Scores:
        """``margin`` on the rule's arcs, 0 elsewhere (row 0 and diagonal ``-inf``)."""
        heads, _ = self._heads(sentence, np.random.default_rng(self.random_state))
        size = len(heads)
        scores = np.zeros((size, size))
        scores[np.arange(1, size), heads[1:]] = self.margin
        scores[0, :] = -np.inf
        np.fill_diagonal(scores, -np.inf)
        return scores
