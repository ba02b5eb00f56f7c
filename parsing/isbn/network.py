"""The feed-forward ISBN ("NN" mean-field approximation, Titov 2008 eqs. 3.10-3.11) in numpy.

Each step ``t`` has a latent vector ``h_t`` of ``H`` units::

    h_t = tanh(b + sum_r J_r h_{R_r(t)} + sum_f E[f])

over the relations ``r`` of :mod:`parsing.isbn.structure` (a missing relation contributes
nothing) and the explicit features ``f`` of :mod:`parsing.isbn.encoding`. The decisions are a
masked softmax over the four moves, ``softmax(Wm h_t + bm)``, then for an arc a masked softmax
over labels, ``softmax(Wl h_t + bl)`` (LEFT) or ``softmax(Wr h_t + br)`` (RIGHT); labels seen
only on ROOT's arc are allowed only there and vice versa.

Training (:func:`loss_and_grads`) maximises the likelihood of gold derivations: their steps'
features and pointers are fixed in advance, so ``B`` sentences run together, step ``t`` of all
of them in one matrix product, then back-propagation through the step graph in reverse order.

Parameters (``Params``): ``E`` ``(R, H)`` (last row zero), ``J`` ``(7H, H)`` (the ``J_r``
stacked), ``b`` ``(H,)``, ``Wm`` ``(H, 4)``, ``bm`` ``(4,)``, ``Wl``/``Wr`` ``(H, L)``,
``bl``/``br`` ``(L,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from parsing.isbn.structure import N_RELATIONS
from parsing.isbn.system import LEFT, N_MOVES, RIGHT

Array = NDArray[np.floating]
IntArray = NDArray[np.int64]
Params = dict[str, NDArray[np.floating]]

NEG = -1e9
"""Logit of a masked decision."""


def init_params(n_rows: int, hidden: int, n_labels: int, rng: np.random.Generator,
                dtype: type[np.floating] = np.float32) -> Params:
    """Small random weights; the last row of ``E`` (the zero row) is zero."""
    embedding = rng.normal(0.0, 0.1, (n_rows, hidden))
    embedding[-1] = 0.0
    scale = 1.0 / np.sqrt(N_RELATIONS * hidden)
    params = {
        "E": embedding,
        "J": rng.normal(0.0, scale, (N_RELATIONS * hidden, hidden)),
        "b": np.zeros(hidden),
        "Wm": rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, N_MOVES)),
        "bm": np.zeros(N_MOVES),
        "Wl": rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, n_labels)),
        "bl": np.zeros(n_labels),
        "Wr": rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, n_labels)),
        "br": np.zeros(n_labels),
    }
    return {name: value.astype(dtype) for name, value in params.items()}


def hidden_step(params: Params, ids: IntArray, linked: Array) -> Array:
    """New latent states, shape ``(N, H)``, from feature rows ``ids`` ``(N, K)`` and the linked
    states ``linked`` ``(N, 7, H)`` (zeros where a relation is missing)."""
    pre = params["E"][ids].sum(axis=1) + params["b"] + linked.reshape(len(ids), -1) @ params["J"]
    out: Array = np.tanh(pre)
    return out


def log_softmax(logits: Array, mask: NDArray[np.bool_]) -> Array:
    """Log-probabilities over the ``True`` entries of ``mask`` (``-inf`` elsewhere), last axis."""
    masked = np.where(mask, logits, NEG)
    shifted = masked - masked.max(axis=-1, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    result: Array = np.where(mask, out, -np.inf)
    return result


def decisions(params: Params, hidden: Array, valid: NDArray[np.bool_], label_mask_left: NDArray[np.bool_],
              label_mask_right: NDArray[np.bool_]) -> tuple[Array, Array, Array]:
    """Log-probabilities of the moves ``(N, 4)`` and of the LEFT and RIGHT labels ``(N, L)``."""
    moves = log_softmax(hidden @ params["Wm"] + params["bm"], valid)
    left = log_softmax(hidden @ params["Wl"] + params["bl"], label_mask_left)
    right = log_softmax(hidden @ params["Wr"] + params["br"], label_mask_right)
    return moves, left, right


@dataclass(frozen=True, slots=True)
class Batch:
    """Gold derivations of ``B`` sentences padded to ``T`` steps.

    Attributes:
        ids: feature rows, ``(B, T, K)`` (padding: the zero row).
        pointers: linked steps, ``(B, T, 7)``, in ``0..T-1`` or ``T`` (none: a zero state).
        valid: valid moves, ``(B, T, 4)``.
        moves: gold move, ``(B, T)`` (``-1``: padding).
        labels: gold label id ``0..L-1`` of arc moves, ``(B, T)`` (``-1`` otherwise).
        label_masks: allowed labels of the step's arc, ``(B, T, L)`` (for RIGHT from ROOT the
            root labels, otherwise the others).
    """

    ids: IntArray
    pointers: IntArray
    valid: NDArray[np.bool_]
    moves: IntArray
    labels: IntArray
    label_masks: NDArray[np.bool_]


def forward(params: Params, batch: Batch) -> Array:
    """Latent states ``(B, T+1, H)`` (row ``T`` stays zero for missing relations)."""
    n_batch, n_steps, _ = batch.ids.shape
    states = np.zeros((n_batch, n_steps + 1, params["J"].shape[1]), dtype=params["J"].dtype)
    rows = np.arange(n_batch)[:, None]
    for t in range(n_steps):
        states[:, t] = hidden_step(params, batch.ids[:, t], states[rows, batch.pointers[:, t]])
    return states


def _softmax_grad(logits: Array, mask: NDArray[np.bool_], gold: IntArray) -> tuple[float, Array]:
    """Summed negative log-likelihood of ``gold`` and its gradient w.r.t. ``logits``."""
    log_probs = log_softmax(logits, mask)
    picked = log_probs[np.arange(len(gold)), gold]
    grad = np.exp(np.where(mask, log_probs, -np.inf))
    grad[np.arange(len(gold)), gold] -= 1.0
    return float(-picked.sum()), grad.astype(logits.dtype)


def embedding_grad(ids: IntArray, d_pre: Array, n_rows: int) -> Array:
    """Gradient of ``E`` ``(n_rows, H)`` given each step's feature rows ``ids`` ``(N, K)`` and
    pre-activation gradient ``d_pre`` ``(N, H)`` (a sparse one-hot product; the zero row stays 0)."""
    n_steps, n_features = ids.shape
    steps = np.repeat(np.arange(n_steps), n_features)
    ones = np.ones(n_steps * n_features, dtype=d_pre.dtype)
    incidence = sp.csr_matrix((ones, (ids.reshape(-1), steps)), shape=(n_rows, n_steps))
    grad: Array = np.asarray(incidence @ d_pre)
    grad[-1] = 0.0
    return grad


def loss_and_grads(params: Params, batch: Batch, *, l2: float = 0.0, dropout: float = 0.0,
                   rng: np.random.Generator | None = None) -> tuple[float, Params]:
    """Mean negative log-likelihood per step of the gold decisions (plus ``l2/2 |J, W|^2``) and
    its gradient for every parameter (back-propagation through the step graph).

    ``dropout``: rate of (inverted) dropout on the states the decisions read (not on the
    states passed to later steps); needs ``rng``."""
    states = forward(params, batch)
    n_batch, n_steps, _ = batch.ids.shape
    hidden = states.shape[2]
    real = batch.moves >= 0
    n_real = max(int(real.sum()), 1)
    flat = states[:, :n_steps][real]
    keep: Array | None = None
    if dropout > 0.0 and rng is not None:
        keep = ((rng.random(flat.shape) >= dropout) / (1.0 - dropout)).astype(flat.dtype)
        flat = flat * keep
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    loss, d_moves = _softmax_grad(flat @ params["Wm"] + params["bm"], batch.valid[real], batch.moves[real])
    grads["Wm"] = flat.T @ d_moves
    grads["bm"] = d_moves.sum(axis=0)
    d_flat = d_moves @ params["Wm"].T
    for move, w, b in ((LEFT, "Wl", "bl"), (RIGHT, "Wr", "br")):
        chosen = batch.moves[real] == move
        if not chosen.any():
            continue
        h = flat[chosen]
        part, d_labels = _softmax_grad(h @ params[w] + params[b], batch.label_masks[real][chosen],
                                       batch.labels[real][chosen])
        loss += part
        grads[w] = h.T @ d_labels
        grads[b] = d_labels.sum(axis=0)
        d_flat[chosen] += d_labels @ params[w].T
    if keep is not None:
        d_flat *= keep
    d_states = np.zeros_like(states)
    d_states[:, :n_steps][real] = d_flat
    rows = np.arange(n_batch)[:, None]
    d_embedding = np.zeros((n_batch, n_steps, hidden), dtype=states.dtype)
    for t in range(n_steps - 1, -1, -1):
        d_pre = d_states[:, t] * (1.0 - states[:, t] ** 2)
        linked = states[rows, batch.pointers[:, t]].reshape(n_batch, -1)
        grads["J"] += linked.T @ d_pre
        d_linked = (d_pre @ params["J"].T).reshape(n_batch, N_RELATIONS, hidden)
        owners = np.broadcast_to(rows, batch.pointers[:, t].shape)
        np.add.at(d_states, (owners, batch.pointers[:, t]), d_linked)
        d_embedding[:, t] = d_pre
    grads["b"] = d_embedding.sum(axis=(0, 1))
    grads["E"] = embedding_grad(batch.ids[real], d_embedding[real], len(params["E"]))
    scale = 1.0 / n_real
    for name in grads:
        grads[name] *= scale
    loss *= scale
    for name in ("J", "Wm", "Wl", "Wr"):
        loss += 0.5 * l2 * float((params[name] ** 2).sum())
        grads[name] += l2 * params[name]
    return loss, grads
