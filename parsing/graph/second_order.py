"""Second-order graph-based parser with adjacent siblings: McDonald & Pereira (2006).

A tree's score is the sum of its arc scores (the first-order features of
:func:`parsing.graph.templates.arc_features`) and of one sibling part per word: its head,
its previous adjacent sibling on the same side (the head itself for a first child) and the
word (:func:`parsing.graph.templates.sibling_features`). Decoding is the second-order
projective Eisner algorithm; ``non_projective=True`` then applies McDonald & Pereira's
approximate rearrangement (hill-climbing over single head changes).

Pruning, for speed and memory: sibling parts are scored only for arcs among each word's
``prune_k`` best heads under the arc part of the model, plus ROOT and the two adjacent words
(so a projective single-rooted tree always exists); other arcs are forbidden. Sentences longer
than ``max_length`` words (whose ``(n+1)**3`` sibling table would take over ~100 MB) are
decoded with the arc part alone (first-order Eisner, or Chu-Liu-Edmonds when
``non_projective``).

Conventions: index 0 is ROOT; ``arc_scores[dep, head]``; ``sibling_scores[head, sibling,
child]`` as in :mod:`parsing.decoders.second_order`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.constraints import Constraints, decode_forced, force_scores
from parsing.decoders.first_order import mst
from parsing.decoders.second_order import eisner_second_order, second_order_rearrange
from parsing.graph.model import GraphParser, Weights, _arc_scores
from parsing.graph.templates import IntArray, sibling_features
from parsing.types import Heads, Scores, Sentence

BoolArray = NDArray[np.bool_]
Positions = NDArray[np.intp]


class SecondOrderParser(GraphParser):
    """Arc + adjacent-sibling linear parser trained online (averaged perceptron or MIRA).

    Args:
        non_projective: after second-order Eisner, rearrange greedily into a possibly
            non-projective tree.
        prune_k: candidate heads per word kept for second-order decoding (besides ROOT and
            the adjacent words).
        max_length: longer sentences are decoded first-order (see the module docstring).
        max_iter, warm_start, warm_epochs, learner, C, patience, n_bits, min_count, labeller_C,
            random_state: as for
            :class:`~parsing.graph.first_order.FirstOrderParser`.

    Attributes:
        encoder_, weights_, raw_weights_, n_steps_, n_iter_, dev_uas_, labeller_: as for
            :class:`~parsing.graph.first_order.FirstOrderParser` (the weights hold arc and
            sibling features). :meth:`score_arcs` gives the arc part of the scores only, and
            ``Parse.arc_scores`` is the softmax over heads of that arc part (a confidence
            proxy); :meth:`score_parts` gives both tables.

    Examples:
        >>> from parsing.types import Sentence
        >>> s = Sentence.from_words(["Big", "dogs", "bark"], upos=["ADJ", "NOUN", "VERB"],
        ...                         heads=[2, 3, 0], deprels=["amod", "nsubj", "root"])
        >>> parser = SecondOrderParser(max_iter=2, n_bits=16).fit([s, s])
        >>> parser.predict([s])[0].heads.tolist()
        [-1, 2, 3, 0]
    """

    name = "graph2"
    parse_cost = 3.4
    description = "graph-based, second order with siblings (McDonald & Pereira 2006): second-order Eisner"

    def __init__(
        self,
        *,
        non_projective: bool = False,
        prune_k: int = 10,
        max_length: int = 150,
        max_iter: int = 10,
        warm_start: bool = False,
        warm_epochs: int = 1,
        learner: str = "mira",
        C: float = 0.1,
        patience: int = 2,
        n_bits: int = 22,
        min_count: int = 2,
        labeller_C: float = 0.05,
        random_state: int | None = 0,
    ) -> None:
        self.non_projective = non_projective
        self.prune_k = prune_k
        self.max_length = max_length
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.learner = learner
        self.C = C
        self.patience = patience
        self.n_bits = n_bits
        self.min_count = min_count
        self.labeller_C = labeller_C
        self.random_state = random_state

    def score_parts(self, sentence: Sentence) -> tuple[Scores, NDArray[np.float64]]:
        """The tables second-order decoding maximises over, for the score-level ensemble.

        Returns:
            ``arc_scores`` of shape ``(n+1, n+1)`` (``[dep, head]``, ``-inf`` for arcs
            pruned away, on row 0 and on the diagonal) and ``sibling_scores`` of shape
            ``(n+1, n+1, n+1)`` (``[head, sibling, child]``, 0 for parts never scored).

        Raises:
            ValueError: the sentence is longer than ``max_length`` words.
        """
        if len(sentence) > self.max_length:
            raise ValueError(f"sentence of {len(sentence)} words > max_length={self.max_length}")
        tokens = self._tokens(sentence)
        scores = _arc_scores(self._arc_features(tokens), self.weights_)
        return self._tables(tokens, scores, self.weights_)

    def _tables(
        self, tokens: IntArray, scores: Scores, weights: Weights
    ) -> tuple[Scores, NDArray[np.float64]]:
        size = len(scores)
        allowed = candidate_arcs(scores, self.prune_k)
        head, sibling, child = candidate_siblings(allowed)
        features = sibling_features(tokens, head, sibling, child, n_bits=self.n_bits)
        siblings = np.zeros((size, size, size))
        siblings[head, sibling, child] = weights[features].sum(axis=-1, dtype=np.float64)
        return np.where(allowed, scores, -np.inf), siblings

    def _decode(self, tokens: IntArray, arcs: IntArray | None, weights: Weights,
                constraints: Constraints | None = None, scores: Scores | None = None) -> tuple[Heads, Scores]:
        """Second-order decoding; with ``constraints`` the arc scores are forced first
        (:func:`~parsing.constraints.force_scores`), so pruning keeps each forced arc (the only
        finite one of its row) and every decoder excludes the other heads. When the forced
        arcs admit no projective tree, rearrangement starts from the first-order forced tree."""
        if scores is None:
            if arcs is None:
                raise ValueError("_decode needs the arc features or their scores")
            scores = _arc_scores(arcs, weights)
        forced = scores if constraints is None else force_scores(scores, constraints)
        if len(scores) - 1 > self.max_length:
            if constraints is not None:
                return decode_forced(scores, constraints, projective=not self.non_projective), scores
            return mst(scores, projective=not self.non_projective), scores
        pruned, siblings = self._tables(tokens, forced, weights)
        try:
            heads = eisner_second_order(pruned, siblings)
        except ValueError:
            if constraints is None:
                raise
            heads = decode_forced(pruned, constraints)  # non-projective forced arcs
        if self.non_projective:
            heads = second_order_rearrange(heads, pruned, siblings)
        return heads, scores

    def _tree_features(self, tokens: IntArray, arcs: IntArray, heads: Heads) -> IntArray:
        words = np.arange(1, len(heads))
        previous = previous_siblings(heads)
        parts = sibling_features(tokens, heads[1:], previous[1:], words, n_bits=self.n_bits)
        return np.concatenate([arcs[words, heads[1:]].reshape(-1), parts.reshape(-1)])


def candidate_arcs(scores: Scores, k: int) -> BoolArray:
    """Arcs kept for second-order decoding: each word's ``k`` best heads, ROOT and its neighbours.

    Args:
        scores: arc scores ``[dep, head]``, shape ``(n+1, n+1)`` (``-inf`` on row 0 and the
            diagonal).
        k: best heads kept per word.

    Returns:
        Shape ``(n+1, n+1)``, ``[dep, head]``; row 0 and the diagonal are false.

    Examples:
        >>> s = np.full((4, 4), -np.inf); s[1:, :] = [[0, -np.inf, 1, 5], [0, 3, -np.inf, 1],
        ...                                          [0, 9, 2, -np.inf]]
        >>> candidate_arcs(s, 1).astype(int).tolist()
        [[0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]
    """
    size = len(scores)
    allowed = np.zeros((size, size), dtype=bool)
    if size - 2 <= k:
        allowed[1:] = True
    else:
        best = np.argpartition(-scores[1:], k, axis=1)[:, :k]
        allowed[np.arange(1, size)[:, None], best] = True
        words = np.arange(1, size)
        allowed[words, 0] = True
        allowed[words, words - 1] = True
        allowed[words[:-1], words[:-1] + 1] = True
    np.fill_diagonal(allowed, False)
    return allowed


def candidate_siblings(allowed: BoolArray) -> tuple[Positions, Positions, Positions]:
    """Every sibling part ``(head, sibling, child)`` a tree of ``allowed`` arcs can contain.

    ``child`` attaches to ``head`` (allowed), and ``sibling`` is ``head`` itself or a word
    strictly between them that may attach to ``head``.

    Returns:
        ``head, sibling, child``, parallel arrays of positions.

    Examples:
        >>> allowed = np.zeros((3, 3), bool); allowed[1, 0] = allowed[2, 0] = True
        >>> [part.tolist() for part in candidate_siblings(allowed)]
        [[0, 0, 0], [0, 0, 1], [1, 2, 2]]
    """
    child, head = np.nonzero(allowed)
    size = len(allowed)
    position = np.arange(size)[None, :]
    low = np.minimum(head, child)[:, None]
    high = np.maximum(head, child)[:, None]
    inside = allowed.T[head] & (position > low) & (position < high)  # (pairs, sibling)
    pair, sibling = np.nonzero(inside)
    return (
        np.concatenate([head, head[pair]]).astype(np.intp),
        np.concatenate([head, sibling]).astype(np.intp),
        np.concatenate([child, child[pair]]).astype(np.intp),
    )


def previous_siblings(heads: Heads) -> Positions:
    """Each word's previous adjacent sibling: the child of its head nearest to it between
    them, or the head itself for a first child on its side.

    Args:
        heads: a tree, shape ``(n+1,)``.

    Returns:
        Shape ``(n+1,)``; entry 0 is ``-1``.

    Examples:
        >>> previous_siblings(np.array([-1, 3, 3, 0, 3, 3])).tolist()
        [-1, 2, 3, 0, 3, 4]
    """
    words = np.arange(1, len(heads))
    head = heads[1:]
    order = np.lexsort((words, head))  # grouped by head, left to right
    ordered_words, ordered_heads = words[order], head[order]
    previous = ordered_heads.copy()
    same = ordered_heads[1:] == ordered_heads[:-1]
    right = same & (ordered_words[:-1] > ordered_heads[:-1])  # both right of the head
    previous[1:][right] = ordered_words[:-1][right]
    left = same & (ordered_words[1:] < ordered_heads[1:])  # both left of the head
    previous[:-1][left] = ordered_words[1:][left]
    result = np.full(len(heads), -1, dtype=np.intp)
    result[words[order]] = previous
    return result
