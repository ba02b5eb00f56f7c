"""SVM meta-classifier: per word, which member's head to trust (Green 2013 §3.2; digest 003 §2.3).

Features of word ``d`` (vectorised per sentence, shape ``(n, F)``):

* ``"agreement"`` — Green's language-independent set: for every member pair ``i < j`` (in
  the order (0,1), (0,2), ..., (M-2, M-1)), 1 when they propose the same head for ``d``;
* ``"vote_share"`` — for every member, the fraction of members proposing that member's head;
* ``"upos"`` — one-hot UPOS of ``d`` (tags seen in tuning);
* ``"position"`` — one-hot quartile of ``d`` in the sentence and sentence length bucket
  (1-10, 11-20, 21-30, 31-40, 41+), the other features Green discusses.

Training (tuning data only): one instance per member whose head of ``d`` is right (Green's
multi-label to single-label transformation); words no member gets right are skipped. The
classifier is scikit-learn's :class:`~sklearn.svm.LinearSVC` (``kernel="linear"``) or
:class:`~sklearn.svm.SVC`. Decoding: decision values per member become per-word softmax
scores ``p[d, m]``; each proposed arc gets the highest score of the members proposing it and
the classifier's pick gets ``+1``; the maximum spanning tree of that matrix repairs cycles and
extra roots (the digest's recommendation for Green's under-specified repair), so the output
equals the classifier's choice whenever that is already a tree. Labels: vote weighted by
``p`` among the members that chose the winning head.

Conventions (see :mod:`parsing`): member heads ``(M, n+1)``; scores ``[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray
from sklearn.svm import SVC, LinearSVC

from parsing.base import BaseParser
from parsing.ensemble.base import Ensemble, FloatArray, MemberParses, stack_heads, vote_labels
from parsing.ensemble.voting import DEFAULT_MEMBERS
from parsing.types import Parse, Sentence

FEATURE_SETS: tuple[str, ...] = ("agreement", "vote_share", "upos", "position")


def word_features(member_heads: NDArray[np.intp], upos: Sequence[str], features: Sequence[str],
                  tags: Sequence[str]) -> FloatArray:
    """Feature rows of words ``1..n`` of one sentence, shape ``(n, F)``.

    Examples:
        >>> word_features(np.array([[-1, 0], [-1, 0], [-1, 1]]), ["<ROOT>", "X"], ["agreement"], [])
        array([[1., 0., 0.]])
    """
    heads = member_heads[:, 1:]  # (M, n)
    n_members, n = heads.shape
    same = heads[:, None, :] == heads[None, :, :]  # (M, M, n)
    blocks: list[FloatArray] = []
    unknown = set(features) - set(FEATURE_SETS)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}; known: {', '.join(FEATURE_SETS)}")
    if "agreement" in features:
        rows, cols = np.triu_indices(n_members, k=1)
        blocks.append(same[rows, cols].T.astype(np.float64))
    if "vote_share" in features:
        blocks.append(same.mean(axis=1).T.astype(np.float64))
    if "upos" in features:
        index = {tag: i for i, tag in enumerate(tags)}
        onehot = np.zeros((n, len(tags)))
        for d, tag in enumerate(upos[1:]):
            if tag in index:
                onehot[d, index[tag]] = 1.0
        blocks.append(onehot)
    if "position" in features:
        quartile = np.minimum((4 * np.arange(n)) // max(n, 1), 3)
        length = min((max(n, 1) - 1) // 10, 4)
        block = np.zeros((n, 9))
        block[np.arange(n), quartile] = 1.0
        block[:, 4 + length] = 1.0
        blocks.append(block)
    return np.hstack(blocks) if blocks else np.zeros((n, 0))


class MetaClassifier(Ensemble):
    """Per-word choice of the member to trust by an SVM, repaired into a tree.

    Args:
        members: parser instances (cloned) or member names.
        features: subset of :data:`FEATURE_SETS`.
        kernel: ``"linear"`` (LinearSVC) or an SVC kernel (``"rbf"``, ``"poly"``, ...).
        C: the SVM's regularisation constant.
        projective, single_root, tuning_folds, random_state: see
            :class:`~parsing.ensemble.base.Ensemble`.

    Attributes:
        classifier_: the fitted SVM, or ``None`` when tuning had a single class.
        classes_: the members seen as right in tuning (the SVM's classes).
        tags_: UPOS tags of the ``"upos"`` features.
    """

    name = "svm"
    description = "SVM meta-classifier choosing a member per word (Green 2013)"

    def __init__(
        self,
        members: Sequence[BaseParser | str] = DEFAULT_MEMBERS,
        *,
        features: Sequence[str] = FEATURE_SETS,
        kernel: str = "linear",
        C: float = 1.0,
        projective: bool = False,
        single_root: bool = True,
        tuning_folds: int = 2,
        random_state: int | None = 0,
    ) -> None:
        self.members = members
        self.features = features
        self.kernel = kernel
        self.C = C
        self.projective = projective
        self.single_root = single_root
        self.tuning_folds = tuning_folds
        self.random_state = random_state

    def _features(self, parses: Sequence[Parse], sentence: Sentence) -> FloatArray:
        return word_features(stack_heads(parses), sentence.upos, self.features, self.tags_)

    def fit_combiner(self, tuning: Sequence[Sentence], parses: MemberParses) -> Self:
        """Train the SVM on one instance per (word, member right about it) of ``tuning``."""
        if not tuning:
            raise ValueError("the meta-classifier needs tuning sentences")
        self.tags_ = sorted({tag for s in tuning for tag in s.upos[1:]})
        rows, labels = [], []
        for i, sentence in enumerate(tuning):
            member_parses = [member[i] for member in parses]
            x = self._features(member_parses, sentence)
            right = stack_heads(member_parses)[:, 1:] == sentence.heads[None, 1:]  # (M, n)
            word, member = np.nonzero(right.T)
            rows.append(x[word])
            labels.append(member)
        x_all, y_all = np.vstack(rows), np.concatenate(labels)
        if y_all.size == 0:
            raise ValueError("no member is right about any tuning word")
        self.classes_ = np.unique(y_all)
        self.classifier_: Any = None
        if self.classes_.size > 1:
            if self.kernel == "linear":
                model: Any = LinearSVC(C=self.C, max_iter=20000, random_state=self.random_state)
            else:
                model = SVC(C=self.C, kernel=self.kernel, random_state=self.random_state)
            self.classifier_ = model.fit(x_all, y_all)
        return self

    def member_scores(self, parses: Sequence[Parse], sentence: Sentence) -> FloatArray:
        """Per-word softmax over the members of the SVM's decision values, shape ``(n, M)``."""
        n_members, n = len(parses), len(sentence)
        decision = np.full((n, n_members), -1e3)
        if self.classifier_ is None:
            decision[:, self.classes_[0]] = 0.0
        else:
            values = self.classifier_.decision_function(self._features(parses, sentence))
            if values.ndim == 1:  # two classes: positive means classes_[1]
                values = np.stack([-values, values], axis=1)
            decision[:, self.classes_] = values
        shifted = np.exp(decision - decision.max(axis=1, keepdims=True))
        scores: FloatArray = shifted / shifted.sum(axis=1, keepdims=True)
        return scores

    def combine(self, parses: Sequence[Parse], sentence: Sentence) -> Parse:
        """The classifier's per-word choice, repaired into a tree by MST.

        Returns:
            The parse; ``arc_scores[d]`` is the highest score ``p`` of a member choosing
            the output head, ``extras["member_scores"]`` the ``(n, M)`` scores.
        """
        member_heads = stack_heads(parses)
        size = member_heads.shape[1]
        p = self.member_scores(parses, sentence)  # (n, M)
        matrix = np.full((size, size), -np.inf)
        deps = np.arange(1, size)
        for m in range(len(parses)):
            heads = member_heads[m, 1:]
            ok = (heads >= 0) & (heads < size) & (heads != deps)
            current = matrix[deps[ok], heads[ok]]
            matrix[deps[ok], heads[ok]] = np.maximum(np.nan_to_num(current, neginf=-1.0), p[ok, m])
        pick = member_heads[p.argmax(axis=1), deps]
        ok = (pick >= 0) & (pick < size) & (pick != deps)
        matrix[deps[ok], pick[ok]] += 1.0
        tree = self.decode(matrix)
        weights = np.vstack([np.zeros((1, len(parses))), p]).T  # (M, n+1)
        backing = (member_heads[:, 1:] == tree[None, 1:]) * p.T  # (M, n): p of members choosing it
        share = np.concatenate([[np.nan], backing.max(axis=0)])
        return Parse(heads=tree, deprels=vote_labels(tree, parses, weights),
                     arc_scores=share, extras={"member_scores": p})
