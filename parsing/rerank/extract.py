"""Feature matrices of candidate lists under a scoring model (the full neural member or the
ISBN parser, :mod:`parsing.rerank.scoring`).

One sentence's ``K`` candidates give a ``(K, D)`` matrix, ``D = 1 + (H+1) * A + W * E``
(the first component, the output-layer block flattened row-major from ``(H+1, A)``, then
``W`` adaptation word slots of the word-embedding width ``E``, neural member only). Matrices
are produced sentence by sentence from chunks of replayed derivations, so memory stays bounded
by a chunk: a dense matrix of 16 candidates at ``H = 200``, ``A = 81`` is about 1 MB (float64),
and the caller decides what to keep (:class:`~parsing.rerank.reranker.Reranker` keeps
efficient-TOP matrices sparse and the dense kinds only up to a memory budget).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

from parsing.rerank import features as ft
from parsing.rerank.candidates import Candidates
from parsing.rerank.replay import Steps
from parsing.rerank.scoring import Scorable, ScoringModel, scoring_model, word_positions
from parsing.types import Sentence

__all__ = ["KINDS", "dimension", "iter_features", "list_features", "word_positions"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

KINDS = ("fisher", "top", "top_eff")
"""Feature kinds: Fisher (eq. 6.4), TOP (eq. 6.9), TOP with the normaliser frozen."""

_CHUNK_STEPS = 40_000
"""Replay about this many derivation steps at a time (``H + A`` floats each, ~90 MB)."""


def dimension(parser: Scorable, n_words: int = 0) -> int:
    """``D`` of a feature matrix under ``parser`` with ``n_words`` adaptation word slots."""
    return scoring_model(parser).dimension(n_words)


def _blocks(steps: list[Steps], kind: str, model: ScoringModel, sentence: Sentence,
            words: Sequence[str]) -> tuple[FloatArray, FloatArray]:
    """Per derivation: log P ``(D,)`` and the flattened gradient block ``(D, F)``."""
    frozen = kind == "top_eff"
    rows = []
    for derivation in steps:
        block = ft.bag_block(derivation) if frozen else ft.fisher_block(derivation)
        parts = [block.ravel()]
        if words:
            parts.append(model.word_block(derivation, sentence, words, frozen=frozen).ravel())
        rows.append(np.concatenate(parts))
    return np.array([derivation.log_prob for derivation in steps]), np.stack(rows)


def list_features(log_probs: FloatArray, blocks: FloatArray, kind: str) -> FloatArray:
    """The ``(K, D)`` features of a list from its trees' ``log_probs`` ``(K,)`` and blocks
    ``(K, D-1)``; a one-tree list under a TOP kind gets ``v = 0`` and a zero derivative."""
    if kind == "fisher":
        return ft.fisher_features(log_probs, blocks)
    if len(log_probs) == 1:
        return np.zeros((1, 1 + blocks.shape[1]))
    return ft.top_features(log_probs, blocks)


def iter_features(
    parser: Scorable, sentences: Sequence[Sentence], candidates: Sequence[Candidates],
    kind: str, words: Sequence[str] = (),
) -> Iterator[FloatArray]:
    """The ``(K_i, D)`` feature matrix of each sentence's candidates, in order.

    Raises:
        ValueError: an unknown ``kind``, mismatched lengths, or a derivation the parser
            cannot replay.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown feature kind {kind!r}; expected one of {', '.join(KINDS)}")
    if len(sentences) != len(candidates):
        raise ValueError(f"{len(sentences)} sentences but {len(candidates)} candidate lists")
    model = scoring_model(parser)
    start = 0
    while start < len(sentences):
        stop, steps = start, 0
        while stop < len(sentences) and (stop == start or steps < _CHUNK_STEPS):
            steps += 2 * len(sentences[stop]) * sum(len(d) for d in candidates[stop].derivations)
            stop += 1
        chunk = range(start, stop)
        flat = [[d for derivations in candidates[i].derivations for d in derivations] for i in chunk]
        replayed = model.replay([sentences[i] for i in chunk], flat)
        for i, steps_of_sentence in zip(chunk, replayed, strict=True):
            log_probs, blocks = _blocks(steps_of_sentence, kind, model, sentences[i], words)
            tree_log_probs, tree_blocks = [], []
            at = 0
            for derivations in candidates[i].derivations:
                total, merged = ft.merge_derivations(log_probs[at : at + len(derivations)],
                                                     blocks[at : at + len(derivations)])
                tree_log_probs.append(total)
                tree_blocks.append(merged)
                at += len(derivations)
            yield list_features(np.array(tree_log_probs), np.stack(tree_blocks), kind)
        start = stop
