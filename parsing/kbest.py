"""Beam decoding helpers shared by the probabilistic members (``neural``, ``isbn``): sentences
chunked by length for batched beams, a beam's final hypotheses as a distribution over distinct
trees (a k-best list), and a parse of one of them with each arc's posterior.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from parsing.types import Heads, Parse

KBest = list[tuple[Heads, list[str], float]]
"""``[(heads (n+1,), deprels (n+1), probability), ...]``, most probable first, probabilities
summing to 1 over the list."""

Derivations = tuple[Heads, list[str], float, list[tuple[NDArray[np.int64], float]]]
"""A listed tree, its probability over the list and its derivations ``(actions, log P)``."""


def length_chunks(lengths: Sequence[int], tokens: int) -> list[list[int]]:
    """Sentence indices sorted by length and cut into chunks of about ``tokens`` words (ROOT
    counted), so one batched beam search decodes sentences of similar length together.

    Examples:
        >>> length_chunks([5, 1, 3, 9], tokens=8)
        [[1, 2, 0], [3]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    chunks: list[list[int]] = [[]]
    size = 0
    for i in order:
        if size >= tokens:
            chunks.append([])
            size = 0
        chunks[-1].append(i)
        size += lengths[i] + 1
    return [chunk for chunk in chunks if chunk]


def tree_distribution(derivations: Iterable[tuple[Heads, list[str], float]]) -> KBest:
    """Distinct trees of ``(heads, deprels, log P)`` derivations, their probabilities summed
    over the derivations reaching them and normalised over the list, best first (ties keep
    the order of first appearance).

    Examples:
        >>> tree = (np.array([-1, 0]), ["", "root"])
        >>> [round(p, 2) for _, _, p in tree_distribution([(*tree, np.log(0.2)), (*tree, np.log(0.2)),
        ...                                                   (np.array([-1, 0]), ["", "dep"], np.log(0.6))])]
        [0.6, 0.4]
    """
    trees: dict[tuple[bytes, tuple[str, ...]], tuple[Heads, list[str], float]] = {}
    for heads, deprels, log_prob in derivations:
        key = (heads.tobytes(), tuple(deprels))
        previous = trees[key][2] if key in trees else -np.inf
        trees[key] = (heads, deprels, float(np.logaddexp(previous, log_prob)))
    log_probs = np.array([log_prob for _, _, log_prob in trees.values()])
    probs = np.exp(log_probs - np.logaddexp.reduce(log_probs))
    probs /= probs.sum()
    listed = list(trees.values())
    order = np.argsort(-probs, kind="stable").tolist()
    return [(listed[j][0], listed[j][1], float(probs[j])) for j in order]


Derived = tuple[Heads, list[str], NDArray[np.int64], float]
"""One derivation of a beam: its tree ``(heads, deprels)``, its actions and its log P."""


def derivation_lists(derived: Iterable[Derived]) -> list[Derivations]:
    """The k-best list (:func:`tree_distribution`) of derivations ``(heads, deprels, actions,
    log P)``, each tree with the derivations that reach it, in the order given.

    Examples:
        >>> tree, other = (np.array([-1, 0]), ["", "root"]), (np.array([-1, 0]), ["", "dep"])
        >>> listed = derivation_lists([(*tree, np.array([1]), np.log(0.2)),
        ...                            (*other, np.array([2]), np.log(0.6)),
        ...                            (*tree, np.array([3]), np.log(0.2))])
        >>> [(deprels[1], round(p, 2), [a.tolist() for a, _ in paths]) for _, deprels, p, paths in listed]
        [('dep', 0.6, [[2]]), ('root', 0.4, [[1], [3]])]
    """
    derived = list(derived)
    paths: dict[tuple[bytes, tuple[str, ...]], list[tuple[NDArray[np.int64], float]]] = {}
    for heads, deprels, actions, log_prob in derived:
        paths.setdefault((heads.tobytes(), tuple(deprels)), []).append((actions, log_prob))
    listed = tree_distribution((heads, deprels, log_prob) for heads, deprels, _, log_prob in derived)
    return [(heads, deprels, prob, paths[(heads.tobytes(), tuple(deprels))])
            for heads, deprels, prob in listed]


def list_parse(kbest: KBest, rank: int = 0) -> Parse:
    """The ``rank``-th tree of a k-best list as a parse: ``arc_scores[d]`` is the list's
    posterior of ``d``'s arc (the probability of the trees sharing it), ``extras["kbest"]`` the
    list and ``extras["rank"]`` the position."""
    heads, deprels, _ = kbest[rank]
    all_heads = np.stack([tree_heads for tree_heads, _, _ in kbest])
    probs = np.array([prob for _, _, prob in kbest])
    posterior = ((all_heads == heads) * probs[:, None]).sum(axis=0).clip(0.0, 1.0)
    posterior[0] = np.nan
    return Parse(heads.copy(), list(deprels), posterior, extras={"kbest": kbest, "rank": rank})
