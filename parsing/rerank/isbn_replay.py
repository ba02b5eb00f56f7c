"""ISBN derivations replayed for reranking (Titov 2008 ch. 5 parser, ch. 6 features): each
derivation's decisions as the rows of a :class:`~parsing.rerank.replay.Steps`.

An ISBN step ``t`` takes a move decision, ``softmax(Wm h_t + bm)`` over the 4 moves, and for an
arc a label decision, ``softmax(Wl h_t + bl)`` (LEFT) or ``softmax(Wr h_t + br)`` (RIGHT), the
labels masked to those seen on ROOT's arc (a RIGHT-ARC from ROOT) or elsewhere
(:mod:`parsing.isbn.network`). The rows live in one decision space of ``A = 4 + 2L`` columns
(moves, then LEFT labels, then RIGHT labels; :func:`parsing.isbn.system.decision_codes`, whose
codes are the derivations' actions):

- a move row: ``h_t``, the move log-distribution in columns 0-3 (``-inf`` elsewhere), the move;
- after an arc move, a label row: the same ``h_t``, the full masked label log-distribution in
  its block (``-inf`` elsewhere), the label's column.

So :mod:`parsing.rerank.features` applies unchanged: the Fisher block ``(H+1, A)`` is
``d log P / d [Wm | Wl | Wr]`` with the biases ``[bm | bl | br]`` in its last row, the bag
block is the frozen-normaliser variant, and ``Steps.log_prob`` is the derivation's log P. The
beam scores a hypothesis with the same full masked label softmax (it only *tries* the
``k_labels`` best labels, without renormalising), so a replayed final hypothesis has the
beam's score (up to float32 rounding).

The derivations of a batch move together through the beam's own step
(:func:`parsing.isbn.beam.latent_step`): a step's latent state links to earlier steps of the
same derivation through the relation pointers of :mod:`parsing.isbn.structure`.
``Steps.positions`` is one column of ``-1``: the ISBN parser has no adaptation word slots.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from parsing.isbn import ISBNParser, structure, system
from parsing.isbn.beam import Hypothesis, StateTable, latent_step
from parsing.neural.decoding import one_blas_thread
from parsing.rerank.replay import Steps
from parsing.types import Sentence

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def decision_width(parser: ISBNParser) -> int:
    """``A = 4 + 2L``: columns of the decision space of ``parser``'s ``L`` (lifted) labels."""
    return system.N_MOVES + 2 * len(parser.labels_)


def _label_rows(left: FloatArray, right: FloatArray, is_left: NDArray[np.bool_]) -> FloatArray:
    """``(N, 4 + 2L)`` label rows: the LEFT log-distribution ``left`` ``(N, L)`` where
    ``is_left``, else the RIGHT one ``right``, in its block; ``-inf`` elsewhere."""
    void = np.full((len(left), system.N_MOVES), -np.inf)
    blank = np.full(left.shape, -np.inf)
    rows: FloatArray = np.where(is_left[:, None], np.concatenate([void, left, blank], axis=1),
                                np.concatenate([void, blank, right], axis=1))
    return rows


@one_blas_thread
def replay(parser: ISBNParser, sentences: Sequence[Sentence],
           derivations: Sequence[Sequence[IntArray]]) -> list[list[Steps]]:
    """Replay ``derivations[i]`` (decision codes ``(T,)``, lifted label ids) of ``sentences[i]``.

    Returns:
        Per sentence, per derivation, its :class:`Steps`: ``T + arcs`` rows of ``H`` hidden
        units over ``A = 4 + 2L`` decisions (module docstring).

    Raises:
        ValueError: a code outside the decision space (or a bare arc move, codes 2 and 3), an
            invalid move, a label not allowed on that arc, or a derivation that goes on after
            the last word or stops before it.
    """
    n_labels = len(parser.labels_)
    width = decision_width(parser)
    owner = np.array([s for s, listed in enumerate(derivations) for _ in listed], dtype=np.int64)
    codes = [np.asarray(actions, dtype=np.int64).reshape(-1) for listed in derivations for actions in listed]
    decided = [system.split_codes(sequence, n_labels) for sequence in codes]
    if any((moves < 0).any() for moves, _ in decided):
        raise ValueError(f"a derivation has a decision code outside 0, 1 and 4..{width - 1}")
    hidden_size = parser.params_["J"].shape[1]
    if not len(owner):
        return [[] for _ in sentences]
    model = parser._model()
    table, offsets = parser.encoder_.tokens(sentences)
    states = StateTable(hidden_size, parser.params_["J"].dtype)
    hypotheses = [Hypothesis(system.start(len(sentences[s])), *structure.new_records(len(sentences[s])), 0.0,
                             system.N_MOVES) for s in owner.tolist()]
    lengths = np.array([len(sequence) for sequence in codes], dtype=np.int64)
    parts: list[tuple[IntArray, int, FloatArray, FloatArray, IntArray]] = [
        (np.zeros(0, dtype=np.int64), 0, np.zeros((0, hidden_size)), np.zeros((0, width)),
         np.zeros(0, dtype=np.int64))
    ]
    for step in range(int(lengths.max())):
        alive = np.flatnonzero(lengths > step)
        if any(system.is_final(hypotheses[d].state) for d in alive.tolist()):
            raise ValueError(f"a derivation goes on after its last word (step {step})")
        scored = latent_step(model, [(int(owner[d]), hypotheses[d]) for d in alive.tolist()], table, offsets,
                             states, None)
        move_log_probs, left, right = scored.decisions(model.params)
        moves = np.array([decided[d][0][step] for d in alive.tolist()], dtype=np.int64)
        labels = np.array([decided[d][1][step] for d in alive.tolist()], dtype=np.int64)
        rows = np.arange(len(alive))
        if not scored.valid[rows, moves].all():
            raise ValueError(f"a derivation takes an invalid move at step {step}")
        arc = labels >= 0
        label_rows = _label_rows(left[arc].astype(np.float64), right[arc].astype(np.float64),
                                 moves[arc] == system.LEFT)
        label_codes = np.array([codes[d][step] for d in alive[arc].tolist()], dtype=np.int64)
        if not np.isfinite(label_rows[np.arange(len(label_codes)), label_codes]).all():
            raise ValueError(f"a derivation gives an arc a label not allowed there at step {step}")
        move_rows = np.full((len(alive), width), -np.inf)
        move_rows[:, : system.N_MOVES] = move_log_probs
        hidden = scored.hidden.astype(np.float64)
        parts.append((alive, 2 * step, hidden, move_rows, moves))
        parts.append((alive[arc], 2 * step + 1, hidden[arc], label_rows, label_codes))
        for d, move, label in zip(alive.tolist(), moves.tolist(), labels.tolist(), strict=True):
            system.apply(hypotheses[d].state, move, label)
            hypotheses[d].previous = move
    if not all(system.is_final(hypothesis.state) for hypothesis in hypotheses):
        raise ValueError("a derivation stops before its last word")
    which = np.concatenate([part[0] for part in parts])
    order = np.concatenate([np.full(len(part[0]), part[1]) for part in parts])
    grouped = np.lexsort((order, which))  # by derivation, then move row before label row, in step order
    bounds = np.cumsum(np.bincount(which, minlength=len(owner)))[:-1]
    hidden_all, log_probs_all, actions_all = (
        np.split(np.concatenate([part[c] for part in parts])[grouped], bounds)
        for c in (2, 3, 4)
    )
    replayed: list[list[Steps]] = [[] for _ in sentences]
    for number, sentence in enumerate(owner.tolist()):
        rows_of = len(actions_all[number])
        replayed[sentence].append(Steps(hidden_all[number], log_probs_all[number], actions_all[number],
                                        np.full((rows_of, 1), -1, dtype=np.int64)))
    return replayed
