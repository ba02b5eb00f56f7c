"""Dependency labels for the arcs of given trees, by a scikit-learn linear classifier.

The graph-based parsers find heads without labels; :class:`ArcLabeller` then labels each arc
``heads[d] -> d`` of the tree (McDonald, Lerman & Pereira 2006 label as a second stage too).
It is trained on gold trees and applied to predicted ones. The classifier is a one-vs-rest
linear SVM (liblinear's :class:`~sklearn.svm.LinearSVC`): on the UD treebanks it labels as well
as logistic regression and trains several times faster. Its label "probabilities" are a
softmax over the per-label margins, a confidence proxy (not calibrated) for label voting.

Features are named templates over the arc (dependent ``d``, head ``h``, the head's head
``g``) and the tree around it: words, lemmas, suffixes, UPOS, XPOS, FEATS and ``Case`` of
``d`` and ``h``, direction and bucketed distance, ``g``'s UPOS, how many dependents ``d`` has
and the UPOS of its outermost ones, where ``d`` ranks among ``h``'s dependents on its side,
and the UPOS around ``d``. They are hashed for all arcs of a sentence at once
(:func:`parsing.features.hash_columns`), and the arcs of all sentences go into one sparse
matrix whose columns are the hashed features seen in training (unseen ones are dropped), so a
whole corpus is labelled with one ``predict_proba`` call.

There is no warm start: liblinear's solver cannot resume, so a parser's warm fit
(``warm_start=True``) refits its labeller from scratch on all the training trees
(``bench/warm_rounds.py`` reports what share of a warm round that is).

Partial trees (:mod:`parsing.semi.partial`): only the annotated arcs (``Sentence.annotated``,
provenance "human") train the classifier; the arcs the parsers filled in (provenance "parser")
are left out of the loss.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.svm import LinearSVC

from parsing.features import bucket_distance, hash_columns
from parsing.graph.templates import FIELDS, TokenEncoder
from parsing.types import Heads, Sentence

IntArray = NDArray[np.int64]

_COLUMNS = (
    *(f"d{field}" for field in FIELDS), *(f"h{field}" for field in FIELDS),
    "gp", "dir", "dist", "dkids", "dleft", "dright", "rank", "outer", "hkids", "pad",
)  # fmt: skip
LABEL_TEMPLATES = (
    "dp", "dw", "dl", "ds", "df", "dc", "dx", "hp", "hw", "hl", "hf", "hc", "hx",
    "dp hp", "dp hp dir", "dp hp dist", "dw hp", "dp hw", "dl hl", "dx hx",
    "dp dir", "dw dir", "ds dir", "dl dir", "dc dir", "dc hp", "dc hp dir", "df dp", "df hp dir",
    "hf dp", "hc dp dir", "ds hp dir",
    "gp dp hp", "gp hp", "gp dp", "dp dkids", "dp hp dkids", "dp rank dir", "dp hp rank dir",
    "dp outer dir", "dp hp outer dir", "dp dleft", "dp dright", "dp hp dleft dright", "hp hkids dp",
    "dp- dp", "dp dp+", "dp- dp dp+", "dp dp+ hp dir", "dp- dp hp dir",
)  # fmt: skip
"""Label feature templates: names of :data:`_COLUMNS` conjoined (``d``/``h`` + a token field
of :data:`parsing.graph.templates.FIELDS`; ``gp`` the head's head's UPOS; ``dkids``,
``hkids`` dependents of ``d``/``h`` (capped); ``dleft``/``dright`` UPOS of ``d``'s outermost
dependents; ``rank`` ``d``'s place among ``h``'s dependents on its side, closest first,
capped; ``outer`` whether ``d`` is the farthest on its side)."""

_NONE = -3  # "no such word" in the tree columns
_SPEC = np.array(
    [[_COLUMNS.index(name) for name in t.split()] + [_COLUMNS.index("pad")] * (5 - len(t.split()))
     for t in LABEL_TEMPLATES],
    dtype=np.intp,
)


def _tree_columns(heads: Heads, upos: IntArray) -> dict[str, IntArray]:
    """Columns describing each word's place in the tree, shape ``(n,)`` each."""
    size = len(heads)
    words = np.arange(1, size)
    head = heads[1:].astype(np.int64)
    kids = np.bincount(head, minlength=size)
    padded_upos = np.append(upos, _NONE)  # index -1 -> "none"
    grand = np.where(head > 0, heads[np.maximum(head, 0)], -1)
    # outermost dependents of each word: min/max dependent position, or none
    leftmost = np.full(size, size, np.int64)
    rightmost = np.full(size, -1, np.int64)
    np.minimum.at(leftmost, head, words)
    np.maximum.at(rightmost, head, words)
    dleft = np.where(leftmost[words] < words, padded_upos[np.minimum(leftmost[words], size - 1)], _NONE)
    dright = np.where(rightmost[words] > words, padded_upos[rightmost[words]], _NONE)
    # rank among the head's dependents on the same side, closest first
    side = np.sign(words - head)
    order = np.lexsort((np.abs(words - head), side, head))  # group by (head, side), by closeness
    group = head[order] * 2 + (side[order] > 0)
    starts = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    rank = np.empty(size - 1, np.int64)
    rank[order] = np.arange(size - 1) - np.repeat(starts, np.diff(np.r_[starts, size - 1]))
    ends = np.r_[starts[1:], size - 1] - 1
    outer = np.zeros(size - 1, np.int64)
    outer[order[ends]] = 1
    return {
        "gp": padded_upos[grand], "dir": side, "dist": bucket_distance(head - words),
        "dkids": np.minimum(kids[words], 4), "dleft": dleft, "dright": dright,
        "rank": np.minimum(rank, 3), "outer": outer, "hkids": np.minimum(kids[head], 6),
    }  # fmt: skip


def arc_label_features(tokens: IntArray, heads: Heads, *, n_bits: int) -> IntArray:
    """Hashed label features of every arc ``heads[d] -> d``, shape ``(n, len(LABEL_TEMPLATES))``.

    Args:
        tokens: the token table of :meth:`parsing.graph.templates.TokenEncoder.encode`.
        heads: a tree, shape ``(n+1,)``.
        n_bits: features lie in ``[0, 2**n_bits)``.
    """
    head = heads[1:]
    tree = _tree_columns(heads, tokens[FIELDS.index("p")])
    table = np.vstack([
        tokens[:-1, 1:], tokens[:-1, head],
        *(tree[name] for name in _COLUMNS[2 * len(FIELDS):-1]),
        np.zeros(len(head), np.int64),
    ])  # fmt: skip
    templates = np.arange(len(LABEL_TEMPLATES), dtype=np.int64)[:, None]
    return hash_columns(9, templates, *(table[_SPEC[:, j]] for j in range(_SPEC.shape[1])),
                        n_bits=n_bits).T


class ArcLabeller(BaseEstimator):  # type: ignore[misc]
    """Labels the arcs of a tree with a linear SVM over hashed features.

    Args:
        C: inverse L2 regularisation strength of :class:`~sklearn.svm.LinearSVC`.
        max_iter: liblinear's iteration cap (raise it if it warns about convergence).
        n_bits: features are hashed into ``2**n_bits`` buckets before pruning.
        min_count: a feature must occur in this many training arcs to get a column.
        random_state: seeds liblinear's shuffling of the training arcs, so that the same
            data gives the same model (``None``: numpy's global state, not reproducible).

    Examples:
        >>> s = Sentence.from_words(["Dogs", "bark"], upos=["NOUN", "VERB"], heads=[2, 0],
        ...                         deprels=["nsubj", "root"])
        >>> labeller = ArcLabeller(min_count=1).fit([s, s])
        >>> labeller.predict([s])
        [['', 'nsubj', 'root']]
    """

    def __init__(
        self,
        *,
        C: float = 0.05,
        max_iter: int = 1000,
        n_bits: int = 22,
        min_count: int = 1,
        random_state: int | None = 0,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.n_bits = n_bits
        self.min_count = min_count
        self.random_state = random_state

    def fit(self, sentences: Sequence[Sentence]) -> Self:
        """Learn from the gold trees and labels of ``sentences``.

        On a partial tree (:attr:`Sentence.partial`) only the arcs a person set or confirmed
        (``Sentence.annotated``) are training examples: the labels the parsers filled in are
        left out of the loss (and their features add no columns). The tree around an
        annotated arc (its head's head, its dependents) is still read from the whole tree.

        Raises:
            ValueError: no sentence has an annotated arc to learn from.
        """
        self.encoder_ = TokenEncoder.build(sentences)
        kept = _annotated_rows(sentences)
        if sentences and not kept.any():
            raise ValueError("the labeller needs at least one annotated arc; every arc is unconfirmed")
        hashed = self._hashed(sentences, [s.heads for s in sentences])[kept]
        features, counts = np.unique(hashed, return_counts=True)
        self.columns_ = features[counts >= self.min_count]
        labels = [label for s in sentences for label in s.deprels[1:]]
        labels = [label for label, keep in zip(labels, kept.tolist(), strict=True) if keep]
        self.classes_ = np.array(sorted(set(labels)))
        target = np.searchsorted(self.classes_, labels)
        self.model_: LinearSVC | None = None
        if len(self.classes_) > 1:
            svm = LinearSVC(C=self.C, max_iter=self.max_iter, random_state=self.random_state)
            self.model_ = svm.fit(self._matrix(hashed), target)
            self.model_.coef_ = self.model_.coef_.astype(np.float32)  # half the memory, same labels
        return self

    def predict_proba(
        self, sentences: Sequence[Sentence], heads: Sequence[Heads] | None = None
    ) -> list[NDArray[np.float64]]:
        """Probability-like score of every label (in ``classes_`` order) for each arc: a
        softmax over the classifier's per-label margins.

        Args:
            sentences: the sentences.
            heads: one tree per sentence; ``None`` uses the sentences' own heads.

        Returns:
            One array per sentence, shape ``(n+1, len(classes_))``; row 0 (ROOT) is ``nan``.
        """
        trees = [s.heads for s in sentences] if heads is None else list(heads)
        if len(trees) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but {len(trees)} trees")
        hashed = self._hashed(sentences, trees)
        if not len(hashed):
            return [np.full((1, len(self.classes_)), np.nan) for _ in sentences]
        if self.model_ is None:
            proba = np.ones((len(hashed), 1))
        else:
            margins = self.model_.decision_function(self._matrix(hashed))
            if margins.ndim == 1:  # two labels: liblinear returns one margin
                margins = np.column_stack([-margins, margins])
            proba = np.exp(margins - margins.max(axis=1, keepdims=True))
            proba /= proba.sum(axis=1, keepdims=True)
        bounds = np.cumsum([0, *(len(s) for s in sentences)])
        nan_row = np.full((1, proba.shape[1]), np.nan)
        return [np.vstack([nan_row, proba[a:b]]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def predict(self, sentences: Sequence[Sentence], heads: Sequence[Heads] | None = None) -> list[list[str]]:
        """The most probable label of each arc: one list of ``n+1`` labels per sentence
        (``""`` for ROOT)."""
        return [self.labels_of(p) for p in self.predict_proba(sentences, heads)]

    def labels_of(self, proba: NDArray[np.float64]) -> list[str]:
        """Labels from one sentence's :meth:`predict_proba` rows (``""`` for ROOT)."""
        return ["", *self.classes_[proba[1:].argmax(axis=1)].tolist()]

    def _hashed(self, sentences: Sequence[Sentence], trees: Sequence[Heads]) -> IntArray:
        parts = [
            arc_label_features(self.encoder_.encode(s), np.asarray(h), n_bits=self.n_bits)
            for s, h in zip(sentences, trees, strict=True)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, len(LABEL_TEMPLATES)), np.int64)

    def _matrix(self, hashed: IntArray) -> sp.csr_matrix:
        """One row per arc over the training feature columns (unseen features dropped)."""
        where = np.minimum(np.searchsorted(self.columns_, hashed), len(self.columns_) - 1)
        known = self.columns_[where] == hashed
        rows = np.broadcast_to(np.arange(len(hashed))[:, None], hashed.shape)[known]
        data = np.ones(len(rows))
        return sp.csr_matrix((data, (rows, where[known])), shape=(len(hashed), len(self.columns_)))


def _annotated_rows(sentences: Sequence[Sentence]) -> NDArray[np.bool_]:
    """Which arcs (words ``1..n`` of every sentence, concatenated) are training examples: all
    of a whole tree's, the annotated ones of a partial tree's; shape ``(sum of n,)``."""
    parts = [np.asarray(s.annotated[1:], dtype=bool) if s.partial and s.annotated is not None
             else np.ones(len(s), dtype=bool) for s in sentences]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
