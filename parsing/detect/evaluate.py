"""How well a ranking of arcs finds the wrong ones, and trees with errors planted at random.

* :func:`roc_auc`: the chance a random wrong arc outranks a random right one (ties count half);
* :func:`share_in_top`: the share of the wrong arcs among the ``fraction`` of words ranked
  highest. Words tied at the cut are taken in proportion (the expected share over random orders
  of the tie), so a score with many ties (a vote share of nine members) is not favoured or
  penalised by an arbitrary order;
* :func:`corrupt`: copies of gold trees with a share of their arcs changed at random, seeded:
  half get a new head (any word that keeps the tree a tree, the root word excepted), half a new
  universal label (another label of the treebank).

Shapes: scores and flags over all words of a corpus, ``(W,)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.scorer.metrics import universal
from parsing.types import Sentence

FloatArray = NDArray[np.float64]


def roc_auc(scores: ArrayLike, wrong: ArrayLike) -> float:
    """Area under the ROC curve of ``scores`` for ``wrong`` (Mann-Whitney, ties half).

    Raises:
        ValueError: ``wrong`` has one class only.

    Examples:
        >>> roc_auc([0.9, 0.1, 0.5, 0.5], [1, 0, 1, 0])
        0.875
    """
    from scipy.stats import rankdata

    score = np.asarray(scores, dtype=np.float64)
    flag = np.asarray(wrong, dtype=bool)
    positives, negatives = int(flag.sum()), int((~flag).sum())
    if positives == 0 or negatives == 0:
        raise ValueError("an AUC needs both wrong and right arcs")
    ranks = rankdata(score)
    return float((ranks[flag].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def top_inclusion(scores: ArrayLike, fraction: float) -> FloatArray:
    """How much of each word falls in the top ``ceil(fraction * W)`` words, shape ``(W,)``: 1
    above the cut, 0 below, the tied block at the cut shares what is left equally.

    Examples:
        >>> top_inclusion([0.9, 0.5, 0.5, 0.1], 0.5).tolist()
        [1.0, 0.5, 0.5, 0.0]
    """
    score = np.asarray(scores, dtype=np.float64)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], not {fraction}")
    k = min(math.ceil(round(fraction * len(score), 9)), len(score))
    if k == 0:
        return np.zeros(len(score), dtype=np.float64)
    cut = np.sort(score)[::-1][k - 1]
    above = score > cut
    tied = score == cut
    inclusion: FloatArray = above.astype(np.float64)
    inclusion[tied] = (k - above.sum()) / tied.sum()
    return inclusion


def share_in_top(scores: ArrayLike, wrong: ArrayLike, fraction: float,
                 among: ArrayLike | None = None) -> float:
    """The share of the wrong arcs (those also in ``among``, when given) that the top
    ``fraction`` of all words holds (:func:`top_inclusion`).

    Examples:
        >>> share_in_top([0.9, 0.5, 0.5, 0.1], [1, 1, 0, 1], 0.5)
        0.5
    """
    flag = np.asarray(wrong, dtype=bool)
    if among is not None:
        flag = flag & np.asarray(among, dtype=bool)
    if not flag.any():
        return float("nan")
    return float(top_inclusion(scores, fraction)[flag].sum() / flag.sum())


def corrupt(sentences: Sequence[Sentence], rate: float, *, seed: int = 0,
            labels: Sequence[str] | None = None) -> tuple[list[Sentence], list[NDArray[np.bool_]]]:
    """Copies of ``sentences`` (gold trees) with ``round(rate * W)`` arcs changed (module docstring).

    Args:
        labels: the universal labels to draw new ones from (default: those of ``sentences``).

    Returns:
        The corrupted copies and, per sentence, which words were changed (shape ``(n+1,)``,
        entry 0 False). Every copy is still a tree with the same root word.
    """
    rng = np.random.default_rng(seed)
    vocabulary = sorted(set(labels) if labels is not None else
                        {universal(x) for s in sentences for x in s.deprels[1:]})
    words = [(i, d) for i, s in enumerate(sentences) for d in range(1, len(s) + 1)]
    chosen = rng.choice(len(words), size=min(round(rate * len(words)), len(words)), replace=False)
    copies = [_copy(s) for s in sentences]
    changed = [np.zeros(len(s) + 1, dtype=bool) for s in sentences]
    for pick in sorted(chosen.tolist()):
        i, d = words[pick]
        tree = copies[i]
        moved = bool(rng.random() < 0.5) and tree.heads[d] != 0 and _move_head(tree, d, rng)
        if not moved:
            options = [x for x in vocabulary if x != universal(tree.deprels[d])]
            if not options:
                continue
            tree.deprels[d] = str(options[int(rng.integers(len(options)))])
        changed[i][d] = True
    return copies, changed


def _move_head(tree: Sentence, dep: int, rng: np.random.Generator) -> bool:
    """Give ``dep`` a random new head that is neither itself, its head, ROOT nor one of its
    descendants (so the tree stays a tree with the same root); False when none exists."""
    heads = tree.heads
    candidates = []
    for head in range(1, len(heads)):
        if head in (dep, int(heads[dep])):
            continue
        node = head
        while node > 0 and node != dep:
            node = int(heads[node])
        if node != dep:
            candidates.append(head)
    if not candidates:
        return False
    heads[dep] = candidates[int(rng.integers(len(candidates)))]
    return True


def _copy(sentence: Sentence) -> Sentence:
    return Sentence(list(sentence.forms), list(sentence.lemmas), list(sentence.upos), list(sentence.xpos),
                    list(sentence.feats), sentence.heads.copy(), list(sentence.deprels), sentence.sent_id)


def summary(scores: ArrayLike, wrong: ArrayLike, *, fraction: float = 0.3,
            shares: ArrayLike | None = None, high_share: float = 0.8) -> dict[str, Any]:
    """AUC, the share of wrong arcs in the top ``fraction``, and (with the head vote ``shares``)
    the same share among the wrong arcs whose vote share is ``>= high_share``."""
    flag = np.asarray(wrong, dtype=bool)
    result: dict[str, Any] = {"words": int(len(flag)), "wrong": int(flag.sum()),
                              "auc": round(roc_auc(scores, flag), 4),
                              f"wrong_in_top{round(100 * fraction)}":
                                  round(share_in_top(scores, flag, fraction), 4)}
    if shares is not None:
        high = np.asarray(shares, dtype=np.float64) >= high_share - 1e-9
        result["wrong_high_share"] = int((flag & high).sum())
        result[f"high_share_recall_top{round(100 * fraction)}"] = round(
            share_in_top(scores, flag, fraction, among=high), 4)
    return result


__all__ = ["corrupt", "roc_auc", "share_in_top", "summary", "top_inclusion"]
