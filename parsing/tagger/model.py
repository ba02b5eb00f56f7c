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

Modules: features in :mod:`parsing.tagger.features`, learned state and decoders in
:mod:`parsing.tagger.sequence`, the model file in :mod:`parsing.tagger.storage`.

Conventions: a :class:`~parsing.types.Sentence` has positions ``0..n``; position 0 is ROOT,
so every list :meth:`Tagger.predict` returns has ``n+1`` entries with ``ROOT`` first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from parsing.tagger.features import Ids, Keys, batch_keys, lookup, sentence_keys
from parsing.tagger.sequence import Averaged, Decoder, FeatsModel, SequenceModel, update_sequence
from parsing.tagger.storage import FORMAT_VERSION as FORMAT_VERSION
from parsing.tagger.storage import read_model, write_model
from parsing.tagger.view import parser_view
from parsing.types import ROOT, Sentence


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
        train_ids = [lookup(self.feature_keys_, keys) for keys in train_keys]
        dev = list(dev or [])
        dev_ids = [self._ids(s) for s in dev]
        self.tag_dict_ = self._fit_tag_dict(sentences)
        self.models_: dict[str, SequenceModel | FeatsModel] = {}
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
        return lookup(self.feature_keys_, sentence_keys(sentence.forms[1:]))

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
                      dev: list[Sentence], dev_ids: list[Ids]) -> SequenceModel:
        labels = sorted({tag for s in sentences for tag in getattr(s, column)[1:]})
        index = {label: i for i, label in enumerate(labels)}
        size = len(labels)
        gold = [np.array([index[t] for t in getattr(s, column)[1:]], dtype=np.intp)
                for s in sentences]
        fixed = [self._fixed(s, column, labels) for s in sentences]
        dev_gold = [[index.get(t, -1) for t in getattr(s, column)[1:]] for s in dev]
        dev_fixed = [self._fixed(s, column, labels) for s in dev]
        weights = Averaged((len(self.feature_keys_) + 1, size))
        bigram = Averaged((size + 1, size))
        trigram = Averaged((size + 1, size + 1, size))
        model = SequenceModel(labels, weights.current, bigram.current, trigram.current)
        rng = np.random.default_rng(self.random_state)
        step = 1
        best: tuple[float, int, SequenceModel | None] = (-1.0, 0, None)
        for epoch in range(1, self.max_iter + 1):
            for k in rng.permutation(len(sentences)):
                predicted = model.decode(model.weights[train_ids[k]].sum(axis=1), fixed[k],
                                         self.decoder)
                wrong = predicted != gold[k]
                if wrong.any():
                    update_sequence(weights, bigram, trigram, train_ids[k], gold[k],
                                     predicted, wrong, step)
                step += 1
            if not dev or epoch < min(self.min_iter, self.max_iter):
                continue
            averaged = SequenceModel(labels, weights.average(step), bigram.average(step),
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
            return SequenceModel(labels, weights.average(step), bigram.average(step),
                                  trigram.average(step))
        self.n_iter_[column] = best[1]
        self.dev_accuracy_[column] = best[0]
        return best[2]

    def _fit_feats(self, sentences: Sequence[Sentence], train_ids: list[Ids],
                   dev: list[Sentence], dev_ids: list[Ids]) -> FeatsModel:
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
        weights = Averaged((len(self.feature_keys_) + 1, n_columns))
        model = FeatsModel(categories or [""], values, weights.current)
        columns = model.columns
        gold = [np.array([model.encode(f) for f in s.feats[1:]], dtype=np.intp).reshape(
            len(s), len(values)) for s in sentences]
        rng = np.random.default_rng(self.random_state)
        step = 1
        best: tuple[float, int, FeatsModel | None] = (-1.0, 0, None)
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
            averaged = FeatsModel(model.categories, values, weights.average(step))
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
            return FeatsModel(model.categories, values, weights.average(step))
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

    @property
    def predicted_columns(self) -> tuple[str, ...]:
        """The columns this tagger predicts: ``"upos"``, then ``"xpos"``, ``"feats"`` if asked."""
        return ("upos",) + ("xpos",) * self.predict_xpos + ("feats",) * self.predict_feats

    def tag_for_parsing(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """:meth:`tag`, then only what the tagger predicts besides the forms
        (:func:`parsing.tagger.view.parser_view`): what a parser sees with predicted tags."""
        return parser_view(self.tag(sentences), self.predicted_columns)

    def _predict_columns(self, sentences: Sequence[Sentence]) -> list[dict[str, list[str]]]:
        if not hasattr(self, "models_"):
            raise ValueError("this Tagger is not fitted yet; call fit() or Tagger.load()")
        result: list[dict[str, list[str]]] = [{} for _ in sentences]
        for batch in range(0, len(sentences), _BATCH):
            chunk = sentences[batch:batch + _BATCH]
            ids = lookup(self.feature_keys_, batch_keys([s.forms[1:] for s in chunk]))
            bounds = np.cumsum([0] + [len(s) for s in chunk]).tolist()
            for name, model in self.models_.items():
                if isinstance(model, SequenceModel):
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
        fields: dict[str, object] = {
            "params": self.get_params(), "tag_dict": self.tag_dict_,
            "n_iter": self.n_iter_, "dev_accuracy": self.dev_accuracy_,
        }
        write_model(path, fields, self.feature_keys_, self.models_)

    @classmethod
    def load(cls, path: str | Path) -> Tagger:
        """Read a tagger written by :meth:`save`; it predicts exactly as the saved one.

        Raises:
            ValueError: the file was written by an incompatible version.
        """
        header, feature_keys, models = read_model(path)
        tagger = cls(**header["params"])
        tagger.feature_keys_ = feature_keys
        tagger.tag_dict_ = header["tag_dict"]
        tagger.n_iter_ = header["n_iter"]
        tagger.dev_accuracy_ = header["dev_accuracy"]
        tagger.models_ = models
        return tagger


_BATCH = 256  # sentences whose features are looked up together when predicting

_PARAM_NAMES = ("max_iter", "min_iter", "patience", "decoder", "tag_dict_min_count",
                "tag_dict_min_share",
                "min_feature_count", "predict_feats", "predict_xpos", "random_state")
