"""Data-defined reranking features (Titov 2008 ch. 6) with respect to the neural member's
OUTPUT-LAYER weights ``W = [W2; b2]``, shape ``(H+1, A)`` (hidden units, then the bias row);
for the ISBN parser, whose replayed rows are move and label decisions over one space of
``A = 4 + 2L`` columns (:mod:`parsing.rerank.isbn_replay`), ``W = [Wm | Wl | Wr; bm | bl | br]``.

For one derivation with per-step hidden vectors ``h_t`` ``(H,)``, action distributions
``p_t`` ``(A,)`` (zero on invalid actions, as the network's masked log-softmax gives) and
actions ``a_t``:

- ``log P = sum_t log p_t[a_t]``;
- Fisher block ``d log P / dW = sum_t [h_t; 1] (e_{a_t} - p_t)^T`` (:func:`fisher_block`);
  the masking is exact: ``d log p_t[a] / d logit_b = [a = b] - p_t[b]`` for valid ``b`` and 0
  for invalid ``b`` (their logits are replaced by ``-inf``);
- the "efficient" block with the normaliser frozen, ``sum_t [h_t; 1] e_{a_t}^T``: a bag of
  (decision, hidden state) pairs, non-zero only in the columns of actions taken
  (:func:`bag_block`).

A tree reached by several derivations has ``P(y) = sum_d P(d)`` and
``d log P(y) = sum_d softmax(log P(d)) d log P(d)`` (:func:`merge_derivations`).

Per candidate list of ``K`` trees with log-probabilities ``l`` ``(K,)`` and blocks ``G``
``(K, F)`` (flattened):

- Fisher features ``phi_FK(y) = (log P(y), G(y))`` (:func:`fisher_features`);
- TOP features ``phi_TK(y) = (v, dv)`` with ``v = log sum_{y' != y} P(y') - log P(y)`` and
  ``dv = sum_{y' != y} rho(y') G(y') - G(y)``, ``rho(y') = P(y') / sum_{y'' != y} P(y'')``
  (:func:`top_features`); the efficient TOP features use the bag blocks in ``dv``.

Adaptation slots (Titov 2008 ch. 7, re-parameterisation): for words the model treats as
unknown, give each its own copy of the unknown word's embedding row (the model is unchanged)
and take ``d log P`` with respect to those copies (:func:`word_block`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from parsing.rerank.replay import Steps

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def with_bias(hidden: FloatArray) -> FloatArray:
    """``[h_t; 1]``: shape ``(T, H)`` to ``(T, H+1)``."""
    return np.concatenate([hidden, np.ones((len(hidden), 1))], axis=1)


def _one_hot(actions: IntArray, n_actions: int) -> FloatArray:
    """``(T, A)`` indicator rows of ``actions`` ``(T,)``."""
    hot = np.zeros((len(actions), n_actions))
    hot[np.arange(len(actions)), actions] = 1.0
    return hot


def fisher_block(steps: Steps) -> FloatArray:
    """``d log P / dW``, shape ``(H+1, A)``: ``sum_t [h_t; 1] (e_{a_t} - p_t)^T``."""
    n_actions = steps.log_probs.shape[1]
    error = _one_hot(steps.actions, n_actions) - np.exp(steps.log_probs)
    block: FloatArray = with_bias(steps.hidden).T @ error
    return block


def bag_block(steps: Steps) -> FloatArray:
    """The frozen-normaliser derivative, shape ``(H+1, A)``: ``sum_t [h_t; 1] e_{a_t}^T``
    (column ``a`` is the sum of the hidden vectors of the steps that took ``a``)."""
    block = np.zeros((steps.hidden.shape[1] + 1, steps.log_probs.shape[1]))
    np.add.at(block.T, steps.actions, with_bias(steps.hidden))
    return block


def word_block(
    steps: Steps, word_of_position: IntArray, slot_weights: FloatArray, w2: FloatArray, n_words: int,
    *, frozen: bool = False,
) -> FloatArray:
    """``d log P`` with respect to per-word copies of the unknown word's embedding row.

    Args:
        steps: the replayed derivation.
        word_of_position: ``(n+1,)`` the slot index (``0..n_words-1``) of the word at each
            sentence position, ``-1`` for positions without a slot (ROOT, known words).
        slot_weights: ``(18, E, H)`` the rows of ``W1`` that multiply the word embedding of
            each token slot (``E`` = word embedding width).
        w2: ``(H, A)`` the output weights.
        n_words: number of word slots.
        frozen: freeze the normaliser (the efficient TOP variant): ``p_t`` is left out.

    Returns:
        ``(n_words, E)``: ``sum_t sum_s [word(s, t) = w] W1_s (W2 (e_{a_t} - p_t) * [h_t > 0])``.
    """
    out = np.zeros((n_words, slot_weights.shape[1]))
    if n_words == 0:
        return out
    error = _one_hot(steps.actions, w2.shape[1])
    if not frozen:
        error -= np.exp(steps.log_probs)
    delta = (error @ w2.T) * (steps.hidden > 0)  # (T, H): d log P / d pre-activation
    slot_word = np.where(steps.positions >= 0, word_of_position[np.maximum(steps.positions, 0)], -1)
    t, s = np.nonzero(slot_word >= 0)
    if len(t):
        contributions = np.einsum("keh,kh->ke", slot_weights[s], delta[t])
        np.add.at(out, slot_word[t, s], contributions)
    return out


def merge_derivations(log_probs: FloatArray, blocks: FloatArray) -> tuple[float, FloatArray]:
    """A tree's ``log P`` and block from its derivations' ``log_probs`` ``(D,)`` and
    ``blocks`` ``(D, F)``: the log of the summed probability and the posterior-weighted
    blocks (the exact derivative of ``log sum_d P(d)``)."""
    total = float(np.logaddexp.reduce(log_probs))
    weights = np.exp(log_probs - total)
    merged: FloatArray = weights @ blocks
    return total, merged


def fisher_features(log_probs: FloatArray, blocks: FloatArray) -> FloatArray:
    """``phi_FK`` of ``K`` candidates: ``(K, 1 + F)`` rows ``(log P(y), G(y))``."""
    return np.concatenate([log_probs[:, None], blocks], axis=1)


def top_features(log_probs: FloatArray, blocks: FloatArray) -> FloatArray:
    """``phi_TK`` of ``K >= 2`` candidates: ``(K, 1 + F)`` rows ``(v(y), dv(y))`` (module
    docstring), computed in log space.

    Raises:
        ValueError: fewer than two candidates (``v`` needs another tree in the list).
    """
    count = len(log_probs)
    if count < 2:
        raise ValueError("TOP features need at least two candidates")
    features = np.empty((count, 1 + blocks.shape[1]))
    for y in range(count):
        others = np.arange(count) != y
        normaliser = float(np.logaddexp.reduce(log_probs[others]))
        rho = np.exp(log_probs[others] - normaliser)
        features[y, 0] = normaliser - log_probs[y]
        features[y, 1:] = rho @ blocks[others] - blocks[y]
    return features
