"""Mini-batches of gold derivations for :func:`parsing.isbn.network.loss_and_grads`, and word
dropout of their features."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from parsing.isbn.encoding import ISBNEncoder
from parsing.isbn.network import Batch
from parsing.isbn.oracle import Derivation
from parsing.isbn.system import RIGHT
from parsing.types import Sentence

IntArray = NDArray[np.int64]


def make_batch(derivations: Sequence[Derivation], ids: Sequence[IntArray], zero_row: int,
               root_labels: NDArray[np.bool_], other_labels: NDArray[np.bool_]) -> Batch:
    """The derivations padded to the longest (padding steps point at the zero state and the
    zero embedding row and have move ``-1``)."""
    n_batch, n_steps = len(derivations), max(len(d) for d in derivations)
    n_features = ids[0].shape[1]
    batch_ids = np.full((n_batch, n_steps, n_features), zero_row, dtype=np.int64)
    pointers = np.full((n_batch, n_steps, 7), n_steps, dtype=np.int64)
    valid = np.ones((n_batch, n_steps, 4), dtype=bool)
    moves = np.full((n_batch, n_steps), -1, dtype=np.int64)
    labels = np.full((n_batch, n_steps), -1, dtype=np.int64)
    masks = np.ones((n_batch, n_steps, len(root_labels)), dtype=bool)
    for b, (derivation, rows) in enumerate(zip(derivations, ids, strict=True)):
        t = len(derivation)
        batch_ids[b, :t] = rows
        pointers[b, :t] = np.where(derivation.pointers >= 0, derivation.pointers, n_steps)
        valid[b, :t] = derivation.valid
        moves[b, :t] = derivation.moves
        labels[b, :t] = derivation.labels
        to_root = derivation.root_arc & (derivation.moves == RIGHT)
        masks[b, :t] = np.where(to_root[:, None], root_labels, other_labels)
    return Batch(batch_ids, pointers, valid, moves, labels, masks)


def batch_order(lengths: Sequence[int], batch_size: int, rng: np.random.Generator) -> list[IntArray]:
    """Sentence indices in batches of similar derivation length (less padding), batches and
    ties shuffled."""
    noise = rng.random(len(lengths))
    order = np.lexsort((noise, np.asarray(lengths)))
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches)).tolist()]


def drop_probabilities(encoder: ISBNEncoder, sentences: Sequence[Sentence], ids: Sequence[IntArray],
                       alpha: float) -> list[NDArray[np.float64]]:
    """Word-dropout probability of every feature of every training step, shapes ``(T, K)`` as
    ``ids``: a FORM (LEMMA) seen ``c`` times in ``sentences`` is dropped with probability
    ``alpha / (alpha + c)``; other features and unknown values never (all zero when ``alpha <= 0``)."""
    if alpha <= 0.0:
        return [np.zeros(rows.shape) for rows in ids]
    forms, lemmas, unknown = encoder.word_templates()
    starts = np.where(forms | lemmas, unknown, 0)
    counts = np.zeros(encoder.n_rows(), dtype=np.float64)
    form_counts = Counter(form.lower() for s in sentences for form in s.forms[1:])
    lemma_counts = Counter(lemma for s in sentences for lemma in s.lemmas[1:])
    for column in np.flatnonzero(forms | lemmas).tolist():
        vocabulary, seen = (encoder.forms, form_counts) if forms[column] else (encoder.lemmas, lemma_counts)
        for value, number in vocabulary.index.items():
            counts[starts[column] + number] = seen[value]
    droppable = forms | lemmas
    return [np.where(droppable & (counts[rows] > 0), alpha / (alpha + counts[rows]), 0.0) for rows in ids]


def word_dropped(rows: IntArray, drop: NDArray[np.float64], unknown: IntArray,
                 rng: np.random.Generator) -> IntArray:
    """``rows`` ``(T, K)`` with each feature replaced by its column's ``unknown`` row ``(K,)``
    with its probability in ``drop`` ``(T, K)`` (one uniform draw per feature from ``rng``)."""
    hit = rng.random(drop.shape) < drop
    return np.where(hit, np.broadcast_to(unknown, rows.shape), rows)
