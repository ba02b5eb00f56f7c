"""The joint tagger-parser network (Dozat & Manning 2017; Straka 2018's UDPipe 2 without BERT).

Per word: a trained word embedding (word dropout: a training word is replaced by the unknown
id with probability ``word_dropout``) plus the final states of a character BiLSTM, plus (with
``tag_inputs``) embeddings of the input UPOS, XPOS and FEATS (with ``upos_input`` the UPOS
alone: the tagger's, with predicted tags), plus (when the user brings them)
a frozen pretrained word vector (``pretrained``, from a ``.vec`` file) and a pretrained
encoder's vector (``encoder_dim``, the average of the word's subword pieces in its last layer:
UDPipe 2 with BERT), plus (a revealing network, ``reveal_dim > 0``) embeddings of the word's
given head (its signed offset, :func:`~parsing.biaffine.batching.offset_bucket`) and given
label, zero vectors when none is given: arcs an annotator set are read by the BiLSTM, so they
inform their neighbours' scores. A BiLSTM over the sentence reads them; linear classifiers predict UPOS,
XPOS, FEATS and the lemma script from its states; two MLPs give each word a *dependent* and a
*head* view, and a biaffine product scores every arc::

    s[d, h] = dep_d^T U head_h + head_h^T b          (arc, shape (B, T, T))
    s[d, h, l] = dep'_d^T U_l head'_h + W_l [dep'_d; head'_h] + c_l   (label l, at one h per d)

Shapes: ``B`` sentences, ``T`` positions (ROOT first), ``H`` encoder state size (``2 * hidden``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial

import torch
from torch import Tensor, nn

from parsing.biaffine.batching import COLUMNS, IGNORE, REVEAL_BUCKETS, Batch
from parsing.biaffine.recurrent import run_bilstm

TARGETS = (*COLUMNS, "lemmas")
"""The per-word classifiers besides the parser."""


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """Vocabulary sizes and layer sizes; saved as JSON beside the weights."""

    words: int
    chars: int
    upos: int
    xpos: int
    feats: int
    lemmas: int
    deprels: int
    tag_inputs: bool = False
    upos_input: bool = False
    """Read the input UPOS alone (the tagger's, with predicted tags); ``tag_inputs`` reads all
    of :data:`~parsing.biaffine.batching.COLUMNS` and wins."""
    word_dim: int = 100
    char_dim: int = 50
    char_hidden: int = 50
    tag_dim: int = 32
    hidden: int = 200
    layers: int = 2
    arc_dim: int = 256
    label_dim: int = 100
    dropout: float = 0.33
    word_dropout: float = 0.2
    pretrained: int = 0
    """Rows of the frozen pretrained word vectors (0: none; :mod:`parsing.biaffine.vectors`)."""
    pretrained_dim: int = 0
    encoder_dim: int = 0
    """Size of a pretrained encoder's word vectors read as input (0: none;
    :mod:`parsing.biaffine.contextual`)."""
    reveal_dim: int = 0
    """Size of the given-head and given-label embeddings (0: the network reads no given arcs)."""
    reveal_cross: bool = False
    """Add a learned bias to each arc by how many given arcs it crosses (0, 1, 2, 3 or more)."""
    feat_values: int = 0
    """Rows of the per-category FEATS classifier (0: FEATS only as whole strings;
    :mod:`parsing.biaffine.feats`)."""
    feat_categories: int = 0
    """FEATS categories (``K``) and the most values one has (``M``), the shape of the
    ``feat_groups`` buffer."""
    feat_width: int = 0
    char_encoder: str = "lstm"
    """How characters become a word vector: ``"lstm"`` (a BiLSTM's final states) or ``"cnn"``
    (convolutions of widths 2-4, max-pooled over the word; :class:`CharCNN`)."""

    @property
    def input_columns(self) -> tuple[str, ...]:
        """The tag columns read as inputs (embedded and added to each word's vector)."""
        return COLUMNS if self.tag_inputs else ("upos",) if self.upos_input else ()

    def as_dict(self) -> dict[str, int | float | bool]:
        """The config as a JSON-ready dict (:class:`NetworkConfig` ``(**d)`` rebuilds it)."""
        return asdict(self)


def _mlp(size_in: int, size_out: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(size_in, size_out), nn.LeakyReLU(0.1), nn.Dropout(dropout))


def crossings(given: Tensor) -> Tensor:
    """How many given arcs each arc ``d -> h`` crosses: ``(B, T)`` given heads (-1: none) →
    ``(B, T, T)`` counts ``[b, d, h]`` (two arcs cross when exactly one end of either lies
    strictly inside the other's span)."""
    width = given.shape[1]
    position = torch.arange(width, device=given.device)
    known = given >= 0
    low = torch.minimum(position[None, :], given)[:, None, None, :]   # (B, 1, 1, K)
    high = torch.maximum(position[None, :], given)[:, None, None, :]
    d, h = position[:, None], position[None, :]
    low2 = torch.minimum(d, h)[None, :, :, None]                       # (1, T, T, 1)
    high2 = torch.maximum(d, h)[None, :, :, None]
    cross = ((low < low2) & (low2 < high) & (high < high2)) | ((low2 < low) & (low < high2) & (high2 < high))
    return (cross & known[:, None, None, :]).sum(-1)


class CharEncoder(nn.Module):
    """Character BiLSTM: each distinct form → its two final states, ``(U, C)`` → ``(U, 2 * char_hidden)``."""

    def __init__(self, chars: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(chars, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)

    def forward(self, chars: Tensor, lengths: Tensor) -> Tensor:
        return run_bilstm(self.lstm, self.embed(chars), lengths)[1]


class CharCNN(nn.Module):
    """Character CNN (Kim et al. 2016; Ma & Hovy 2016): each distinct form → max-pooled
    convolutions of widths 2, 3 and 4 over its character embeddings, concatenated and projected
    to the BiLSTM's size, ``(U, C)`` → ``(U, 2 * char_hidden)``. Positions past a word's end
    are left out of the pooling."""

    WIDTHS = (2, 3, 4)

    def __init__(self, chars: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(chars, dim, padding_idx=0)
        self.convolutions = nn.ModuleList(nn.Conv1d(dim, hidden, width, padding=width - 1)
                                          for width in self.WIDTHS)
        self.project = nn.Linear(len(self.WIDTHS) * hidden, 2 * hidden)

    def forward(self, chars: Tensor, lengths: Tensor) -> Tensor:
        embedded = self.embed(chars).transpose(1, 2)                    # (U, dim, C)
        pooled = []
        for width, convolution in zip(self.WIDTHS, self.convolutions, strict=True):
            out = torch.tanh(convolution(embedded))                     # (U, hidden, C + width - 1)
            # output position p covers characters p-width+1..p: keep the windows that start in the word
            starts = torch.arange(out.shape[-1], device=out.device) - (width - 1)
            inside = starts[None, :] < lengths.to(out.device)[:, None]  # (U, C + width - 1)
            pooled.append(out.masked_fill(~inside[:, None, :], float("-inf")).amax(-1))
        return torch.tanh(self.project(torch.cat(pooled, dim=-1)))


CHAR_ENCODERS = {"lstm": CharEncoder, "cnn": CharCNN}
"""The character encoders by :attr:`NetworkConfig.char_encoder`."""


class JointNetwork(nn.Module):
    """Tags, lemma scripts, arcs and labels of a :class:`~parsing.biaffine.batching.Batch`."""

    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.words = nn.Embedding(c.words, c.word_dim, padding_idx=0)
        if c.char_encoder not in CHAR_ENCODERS:
            raise ValueError(f"char_encoder is one of {sorted(CHAR_ENCODERS)}, got {c.char_encoder!r}")
        self.chars = CHAR_ENCODERS[c.char_encoder](c.chars, c.char_dim, c.char_hidden)
        size = c.word_dim + 2 * c.char_hidden
        if c.pretrained:  # frozen: unseen words keep their place beside the seen ones
            self.pretrained = nn.Embedding(c.pretrained, c.pretrained_dim, padding_idx=0)
            self.pretrained.weight.requires_grad_(False)
            size += c.pretrained_dim
        size += c.encoder_dim
        if c.input_columns:
            self.tag_embeddings = nn.ModuleDict({col: nn.Embedding(getattr(c, col), c.tag_dim, padding_idx=0)
                                                 for col in c.input_columns})
            size += len(c.input_columns) * c.tag_dim
        if c.reveal_dim:  # after the other inputs: a network without them draws the same weights as before
            self.given_heads = nn.Embedding(REVEAL_BUCKETS, c.reveal_dim, padding_idx=0)
            self.given_labels = nn.Embedding(c.deprels, c.reveal_dim, padding_idx=0)
            size += 2 * c.reveal_dim
        if c.reveal_cross:
            self.cross_bias = nn.Parameter(torch.zeros(4))
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = nn.LSTM(size, c.hidden, num_layers=c.layers, batch_first=True, bidirectional=True,
                               dropout=c.dropout if c.layers > 1 else 0.0)
        states = 2 * c.hidden
        self.classifiers = nn.ModuleDict({name: nn.Linear(states, getattr(c, name)) for name in COLUMNS})
        self.classifiers["lemmas"] = nn.Linear(states + 2 * c.char_hidden, c.lemmas)
        self.arc_dep, self.arc_head = _mlp(states, c.arc_dim, c.dropout), _mlp(states, c.arc_dim, c.dropout)
        self.label_dep = _mlp(states, c.label_dim, c.dropout)
        self.label_head = _mlp(states, c.label_dim, c.dropout)
        self.arc_weight = nn.Parameter(torch.zeros(c.arc_dim, c.arc_dim))
        self.arc_bias = nn.Parameter(torch.zeros(c.arc_dim))
        self.label_weight = nn.Parameter(torch.zeros(c.deprels, c.label_dim, c.label_dim))
        self.label_linear = nn.Linear(2 * c.label_dim, c.deprels)
        if c.feat_values:  # last: a network without it draws the same weights as before
            self.feat_classifier = nn.Linear(states, c.feat_values)
            self.register_buffer("feat_groups", torch.full((c.feat_categories, c.feat_width), -1))

    @property
    def device(self) -> torch.device:
        """Where the network's weights are (batches go there: :meth:`Batch.to`)."""
        return self.arc_weight.device

    def encode(self, batch: Batch) -> tuple[Tensor, Tensor]:
        """Encoder states ``(B, T, H)`` and character vectors ``(B, T, 2 * char_hidden)``."""
        words = batch.words
        if self.training and self.config.word_dropout > 0:
            drop = torch.rand(words.shape, device=words.device) < self.config.word_dropout
            words = torch.where(drop & batch.mask, torch.ones_like(words), words)
        chars = self.chars(batch.chars, batch.char_lengths)[batch.form_ids]
        parts = [self.words(words), chars]
        parts += [self.tag_embeddings[col](batch.tags[col]) for col in self.config.input_columns]
        if self.config.pretrained:
            if batch.pretrained is None:
                raise ValueError("this network reads pretrained word vectors: encode with their vocabulary")
            parts.append(self.pretrained(batch.pretrained))
        if self.config.encoder_dim:
            if batch.encoded is None:
                raise ValueError("this network reads a pretrained encoder's vectors: encode with the encoder")
            parts.append(batch.encoded)
        if self.config.reveal_dim:
            given_heads = batch.given_heads if batch.given_heads is not None else torch.zeros_like(words)
            given_labels = batch.given_labels if batch.given_labels is not None else torch.zeros_like(words)
            parts += [self.given_heads(given_heads), self.given_labels(given_labels)]
        inputs = self.dropout(torch.cat(parts, dim=-1))
        states, _ = run_bilstm(self.encoder, inputs, batch.lengths)
        return self.dropout(states), chars

    def tag_logits(self, states: Tensor, chars: Tensor) -> dict[str, Tensor]:
        """Scores of every tag and lemma script, ``(B, T, size of its vocabulary)`` each."""
        logits = {name: self.classifiers[name](states) for name in COLUMNS}
        logits["lemmas"] = self.classifiers["lemmas"](torch.cat([states, chars], dim=-1))
        return logits

    def feat_logits(self, states: Tensor) -> Tensor:
        """Scores of each FEATS category's values, ``(B, T, K, M)``; ``-inf`` past a category's
        values (``feat_groups[k]`` holds its rows of the classifier, -1 padded)."""
        groups = self.get_buffer("feat_groups")
        scores: Tensor = self.feat_classifier(states)[..., groups.clamp(min=0)]
        return scores.masked_fill(groups < 0, float("-inf"))

    def arc_scores(self, states: Tensor, lengths: Tensor, given: Tensor | None = None) -> Tensor:
        """``s[b, d, h]``, shape ``(B, T, T)``; ``-inf`` for a head past the sentence's end or ``h == d``.
        ``given``: the given heads (:attr:`Batch.given_positions`), read with ``reveal_cross``."""
        dep, head = self.arc_dep(states), self.arc_head(states)
        scores = torch.einsum("bda,ae,bhe->bdh", dep, self.arc_weight, head)
        scores = scores + torch.matmul(head, self.arc_bias)[:, None, :]
        if self.config.reveal_cross and given is not None:
            scores = scores + self.cross_bias[crossings(given).clamp(max=3)]
        width = states.shape[1]
        positions = torch.arange(width, device=states.device)
        invalid = ((positions[None, None, :] >= lengths.to(states.device)[:, None, None])
                   | torch.eye(width, dtype=torch.bool, device=states.device))
        return scores.masked_fill(invalid, float("-inf"))

    def label_scores(self, states: Tensor, heads: Tensor) -> Tensor:
        """Label scores of each word at head ``heads[b, d]`` (clamped to ``0..T-1``), ``(B, T, L)``."""
        dep, head = self.label_dep(states), self.label_head(states)
        index = heads.clamp(min=0)[..., None].expand(-1, -1, head.shape[-1])
        at_head = torch.gather(head, 1, index)
        bilinear = torch.einsum("bdi,lij,bdj->bdl", dep, self.label_weight, at_head)
        linear: Tensor = self.label_linear(torch.cat([dep, at_head], dim=-1))
        return bilinear + linear

    def loss(self, batch: Batch, morphology_weight: float = 1.0, label_smoothing: float = 0.0) -> Tensor:
        """Sum of the mean cross-entropies: tags, lemma scripts, heads (a softmax over each
        word's candidate heads), labels at the gold heads, and (with ``feat_values``) each
        FEATS category's value; the XPOS, FEATS and lemma terms are weighted by
        ``morphology_weight`` (UPOS, heads and labels by 1). ``label_smoothing`` moves that share
        of each tag, lemma-script and label target's mass evenly onto all classes (as UDPipe 2
        does); never on heads or FEATS category values, whose impossible candidates score ``-inf``."""
        states, chars = self.encode(batch)
        targets = batch.targets
        weights = {name: 1.0 if name == "upos" else morphology_weight for name in TARGETS}
        smoothed = partial(nn.functional.cross_entropy, ignore_index=IGNORE, label_smoothing=label_smoothing)
        losses = [weights[name] * smoothed(logits.flatten(0, 1), targets[name].flatten())
                  for name, logits in self.tag_logits(states, chars).items()
                  if bool((targets[name] != IGNORE).any())]
        arcs = self.arc_scores(states, batch.lengths, batch.given_positions)
        heads = targets["heads"]
        arcs = arcs.masked_fill(heads[..., None] == IGNORE, 0.0)  # rows without a target: no -inf-only rows
        losses.append(nn.functional.cross_entropy(arcs.flatten(0, 1), heads.flatten(), ignore_index=IGNORE))
        labels = self.label_scores(states, heads)
        losses.append(smoothed(labels.flatten(0, 1), targets["deprels"].flatten()))
        words = (targets["featcats"] != IGNORE).any(-1).sum() if self.config.feat_values else 0
        if self.config.feat_values and bool(words > 0):  # summed over categories, a mean over words
            losses.append(nn.functional.cross_entropy(self.feat_logits(states).flatten(0, 2),
                                                      targets["featcats"].flatten(), ignore_index=IGNORE,
                                                      reduction="sum") / words * morphology_weight)
        return torch.stack(losses).sum()
