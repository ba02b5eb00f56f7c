"""The feed-forward action classifier of the neural transition parser, in numpy.

Chen & Manning (2014): a configuration is ``F_TOKENS`` token slots (each contributes the
embeddings of its word, its suffix, its UPOS and optionally its FEATS: the
:data:`TOKEN_TABLES` present in the parameters) and ``F_LABELS`` label slots; their
embeddings are concatenated into ``x`` and

    h = relu(x @ W1 + b1),   logits = h @ W2 + b2,   P(a | c) = softmax over valid actions.

Shapes: a batch of ``B`` configurations is ``tokens`` of shape ``(B, F_TOKENS, C)`` (the
ids of each slot's token in each of the ``C`` token tables) and ``labels`` of shape
``(B, F_LABELS)``; ``valid`` is a boolean ``(B, A)`` mask and ``gold`` a ``(B,)`` action
index. Training minimises the mean cross-entropy of the gold action under the softmax
restricted to valid actions, plus L2.

For decoding, the first layer is linear in each slot's embedding, so
``x @ W1 = sum_s E[id_s] @ W1_s``: :func:`token_table` precomputes ``E[word] @ W1_s +
E[suffix] @ W1_s + ...`` for every token being parsed and every slot once, and a
configuration's hidden layer is then a sum of ``F_TOKENS + F_LABELS`` gathered rows
instead of a ``(D, H)`` matrix product (Chen & Manning's pre-computation trick).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

Array = NDArray[np.floating]
IntArray = NDArray[np.int64]
Params = dict[str, Array]

F_TOKENS = 18
"""Token slots: s0..s2, b0..b2, two leftmost and rightmost children of s0 and s1, and the
leftmost child of the leftmost child and rightmost of the rightmost of s0 and s1."""

F_LABELS = 12
"""Label slots: the labels of the 12 child positions among the token slots."""

TOKEN_TABLES = ("word", "suffix", "tag", "feats")
"""The embedding tables of a token, in the order of the last axis of ``tokens`` (``"feats"``
only when the model has it); in ``x`` each table's ``F_TOKENS`` slots come in a block, then
the label slots."""


@dataclass(frozen=True, slots=True)
class Sizes:
    """Vocabulary sizes (embedding rows), embedding widths and layer sizes."""

    n_words: int
    n_suffixes: int
    n_tags: int
    n_labels: int
    n_actions: int
    word_dim: int = 50
    suffix_dim: int = 20
    tag_dim: int = 20
    n_feats: int = 0
    feats_dim: int = 20
    label_dim: int = 20
    hidden: int = 200

    @property
    def input_dim(self) -> int:
        """Width of the concatenated embeddings ``x``."""
        feats_dim = self.feats_dim if self.n_feats else 0
        token_dim = self.word_dim + self.suffix_dim + self.tag_dim + feats_dim
        return F_TOKENS * token_dim + F_LABELS * self.label_dim


def init_params(sizes: Sizes, rng: np.random.Generator, dtype: type[np.floating] = np.float32) -> Params:
    """Seeded initial weights: unit-variance embeddings, He-scaled layers, small biases."""

    def normal(*shape: int, scale: float = 1.0) -> Array:
        return (rng.standard_normal(shape) * scale).astype(dtype)

    params = {
        "word": normal(sizes.n_words, sizes.word_dim),
        "suffix": normal(sizes.n_suffixes, sizes.suffix_dim),
        "tag": normal(sizes.n_tags, sizes.tag_dim),
        "label": normal(sizes.n_labels, sizes.label_dim),
        "W1": normal(sizes.input_dim, sizes.hidden, scale=np.sqrt(2.0 / sizes.input_dim)),
        "b1": np.full(sizes.hidden, 0.01, dtype=dtype),
        "W2": normal(sizes.hidden, sizes.n_actions, scale=np.sqrt(1.0 / sizes.hidden)),
        "b2": np.zeros(sizes.n_actions, dtype=dtype),
    }
    if sizes.n_feats:
        params["feats"] = normal(sizes.n_feats, sizes.feats_dim)
    return params


def token_tables(params: Params) -> tuple[str, ...]:
    """The token tables this model has, in the order of ``tokens``' last axis."""
    return tuple(name for name in TOKEN_TABLES if name in params)


def _embed(params: Params, tokens: IntArray, labels: IntArray) -> Array:
    """Concatenated embeddings ``x``, shape ``(B, D)``: each token table's slots, then labels."""
    batch = len(tokens)
    blocks = [params[name][tokens[:, :, c]].reshape(batch, -1) for c, name in enumerate(token_tables(params))]
    return np.concatenate([*blocks, params["label"][labels].reshape(batch, -1)], axis=1)


def _masked_log_softmax(logits: Array, valid: NDArray[np.bool_]) -> Array:
    """Log-softmax over each row's valid entries; invalid entries are ``-inf``."""
    masked: Array = np.where(valid, logits, -np.inf)
    shifted: Array = masked - masked.max(axis=1, keepdims=True)
    with np.errstate(under="ignore"):
        normaliser: Array = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return shifted - normaliser


def log_probs(params: Params, tokens: IntArray, labels: IntArray, valid: NDArray[np.bool_]) -> Array:
    """Action log-probabilities, shape ``(B, A)`` (``-inf`` for invalid actions); no dropout."""
    hidden = np.maximum(_embed(params, tokens, labels) @ params["W1"] + params["b1"], 0)
    return _masked_log_softmax(hidden @ params["W2"] + params["b2"], valid)


def _scatter_rows(ids: IntArray, rows: Array, n_rows: int) -> Array:
    """``out[i] = sum of rows[j] with ids[j] == i``; shape ``(n_rows, rows.shape[1])``."""
    flat = ids.ravel()
    ones = np.ones(len(flat), dtype=rows.dtype)
    matrix = sp.csr_matrix((ones, (flat, np.arange(len(flat)))), shape=(n_rows, len(flat)))
    return cast(Array, np.asarray(matrix @ rows))


def loss_and_grads(
    params: Params,
    tokens: IntArray,
    labels: IntArray,
    valid: NDArray[np.bool_],
    gold: IntArray,
    *,
    dropout: float = 0.0,
    l2: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[float, Params]:
    """Mean cross-entropy of ``gold`` (+ ``l2/2 * |W|^2`` on W1, W2) and its gradients.

    Dropout (inverted, rate ``dropout``) is applied to ``x`` and to ``h`` when ``rng`` is given.
    """
    batch = len(gold)
    x = _embed(params, tokens, labels)
    keep_x = keep_h = None
    if rng is not None and dropout > 0:
        keep_x = (rng.random(x.shape) >= dropout).astype(x.dtype) / (1 - dropout)
        x = x * keep_x
    pre = x @ params["W1"] + params["b1"]
    hidden = np.maximum(pre, 0)
    if rng is not None and dropout > 0:
        keep_h = (rng.random(hidden.shape) >= dropout).astype(x.dtype) / (1 - dropout)
        hidden = hidden * keep_h
    logp = _masked_log_softmax(hidden @ params["W2"] + params["b2"], valid)
    rows = np.arange(batch)
    loss = -float(logp[rows, gold].mean())
    # d loss / d logits = (softmax - onehot) / B, zero on invalid actions.
    d_logits = np.exp(logp)
    d_logits[rows, gold] -= 1
    d_logits /= batch
    grads: Params = {"W2": hidden.T @ d_logits + l2 * params["W2"], "b2": d_logits.sum(axis=0)}
    d_hidden = d_logits @ params["W2"].T
    if keep_h is not None:
        d_hidden *= keep_h
    d_pre = d_hidden * (pre > 0)
    grads["W1"] = x.T @ d_pre + l2 * params["W1"]
    grads["b1"] = d_pre.sum(axis=0)
    d_x = d_pre @ params["W1"].T
    if keep_x is not None:
        d_x *= keep_x
    loss += 0.5 * l2 * float((params["W1"] ** 2).sum() + (params["W2"] ** 2).sum())
    start = 0
    for c, name in enumerate((*token_tables(params), "label")):
        ids = labels if name == "label" else tokens[:, :, c]
        width = ids.shape[1] * params[name].shape[1]
        d_rows = d_x[:, start : start + width].reshape(-1, params[name].shape[1])
        grads[name] = _scatter_rows(ids, d_rows, len(params[name]))
        start += width
    return loss, grads


class Adam:
    """Adam (Kingma & Ba 2015) over a dict of parameter arrays, updated in place."""

    def __init__(self, params: Params, *, learning_rate: float, beta1: float = 0.9, beta2: float = 0.999):
        self.learning_rate = learning_rate
        self.beta1, self.beta2 = beta1, beta2
        self.first = {name: np.zeros_like(value) for name, value in params.items()}
        self.second = {name: np.zeros_like(value) for name, value in params.items()}
        self.steps = 0

    def step(self, params: Params, grads: Params) -> None:
        """One update of every parameter from its gradient."""
        self.steps += 1
        correction1 = 1 - self.beta1**self.steps
        correction2 = 1 - self.beta2**self.steps
        rate = self.learning_rate * np.sqrt(correction2) / correction1
        for name, grad in grads.items():
            first, second = self.first[name], self.second[name]
            first *= self.beta1
            first += (1 - self.beta1) * grad
            second *= self.beta2
            second += (1 - self.beta2) * grad * grad
            params[name] -= (rate * first / (np.sqrt(second) + 1e-8)).astype(params[name].dtype)


def _slot_weights(params: Params, start: int, slots: int, dim: int) -> Array:
    """The rows of W1 for ``slots`` consecutive slots of width ``dim`` as ``(dim, slots * H)``."""
    hidden = params["W1"].shape[1]
    block = params["W1"][start : start + slots * dim].reshape(slots, dim, hidden)
    return block.transpose(1, 0, 2).reshape(dim, slots * hidden)


def token_table(params: Params, tokens: IntArray) -> Array:
    """First-layer contribution of each token in each token slot, shape ``(T, F_TOKENS, H)``.

    ``tokens`` (shape ``(T, C)``) holds the ids of ``T`` tokens in each of the C token tables.
    """
    table = np.zeros((len(tokens), F_TOKENS * params["W1"].shape[1]), dtype=params["W1"].dtype)
    start = 0
    for c, name in enumerate(token_tables(params)):
        dim = params[name].shape[1]
        table += params[name][tokens[:, c]] @ _slot_weights(params, start, F_TOKENS, dim)
        start += F_TOKENS * dim
    return table.reshape(len(tokens), F_TOKENS, -1)


def label_table(params: Params) -> Array:
    """First-layer contribution of each label id in each label slot, shape ``(F_LABELS, V, H)``."""
    label_dim = params["label"].shape[1]
    start = len(params["W1"]) - F_LABELS * label_dim
    by_label = params["label"] @ _slot_weights(params, start, F_LABELS, label_dim)
    return np.ascontiguousarray(by_label.reshape(len(params["label"]), F_LABELS, -1).transpose(1, 0, 2))


def log_probs_from_tables(
    params: Params,
    tokens: Array,
    labels_by_slot: Array,
    token_rows: IntArray,
    labels: IntArray,
    valid: NDArray[np.bool_],
) -> Array:
    """:func:`log_probs` from precomputed tables: ``token_rows`` ``(B, F_TOKENS)`` index the rows
    of ``tokens`` (from :func:`token_table`) and ``labels`` ``(B, F_LABELS)`` are label ids."""
    hidden = hidden_from_tables(params, tokens, labels_by_slot, token_rows, labels)
    return output_log_probs(params, hidden, valid)


def output_log_probs(params: Params, hidden: Array, valid: NDArray[np.bool_]) -> Array:
    """The output layer: action log-probabilities ``(B, A)`` (``-inf`` where not ``valid``)
    from the last hidden layer ``hidden`` ``(B, H)``."""
    return _masked_log_softmax(hidden @ params["W2"] + params["b2"], valid)


def hidden_from_tables(
    params: Params, tokens: Array, labels_by_slot: Array, token_rows: IntArray, labels: IntArray
) -> Array:
    """The last hidden layer ``relu(x @ W1 + b1)``, shape ``(B, H)``, from precomputed tables
    (arguments as :func:`log_probs_from_tables`)."""
    # Row (t, s) of the flattened (T * F_TOKENS, H) table is token t in slot s; gathering
    # one slot at a time and adding in place is about twice as fast as one (B, F, H) gather.
    flat_tokens = tokens.reshape(-1, tokens.shape[-1])
    flat_labels = labels_by_slot.reshape(-1, labels_by_slot.shape[-1])
    token_index = token_rows * F_TOKENS + np.arange(F_TOKENS)
    label_index = labels + np.arange(F_LABELS) * labels_by_slot.shape[1]
    pre = flat_tokens.take(token_index[:, 0], axis=0)
    for slot in range(1, F_TOKENS):
        pre += flat_tokens.take(token_index[:, slot], axis=0)
    for slot in range(F_LABELS):
        pre += flat_labels.take(label_index[:, slot], axis=0)
    hidden: Array = np.maximum(pre + params["b1"], 0)
    return hidden
