"""The ``lstm-hybrid`` member's network: word + character (+ UPOS) embeddings, a BiLSTM over the
sentence, and an MLP scoring every labelled arc-hybrid action from the BiLSTM vectors of the
configuration's slots (Kiperwasser & Goldberg 2016, §4).

Shapes: a batch of ``B`` sentences padded to ``T = max(n) + 1`` positions (ROOT at 0) gives
states ``(B, T, 2H)``. :meth:`TransitionNetwork.table` flattens them into a token table
``(1 + sum(n_b + 1), 2H)`` whose row 0 is a learned vector for an empty slot and whose sentence
``b`` starts (at its ROOT) at row ``offsets[b]``, the layout :func:`parsing.neural.search.step_inputs`
indexes. A configuration is ``SLOTS`` rows of that table; its scores are ``(A,)``, one per
labelled action (:class:`parsing.neural.search.ActionSpace`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from parsing.biaffine.batching import Batch
from parsing.biaffine.network import CHAR_ENCODERS
from parsing.biaffine.recurrent import run_bilstm

SLOTS = 4
"""s0, s1, s2 and b0: the first four token slots of :func:`parsing.neural.features.featurise`."""


@dataclass(frozen=True, slots=True)
class TransitionConfig:
    """Sizes of a :class:`TransitionNetwork` (vocabulary sizes, then layer widths)."""

    words: int
    chars: int
    upos: int
    actions: int
    word_dim: int = 100
    char_dim: int = 50
    char_hidden: int = 50
    char_encoder: str = "lstm"
    tag_dim: int = 25
    hidden: int = 200
    layers: int = 2
    mlp_dim: int = 100
    dropout: float = 0.33
    word_dropout: float = 0.25

    def as_dict(self) -> dict[str, int | float | str]:
        """The configuration as JSON-ready values (saved with the model)."""
        return asdict(self)


class TransitionNetwork(nn.Module):
    """Action scores of arc-hybrid configurations from a BiLSTM over the sentence."""

    def __init__(self, config: TransitionConfig) -> None:
        super().__init__()
        c = config
        self.config = config
        if c.char_encoder not in CHAR_ENCODERS:
            raise ValueError(f"char_encoder is one of {sorted(CHAR_ENCODERS)}, got {c.char_encoder!r}")
        self.words = nn.Embedding(c.words, c.word_dim, padding_idx=0)
        self.chars = CHAR_ENCODERS[c.char_encoder](c.chars, c.char_dim, c.char_hidden)
        size = c.word_dim + 2 * c.char_hidden
        if c.tag_dim:
            self.tags = nn.Embedding(c.upos, c.tag_dim, padding_idx=0)
            size += c.tag_dim
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = nn.LSTM(size, c.hidden, num_layers=c.layers, batch_first=True, bidirectional=True,
                               dropout=c.dropout if c.layers > 1 else 0.0)
        self.empty = nn.Parameter(torch.randn(2 * c.hidden) * 0.1)
        self.mlp = nn.Sequential(nn.Linear(SLOTS * 2 * c.hidden, c.mlp_dim), nn.Tanh(), nn.Dropout(c.dropout),
                                 nn.Linear(c.mlp_dim, c.actions))

    def states(self, batch: Batch) -> Tensor:
        """BiLSTM vectors of every position, ``(B, T, 2H)`` (ROOT at 0; padding past the end)."""
        words = batch.words
        if self.training and self.config.word_dropout > 0:
            drop = torch.rand(words.shape, device=words.device) < self.config.word_dropout
            words = torch.where(drop & batch.mask, torch.ones_like(words), words)
        parts = [self.words(words), self.chars(batch.chars, batch.char_lengths)[batch.form_ids]]
        if self.config.tag_dim:
            parts.append(self.tags(batch.tags["upos"]))
        inputs = self.dropout(torch.cat(parts, dim=-1))
        states, _ = run_bilstm(self.encoder, inputs, batch.lengths)
        result: Tensor = self.dropout(states)
        return result

    def table(self, states: Tensor, lengths: Tensor) -> Tensor:
        """The token table ``(1 + sum(lengths), 2H)``: the empty slot's vector, then each
        sentence's positions ``0..n`` (``lengths = n + 1``)."""
        rows = [self.empty[None, :], *(states[b, :int(size)] for b, size in enumerate(lengths.tolist()))]
        return torch.cat(rows, dim=0)

    def action_scores(self, table: Tensor, rows: Tensor) -> Tensor:
        """Scores ``(C, A)`` of ``C`` configurations whose slots are the table rows ``rows``
        ``(C, SLOTS)``."""
        scores: Tensor = self.mlp(table[rows].reshape(rows.shape[0], -1))
        return scores


def offsets_of(lengths: Tensor) -> Tensor:
    """The table row of each sentence's ROOT, ``(B,)``: 1, then after each earlier sentence.

    Examples:
        >>> offsets_of(torch.tensor([3, 2, 4])).tolist()
        [1, 4, 6]
    """
    return 1 + torch.cumsum(lengths, 0) - lengths
