"""Part-of-speech tagging: an averaged structured perceptron over stable hashed features.

:class:`Tagger` predicts UPOS (and, on request, XPOS and FEATS) for every word, so that
parsers can run on raw, untagged text.

Design:

* **Features** are named templates over the word and its neighbours (form, lowercase form,
  prefixes and suffixes of length 1-4, shape, length, flags; lowercase words and suffixes
  at offsets ±1, ±2; word bigrams). Each word *type* is hashed once into a row of 64-bit
  keys (``blake2b``, stable across processes, unlike the salted built-in ``hash``); a
  sentence's feature keys, shape ``(n, n_templates)``, are then gathered and mixed for all
  positions at once with numpy.
* **Feature ids** come from a fitted, sorted table of the keys seen in training
  (``np.searchsorted``): exact, compact and vectorised. Unseen keys map to row 0, which
  stays zero. Scores are ``W[ids].sum(axis=1)``, shape ``(n, n_labels)``.
* **Tag history**: the previous one and two predicted tags, as dense transition tables,
  decoded greedily left to right (default) or with first-order Viterbi.
* **Learning**: structured perceptron updates with averaged weights (Daume's running-sum
  trick), sentences visited in a seeded random order, the epoch chosen on dev when dev is
  given (fixed ``max_iter`` epochs otherwise).
* **FEATS** are predicted per feature category (``Case``, ``Number``, ...; each a small
  classifier with an extra "absent" value), which generalises to unseen combinations.

Conventions: a :class:`~parsing.types.Sentence` has positions ``0..n``; position 0 is ROOT,
so every list :meth:`Tagger.predict` returns has ``n+1`` entries with ``ROOT`` first.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from parsing.types import ROOT, Sentence

FORMAT_VERSION = 1
"""Version of the file :meth:`Tagger.save` writes; :meth:`Tagger.load` refuses others."""

Keys = NDArray[np.uint64]
Ids = NDArray[np.intp]
Decoder = Literal["greedy", "viterbi"]

# Columns of a word type's key row (see _type_keys).
_FORM, _LOWER, _P1, _P2, _P3, _P4, _S1, _S2, _S3, _S4, _SHAPE, _LENGTH, _FLAGS = range(13)
_N_TYPE_KEYS = 13
_PAD = 2  # sentence-boundary rows before and after the words

# (offset, type-key column) of the single templates ...
_SINGLE_TEMPLATES: tuple[tuple[int, int], ...] = (
    (0, _FORM), (0, _LOWER), (0, _P1), (0, _P2), (0, _P3), (0, _P4),
    (0, _S1), (0, _S2), (0, _S3), (0, _S4), (0, _SHAPE), (0, _LENGTH), (0, _FLAGS),
    (-1, _LOWER), (-2, _LOWER), (1, _LOWER), (2, _LOWER),
    (-1, _S1), (-1, _S2), (-1, _S3), (1, _S1), (1, _S2), (1, _S3),
    (-2, _S3), (2, _S3), (-1, _SHAPE), (1, _SHAPE),
)  # fmt: skip
# ... and of the conjoined pairs.
_PAIR_TEMPLATES: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((-1, _LOWER), (0, _LOWER)),
    ((0, _LOWER), (1, _LOWER)),
    ((-1, _S3), (0, _S3)),
    ((0, _S3), (1, _S3)),
)

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SH30, _SH27, _SH31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _hash64(text: str) -> int:
    """A stable 64-bit hash of ``text`` (the same in every process and on every machine)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _mix(keys: Keys) -> Keys:
    """SplitMix64's finaliser applied elementwise: spreads combined keys over 64 bits."""
    keys = keys ^ (keys >> _SH30)
    keys = keys * _M1
    keys = keys ^ (keys >> _SH27)
    keys = keys * _M2
    return keys ^ (keys >> _SH31)


_SINGLE_SALTS = np.array([_hash64(f"single{i}") for i in range(len(_SINGLE_TEMPLATES))],
                         dtype=np.uint64)
_PAIR_SALTS = np.array([_hash64(f"pair{i}") for i in range(len(_PAIR_TEMPLATES))],
                       dtype=np.uint64)
_BIAS_KEY = _hash64("bias")
_BOUNDARY_ROWS = np.array(
    [[_hash64(f"{column}\x1f<boundary{row}>") for column in range(_N_TYPE_KEYS)]
     for row in range(2 * _PAD)],
    dtype=np.uint64,
)


def _char_class(char: str) -> str:
    category = unicodedata.category(char)
    if category[0] == "L":
        return "X" if char.isupper() else "x" if char.islower() else "a"
    if category[0] == "M":
        return "a"
    if category[0] == "N":
        return "d"
    return char


def word_shape(form: str) -> str:
    """The word's character classes with repeats collapsed (``X`` upper, ``x`` lower,
    ``a`` uncased letter or mark, ``d`` digit, other characters as they are).

    Examples:
        >>> word_shape("McDonald's"), word_shape("1,200"), word_shape("e-mail")
        ("XxXx'x", 'd,d', 'x-x')
    """
    classes: list[str] = []
    for char in form:
        char_class = _char_class(char)
        if not classes or classes[-1] != char_class:
            classes.append(char_class)
    return "".join(classes)


@lru_cache(maxsize=1 << 17)
def _type_keys(form: str) -> tuple[int, ...]:
    """The 64-bit keys of one word type's own features, indexed by the ``_FORM``... columns."""
    lower = form.lower()
    flags = "".join(
        "1" if flag else "0"
        for flag in (
            form[:1].isupper(),
            form.isupper(),
            any(char.isdigit() for char in form),
            "-" in form,
            not any(char.isalnum() for char in form),
        )
    )
    values = (
        form, lower, lower[:1], lower[:2], lower[:3], lower[:4],
        lower[-1:], lower[-2:], lower[-3:], lower[-4:],
        word_shape(form), str(min(len(form), 12)), flags,
    )  # fmt: skip
    return tuple(_hash64(f"{column}\x1f{value}") for column, value in enumerate(values))


def sentence_keys(forms: Sequence[str]) -> Keys:
    """Feature keys of every word of a sentence.

    Args:
        forms: the words' forms, ROOT excluded (``n`` strings).

    Returns:
        Shape ``(n, n_templates)``: row ``i`` holds word ``i+1``'s feature keys.
    """
    return batch_keys([forms])


def batch_keys(sentences: Sequence[Sequence[str]]) -> Keys:
    """Feature keys of every word of several sentences at once (the fast path).

    Args:
        sentences: each sentence's forms, ROOT excluded.

    Returns:
        Shape ``(sum of n, n_templates)``: the sentences' :func:`sentence_keys`, stacked.
    """
    lengths = np.array([len(forms) for forms in sentences], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(lengths + 2 * _PAD)[:-1]]).astype(np.intp)
    rows = np.empty((int(lengths.sum()) + 2 * _PAD * len(lengths), _N_TYPE_KEYS), dtype=np.uint64)
    pad = np.arange(_PAD)
    rows[(starts[:, None] + pad).ravel()] = np.tile(_BOUNDARY_ROWS[:_PAD], (len(lengths), 1))
    rows[(starts[:, None] + lengths[:, None] + _PAD + pad).ravel()] = np.tile(
        _BOUNDARY_ROWS[_PAD:], (len(lengths), 1))
    # centre[w]: the row of word w; words of sentence k sit at starts[k] + _PAD + 0..n_k-1
    centre = (np.repeat(starts + _PAD - np.cumsum(lengths) + lengths, lengths)
              + np.arange(int(lengths.sum())))[:, None]
    if len(centre):
        rows[centre[:, 0]] = np.array([_type_keys(f) for forms in sentences for f in forms],
                                      dtype=np.uint64)
    singles = _mix(rows[centre + _SINGLE_OFFSETS, _SINGLE_COLUMNS] ^ _SINGLE_SALTS)
    pairs = _mix(_mix(rows[centre + _LEFT_OFFSETS, _LEFT_COLUMNS] ^ _PAIR_SALTS)
                 ^ rows[centre + _RIGHT_OFFSETS, _RIGHT_COLUMNS])
    bias = np.full((len(centre), 1), _BIAS_KEY, dtype=np.uint64)
    return np.concatenate([bias, singles, pairs], axis=1)


_SINGLE_OFFSETS = np.array([offset for offset, _ in _SINGLE_TEMPLATES])
_SINGLE_COLUMNS = np.array([column for _, column in _SINGLE_TEMPLATES])
(_LEFT_OFFSETS, _LEFT_COLUMNS), (_RIGHT_OFFSETS, _RIGHT_COLUMNS) = (
    np.array([pair[side] for pair in _PAIR_TEMPLATES]).T for side in (0, 1)
)


def _lookup(table: Keys, keys: Keys) -> Ids:
    """Row ids of ``keys`` in the sorted ``table`` (+1); 0 for keys not in the table."""
    position = np.searchsorted(table, keys)
    position = np.minimum(position, max(len(table) - 1, 0))
    found = table[position] == keys if len(table) else np.zeros(keys.shape, dtype=bool)
    return np.where(found, position + 1, 0).astype(np.intp)


class _Averaged:
    """A weight array with the running sum that gives its average (Daume 2006, ch. 2)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.current = np.zeros(shape)
        self._weighted = np.zeros(shape)

    def add(self, index: tuple[NDArray[np.intp], ...], delta: NDArray[np.float64],
            step: int) -> None:
        if self.current.ndim == 2:  # feature weights: row 0 (unseen features) stays zero
            keep = index[0] != 0
            index = tuple(part[keep] for part in index)
            delta = delta[keep]
        np.add.at(self.current, index, delta)
        np.add.at(self._weighted, index, step * delta)

    def average(self, step: int) -> NDArray[np.float64]:
        return self.current - self._weighted / step


@dataclass(slots=True)
class _SequenceModel:
    """Learned state for one tag column: static weights and tag-history tables.

    ``weights`` has shape ``(n_ids, T)``; ``bigram[prev, tag]`` shape ``(T+1, T)`` and
    ``trigram[prev2, prev, tag]`` shape ``(T+1, T+1, T)``; index ``T`` is the sentence start.
    """

    labels: list[str]
    weights: NDArray[np.float64]
    bigram: NDArray[np.float64]
    trigram: NDArray[np.float64]

    def decode(self, static: NDArray[np.float64], fixed: Ids, decoder: Decoder) -> Ids:
        """Best tag indices for one sentence's ``static`` scores ``W[ids].sum(axis=1)``,
        shape ``(n, T)``; ``fixed[i] >= 0`` forces tag ``fixed[i]``."""
        static = static.copy()
        forced = fixed >= 0
        if forced.any():
            static[forced] = -np.inf
            static[forced, fixed[forced]] = 0.0
        if decoder == "viterbi":
            return _viterbi(static, self.bigram)
        return _greedy(static, self.bigram, self.trigram)


def _greedy(static: NDArray[np.float64], bigram: NDArray[np.float64],
            trigram: NDArray[np.float64]) -> Ids:
    """Left-to-right: tag ``i`` maximises ``static[i] + bigram[t1] + trigram[t2, t1]``."""
    start = bigram.shape[0] - 1
    prev2 = prev1 = start
    tags = np.empty(len(static), dtype=np.intp)
    for i, row in enumerate(static):
        tag = int(np.argmax(row + bigram[prev1] + trigram[prev2, prev1]))
        tags[i] = tag
        prev2, prev1 = prev1, tag
    return tags


def _viterbi(static: NDArray[np.float64], bigram: NDArray[np.float64]) -> Ids:
    """Exact first-order decoding: ``max sum_i static[i, t_i] + bigram[t_{i-1}, t_i]``."""
    n, size = static.shape
    tags = np.empty(n, dtype=np.intp)
    if n == 0:
        return tags
    best = static[0] + bigram[size]  # best[t]: best path score ending in t
    back = np.empty((n, size), dtype=np.intp)
    for i in range(1, n):
        # candidates[p, t] = best[p] + bigram[p, t] + static[i, t]
        candidates = best[:, None] + bigram[:size] + static[i]
        back[i] = candidates.argmax(axis=0)
        best = candidates[back[i], np.arange(size)]
    tags[-1] = int(best.argmax())
    for i in range(n - 1, 0, -1):
        tags[i - 1] = back[i, tags[i]]
    return tags


@dataclass(slots=True)
class _FeatsModel:
    """Learned state for FEATS: one classifier per feature category over shared ids.

    ``weights`` has shape ``(n_ids, n_columns)``; ``columns[g, v]`` is the weight column of
    value ``v`` of category ``g`` (value 0 is "absent"; ``-1`` pads short categories).
    """

    categories: list[str]
    values: list[list[str]]
    weights: NDArray[np.float64]

    @property
    def columns(self) -> Ids:
        width = max(len(values) for values in self.values)
        columns = np.full((len(self.values), width), -1, dtype=np.intp)
        start = 0
        for group, values in enumerate(self.values):
            columns[group, :len(values)] = np.arange(start, start + len(values))
            start += len(values)
        return columns

    def decode(self, ids: Ids, columns: Ids) -> Ids:
        """Value index per word and category, shape ``(n, n_categories)``."""
        scores = self.weights[ids].sum(axis=1)[:, columns]
        scores[:, columns < 0] = -np.inf
        best: Ids = scores.argmax(axis=2).astype(np.intp)
        return best

    def encode(self, feats: str) -> list[int]:
        """Value index per category of a FEATS string (unknown values count as absent)."""
        pairs = dict(item.split("=", 1) for item in feats.split("|") if "=" in item)
        return [
            values.index(pairs[name]) if pairs.get(name) in values else 0
            for name, values in zip(self.categories, self.values, strict=True)
        ]

    def render(self, row: Ids) -> str:
        items = [f"{name}={values[v]}" for name, values, v in
                 zip(self.categories, self.values, row.tolist(), strict=True) if v]
        return "|".join(sorted(items, key=str.lower)) or "_"


class Tagger:
    """Averaged-perceptron UPOS tagger, optionally predicting XPOS and FEATS too.

    Args:
        max_iter: training epochs (the best one on dev is kept when dev is given).
        min_iter: with dev, epochs before this one are never chosen (tiny dev sets are
            noisy: on Telugu's 662 dev words epoch 1 looked best and cost 3 points on test).
        patience: with dev, stop after this many epochs without improvement.
        decoder: ``"viterbi"`` (exact, previous tag only; the default: about +1 UPOS point
            on Wolof and Afrikaans) or ``"greedy"`` (left to right with the two previous
            tags; faster).
        tag_dict_min_count: words seen at least this often with a single tag in at least
            ``tag_dict_min_share`` of their occurrences get that tag directly; ``None``
            (the default) turns the tag dictionary off: on Tamil, Telugu and Wolof it cost
            0.3-1.1 UPOS points with Viterbi decoding.
        tag_dict_min_share: see ``tag_dict_min_count``.
        min_feature_count: features seen fewer times in training are dropped.
        predict_feats: also predict FEATS, per feature category.
        predict_xpos: also predict XPOS.
        random_state: seed of the order in which sentences are visited.

    Attributes:
        feature_keys_: sorted 64-bit keys of the features kept, shape ``(n_features,)``.
        models_: learned state per predicted column (``"upos"``, ``"xpos"``, ``"feats"``).
        tag_dict_: lowercase form -> UPOS for frequent unambiguous words.
        n_iter_: epochs kept per column.
        dev_accuracy_: dev accuracy per column (when dev was given).

    Examples:
        >>> train = [Sentence.from_words(["the", "dog", "runs"], upos=["DET", "NOUN", "VERB"]),
        ...          Sentence.from_words(["a", "cat", "sleeps"], upos=["DET", "NOUN", "VERB"])]
        >>> Tagger(max_iter=3).fit(train).predict([Sentence.from_words(["a", "dog", "runs"])])
        [['<ROOT>', 'DET', 'NOUN', 'VERB']]
    """

    def __init__(
        self,
        *,
        max_iter: int = 20,
        min_iter: int = 5,
        patience: int = 5,
        decoder: Decoder = "viterbi",
        tag_dict_min_count: int | None = None,
        tag_dict_min_share: float = 0.99,
        min_feature_count: int = 1,
        predict_feats: bool = False,
        predict_xpos: bool = False,
        random_state: int | None = 0,
    ) -> None:
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.patience = patience
        self.decoder = decoder
        self.tag_dict_min_count = tag_dict_min_count
        self.tag_dict_min_share = tag_dict_min_share
        self.min_feature_count = min_feature_count
        self.predict_feats = predict_feats
        self.predict_xpos = predict_xpos
        self.random_state = random_state

    def get_params(self) -> dict[str, object]:
        """The hyperparameters, as given to ``__init__``."""
        return {name: getattr(self, name) for name in _PARAM_NAMES}

    # ------------------------------------------------------------------ fitting

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Tagger:
        """Learn from tagged sentences.

        Args:
            sentences: training sentences with gold UPOS (and XPOS/FEATS when predicted).
            dev: held-out sentences to choose the epoch on; ``None`` trains ``max_iter``.

        Returns:
            ``self``.

        Raises:
            ValueError: no training words.
        """
        if self.decoder not in ("greedy", "viterbi"):
            raise ValueError(f"decoder must be 'greedy' or 'viterbi', not {self.decoder!r}")
        if not sum(len(sentence) for sentence in sentences):
            raise ValueError("Tagger.fit needs at least one training word")
        train_keys = [sentence_keys(s.forms[1:]) for s in sentences]
        self.feature_keys_ = self._fit_feature_table(train_keys)
        train_ids = [_lookup(self.feature_keys_, keys) for keys in train_keys]
        dev = list(dev or [])
        dev_ids = [self._ids(s) for s in dev]
        self.tag_dict_ = self._fit_tag_dict(sentences)
        self.models_: dict[str, _SequenceModel | _FeatsModel] = {}
        self.n_iter_: dict[str, int] = {}
        self.dev_accuracy_: dict[str, float] = {}
        columns = ["upos"] + ["xpos"] * self.predict_xpos
        for column in columns:
            self.models_[column] = self._fit_sequence(column, sentences, train_ids, dev, dev_ids)
        if self.predict_feats:
            self.models_["feats"] = self._fit_feats(sentences, train_ids, dev, dev_ids)
        return self

    def _fit_feature_table(self, train_keys: list[Keys]) -> Keys:
        keys, counts = np.unique(np.concatenate([k.ravel() for k in train_keys]),
                                 return_counts=True)
        return keys[counts >= self.min_feature_count]

    def _fit_tag_dict(self, sentences: Sequence[Sentence]) -> dict[str, str]:
        if self.tag_dict_min_count is None:
            return {}
        counts: dict[str, Counter[str]] = {}
        for sentence in sentences:
            for form, tag in zip(sentence.forms[1:], sentence.upos[1:], strict=True):
                counts.setdefault(form.lower(), Counter())[tag] += 1
        tag_dict: dict[str, str] = {}
        for word, tags in counts.items():
            total = sum(tags.values())
            tag, count = tags.most_common(1)[0]
            if total >= self.tag_dict_min_count and count >= self.tag_dict_min_share * total:
                tag_dict[word] = tag
        return tag_dict

    def _ids(self, sentence: Sentence) -> Ids:
        return _lookup(self.feature_keys_, sentence_keys(sentence.forms[1:]))

    def _fixed(self, sentence: Sentence, column: str, labels: list[str]) -> Ids:
        fixed = np.full(len(sentence), -1, dtype=np.intp)
        if column == "upos" and self.tag_dict_:
            index = {label: i for i, label in enumerate(labels)}
            for i, form in enumerate(sentence.forms[1:]):
                tag = self.tag_dict_.get(form.lower())
                if tag is not None:
                    fixed[i] = index[tag]
        return fixed

    def _fit_sequence(self, column: str, sentences: Sequence[Sentence], train_ids: list[Ids],
                      dev: list[Sentence], dev_ids: list[Ids]) -> _SequenceModel:
        labels = sorted({tag for s in sentences for tag in getattr(s, column)[1:]})
        index = {label: i for i, label in enumerate(labels)}
        size = len(labels)
        gold = [np.array([index[t] for t in getattr(s, column)[1:]], dtype=np.intp)
                for s in sentences]
        fixed = [self._fixed(s, column, labels) for s in sentences]
        dev_gold = [[index.get(t, -1) for t in getattr(s, column)[1:]] for s in dev]
        dev_fixed = [self._fixed(s, column, labels) for s in dev]
        weights = _Averaged((len(self.feature_keys_) + 1, size))
        bigram = _Averaged((size + 1, size))
        trigram = _Averaged((size + 1, size + 1, size))
        model = _SequenceModel(labels, weights.current, bigram.current, trigram.current)
        rng = np.random.default_rng(self.random_state)
        step = 1
        best: tuple[float, int, _SequenceModel | None] = (-1.0, 0, None)
        for epoch in range(1, self.max_iter + 1):
            for k in rng.permutation(len(sentences)):
                predicted = model.decode(model.weights[train_ids[k]].sum(axis=1), fixed[k],
                                         self.decoder)
                wrong = predicted != gold[k]
                if wrong.any():
                    _update_sequence(weights, bigram, trigram, train_ids[k], gold[k],
                                     predicted, wrong, step)
                step += 1
            if not dev or epoch < min(self.min_iter, self.max_iter):
                continue
            averaged = _SequenceModel(labels, weights.average(step), bigram.average(step),
                                      trigram.average(step))
            hits = sum(int(np.sum(averaged.decode(averaged.weights[ids].sum(axis=1), f,
                                                  self.decoder) == np.array(g)))
                       for ids, f, g in zip(dev_ids, dev_fixed, dev_gold, strict=True))
            accuracy = hits / max(1, sum(len(g) for g in dev_gold))
            if accuracy > best[0] and epoch >= min(self.min_iter, self.max_iter):
                best = (accuracy, epoch, averaged)
            elif epoch - max(best[1], self.min_iter) >= self.patience:
                break
        if best[2] is None:
            self.n_iter_[column] = self.max_iter
            return _SequenceModel(labels, weights.average(step), bigram.average(step),
                                  trigram.average(step))
        self.n_iter_[column] = best[1]
        self.dev_accuracy_[column] = best[0]
        return best[2]

    def _fit_feats(self, sentences: Sequence[Sentence], train_ids: list[Ids],
                   dev: list[Sentence], dev_ids: list[Ids]) -> _FeatsModel:
        found: dict[str, set[str]] = {}
        for sentence in sentences:
            for feats in sentence.feats[1:]:
                for item in feats.split("|"):
                    if "=" in item:
                        name, value = item.split("=", 1)
                        found.setdefault(name, set()).add(value)
        categories = sorted(found, key=str.lower)
        values = [["", *sorted(found[name])] for name in categories] or [[""]]
        n_columns = sum(len(v) for v in values)
        weights = _Averaged((len(self.feature_keys_) + 1, n_columns))
        model = _FeatsModel(categories or [""], values, weights.current)
        columns = model.columns
        gold = [np.array([model.encode(f) for f in s.feats[1:]], dtype=np.intp).reshape(
            len(s), len(values)) for s in sentences]
        rng = np.random.default_rng(self.random_state)
        step = 1
        best: tuple[float, int, _FeatsModel | None] = (-1.0, 0, None)
        for epoch in range(1, self.max_iter + 1):
            for k in rng.permutation(len(sentences)):
                predicted = model.decode(train_ids[k], columns)
                wrong = predicted != gold[k]  # (n, G)
                if wrong.any():
                    words, groups = np.nonzero(wrong)
                    good = columns[groups, gold[k][words, groups]]
                    bad = columns[groups, predicted[words, groups]]
                    rows = train_ids[k][words]  # (m, F)
                    width = rows.shape[1]
                    weights.add(
                        (np.concatenate([rows.ravel(), rows.ravel()]),
                         np.concatenate([np.repeat(good, width), np.repeat(bad, width)])),
                        np.repeat([1.0, -1.0], rows.size), step)
                step += 1
            if not dev or epoch < min(self.min_iter, self.max_iter):
                continue
            averaged = _FeatsModel(model.categories, values, weights.average(step))
            hits = sum(
                averaged.render(row) == feats
                for ids, s in zip(dev_ids, dev, strict=True)
                for row, feats in zip(averaged.decode(ids, columns), s.feats[1:], strict=True)
            )
            accuracy = hits / max(1, sum(len(s) for s in dev))
            if accuracy > best[0] and epoch >= min(self.min_iter, self.max_iter):
                best = (accuracy, epoch, averaged)
            elif epoch - max(best[1], self.min_iter) >= self.patience:
                break
        if best[2] is None:
            self.n_iter_["feats"] = self.max_iter
            return _FeatsModel(model.categories, values, weights.average(step))
        self.n_iter_["feats"] = best[1]
        self.dev_accuracy_["feats"] = best[0]
        return best[2]

    # --------------------------------------------------------------- predicting

    def predict(self, sentences: Sequence[Sentence]) -> list[list[str]]:
        """UPOS of every word.

        Returns:
            One list per sentence of ``n+1`` tags, ``ROOT`` first.
        """
        return [tags["upos"] for tags in self._predict_columns(sentences)]

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """Copies of ``sentences`` with UPOS (and XPOS/FEATS when trained) predicted.

        The input sentences are not modified.
        """
        tagged = []
        for sentence, columns in zip(sentences, self._predict_columns(sentences), strict=True):
            tagged.append(replace(
                sentence,
                forms=list(sentence.forms), lemmas=list(sentence.lemmas),
                upos=columns["upos"], xpos=columns.get("xpos", list(sentence.xpos)),
                feats=columns.get("feats", list(sentence.feats)),
                heads=sentence.heads.copy(), deprels=list(sentence.deprels),
            ))
        return tagged

    def _predict_columns(self, sentences: Sequence[Sentence]) -> list[dict[str, list[str]]]:
        if not hasattr(self, "models_"):
            raise ValueError("this Tagger is not fitted yet; call fit() or Tagger.load()")
        result: list[dict[str, list[str]]] = [{} for _ in sentences]
        for batch in range(0, len(sentences), _BATCH):
            chunk = sentences[batch:batch + _BATCH]
            ids = _lookup(self.feature_keys_, batch_keys([s.forms[1:] for s in chunk]))
            bounds = np.cumsum([0] + [len(s) for s in chunk]).tolist()
            for name, model in self.models_.items():
                if isinstance(model, _SequenceModel):
                    static = model.weights[ids].sum(axis=1)
                    for k, sentence in enumerate(chunk):
                        fixed = self._fixed(sentence, name, model.labels)
                        decoded = model.decode(static[bounds[k]:bounds[k + 1]], fixed,
                                               self.decoder)
                        result[batch + k][name] = [ROOT] + [model.labels[t]
                                                            for t in decoded.tolist()]
                else:
                    rendered = [model.render(row) for row in model.decode(ids, model.columns)]
                    for k in range(len(chunk)):
                        result[batch + k][name] = [ROOT] + rendered[bounds[k]:bounds[k + 1]]
        return result

    # ----------------------------------------------------------------- storage

    def save(self, path: str | Path) -> None:
        """Write the fitted tagger to one ``.npz`` file (arrays plus a JSON header).

        No pickle: loading a model file cannot run code, so models uploaded by users
        are safe to load. The header carries :data:`FORMAT_VERSION` and the parameters.
        """
        if not hasattr(self, "models_"):
            raise ValueError("this Tagger is not fitted yet")
        header: dict[str, object] = {
            "format_version": FORMAT_VERSION, "params": self.get_params(),
            "tag_dict": self.tag_dict_, "n_iter": self.n_iter_,
            "dev_accuracy": self.dev_accuracy_, "columns": {},
        }
        arrays: dict[str, NDArray[np.generic]] = {"feature_keys": self.feature_keys_}
        column_info: dict[str, object] = {}
        for name, model in self.models_.items():
            used = np.flatnonzero(np.any(model.weights != 0, axis=1))
            arrays[f"{name}.rows"] = used
            arrays[f"{name}.weights"] = model.weights[used]
            if isinstance(model, _SequenceModel):
                column_info[name] = {"labels": model.labels}
                arrays[f"{name}.bigram"] = model.bigram
                arrays[f"{name}.trigram"] = model.trigram
            else:
                column_info[name] = {"categories": model.categories, "values": model.values}
        header["columns"] = column_info
        arrays["header"] = np.array(json.dumps(header))
        with open(path, "wb") as handle:
            np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> Tagger:
        """Read a tagger written by :meth:`save`; it predicts exactly as the saved one.

        Raises:
            ValueError: the file was written by an incompatible version.
        """
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            if header.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"{path}: tagger format {header.get('format_version')!r}, "
                                 f"expected {FORMAT_VERSION}")
            tagger = cls(**header["params"])
            tagger.feature_keys_ = data["feature_keys"]
            tagger.tag_dict_ = header["tag_dict"]
            tagger.n_iter_ = header["n_iter"]
            tagger.dev_accuracy_ = header["dev_accuracy"]
            tagger.models_ = {}
            for name, info in header["columns"].items():
                weights = np.zeros((len(tagger.feature_keys_) + 1,
                                    data[f"{name}.weights"].shape[1]))
                weights[data[f"{name}.rows"]] = data[f"{name}.weights"]
                if "labels" in info:
                    tagger.models_[name] = _SequenceModel(
                        info["labels"], weights, data[f"{name}.bigram"], data[f"{name}.trigram"])
                else:
                    tagger.models_[name] = _FeatsModel(info["categories"], info["values"], weights)
        return tagger


_BATCH = 256  # sentences whose features are looked up together when predicting

_PARAM_NAMES = ("max_iter", "min_iter", "patience", "decoder", "tag_dict_min_count",
                "tag_dict_min_share",
                "min_feature_count", "predict_feats", "predict_xpos", "random_state")


def _update_sequence(weights: _Averaged, bigram: _Averaged, trigram: _Averaged, ids: Ids,
                     gold: Ids, predicted: Ids, wrong: NDArray[np.bool_], step: int) -> None:
    """Structured perceptron update: + gold path features, - predicted path features."""
    rows = ids[wrong]  # (m, F)
    width = rows.shape[1]
    flat = rows.ravel()
    weights.add(
        (np.concatenate([flat, flat]),
         np.concatenate([np.repeat(gold[wrong], width), np.repeat(predicted[wrong], width)])),
        np.repeat([1.0, -1.0], flat.size), step)
    start = bigram.current.shape[0] - 1
    for path, sign in ((gold, 1.0), (predicted, -1.0)):
        prev1 = np.concatenate([[start], path[:-1]])
        prev2 = np.concatenate([[start, start], path[:-2]])[:len(path)]
        delta = np.full(len(path), sign)
        bigram.add((prev1, path), delta, step)
        trigram.add((prev2, prev1, path), delta, step)
