"""Sentences → padded index tensors for :mod:`parsing.biaffine.network`.

Shapes: ``B`` sentences, ``T = max(n) + 1`` positions (position 0 is ROOT, a word of its own
with the form :data:`~parsing.types.ROOT`), ``U`` distinct forms in the batch, ``C`` their
longest character count (capped at :data:`MAX_CHARS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from torch import Tensor

from parsing.biaffine.feats import build_feature_vocabulary, feature_groups, feature_targets
from parsing.biaffine.vectors import lookup
from parsing.biaffine.vocab import Vocabulary, lemma_script
from parsing.constraints import Constraints
from parsing.types import Sentence

MAX_CHARS = 40
"""Characters read of a word (the rest are cut; very long tokens are URLs and numbers)."""

IGNORE = -100
"""Target index of positions without a target (ROOT, padding, an unknown head or label)."""

COLUMNS = ("upos", "xpos", "feats")
"""The tag columns the network predicts (and reads, with gold tags as inputs)."""

REVEAL_REACH = 20
"""Signed head offsets of a given arc farther than this are read as this far (:func:`offset_bucket`)."""

REVEAL_BUCKETS = 2 + 2 * REVEAL_REACH
"""Ids of :func:`offset_bucket`: 0 (no head given), 1 (ROOT), then the clipped signed offsets."""

Contextual = Callable[[Sequence[Sentence]], Tensor]
"""Vectors of a pretrained encoder for sentences, shape ``(B, T, E)`` (ROOT's row and padding
zeros): :class:`parsing.biaffine.contextual.ContextualEmbedder`."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Index tensors of ``B`` sentences.

    Attributes:
        words: word ids, shape ``(B, T)``; 0 (padding) past each sentence's end.
        lengths: ``n + 1`` per sentence, shape ``(B,)``.
        chars: character ids of the batch's distinct forms, shape ``(U, C)``.
        char_lengths: their lengths, shape ``(U,)`` (at least 1).
        form_ids: each position's row of ``chars``, shape ``(B, T)``.
        tags: input tag ids by column (:data:`COLUMNS`), each ``(B, T)``.
        targets: gold ids, each ``(B, T)`` with :data:`IGNORE` at ROOT and padding: the tag
            columns, ``lemmas`` (lemma-script ids), ``heads`` (head positions) and ``deprels``;
            with a ``featvals`` vocabulary also ``featcats``, ``(B, T, K)``: each of the ``K``
            FEATS categories' value as a position in its group (:mod:`parsing.biaffine.feats`).
        pretrained: rows of the pretrained word vectors (:mod:`parsing.biaffine.vectors`),
            ``(B, T)``; None without vectors.
        encoded: a pretrained encoder's word vectors, ``(B, T, E)``; None without one.
        given_heads: each word's given head as an :func:`offset_bucket` id (0: not given),
            ``(B, T)``; None when no arcs are given (the revealing member reads zeros).
        given_labels: each word's given label id (0: not given), ``(B, T)``; None likewise.
        given_positions: each word's given head position (-1: not given), ``(B, T)``; None likewise.
    """

    words: Tensor
    lengths: Tensor
    chars: Tensor
    char_lengths: Tensor
    form_ids: Tensor
    tags: dict[str, Tensor]
    targets: dict[str, Tensor]
    pretrained: Tensor | None = None
    encoded: Tensor | None = None
    given_heads: Tensor | None = None
    given_labels: Tensor | None = None
    given_positions: Tensor | None = None

    @property
    def mask(self) -> Tensor:
        """True at the words ``1..n`` of each sentence, shape ``(B, T)``."""
        positions = torch.arange(self.words.shape[1], device=self.words.device)
        return (positions[None, :] >= 1) & (positions[None, :] < self.lengths[:, None])

    def to(self, device: torch.device) -> Batch:
        """The same batch with every tensor on ``device`` (itself when it is there already)."""
        if self.words.device == device:
            return self
        moved: dict[str, object] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Tensor):
                moved[item.name] = value.to(device)
            elif isinstance(value, dict):
                moved[item.name] = {key: tensor.to(device) for key, tensor in value.items()}
        return replace(self, **moved)  # type: ignore[arg-type]


def input_tags(sentence: Sentence, column: str) -> list[str]:
    """The tags of ``column`` a network reads as input: the sentence's own, except UPOS where the
    tagger's are kept beside other tags (:attr:`~parsing.types.Sentence.tagger_upos`: the gold
    UPOS are then targets, or a self-tagging member's replaced the tagger's)."""
    if column == "upos" and sentence.tagger_upos is not None:
        return sentence.tagger_upos
    tags: list[str] = getattr(sentence, column)
    return tags


def _padded(rows: Sequence[Sequence[int]], width: int, fill: int) -> Tensor:
    """``rows`` right-padded with ``fill`` to ``width``, shape ``(len(rows), width)``."""
    return torch.tensor([list(row) + [fill] * (width - len(row)) for row in rows], dtype=torch.long)


def _target(values: Sequence[int], known: Sequence[bool]) -> list[int]:
    """Target ids with :data:`IGNORE` at ROOT and wherever ``known`` is False."""
    return [IGNORE] + [v if ok else IGNORE for v, ok in zip(values[1:], known[1:], strict=True)]


def offset_bucket(dependent: int, head: int) -> int:
    """The input id of a given arc ``dependent -> head``: 1 for ROOT, else the signed offset
    ``head - dependent`` clipped to ``±REVEAL_REACH``, as ``2..REVEAL_BUCKETS-1`` (0 is "no head given").

    Examples:
        >>> offset_bucket(3, 0), offset_bucket(3, 2), offset_bucket(3, 4), offset_bucket(1, 90)
        (1, 21, 22, 41)
    """
    if head == 0:
        return 1
    offset = max(-REVEAL_REACH, min(REVEAL_REACH, head - dependent))
    return 2 + REVEAL_REACH + offset - (offset > 0)


def _given(sentences: Sequence[Sentence], given: Sequence[Constraints | None], width: int,
           deprels: Vocabulary) -> tuple[Tensor, Tensor, Tensor]:
    """:attr:`Batch.given_heads`, :attr:`Batch.given_labels` and :attr:`Batch.given_positions`
    of the arcs ``given`` per sentence."""
    heads = torch.zeros((len(sentences), width), dtype=torch.long)
    labels = torch.zeros((len(sentences), width), dtype=torch.long)
    positions = torch.full((len(sentences), width), -1, dtype=torch.long)
    for b, arcs in enumerate(given):
        if arcs is None:
            continue
        for dependent, head in arcs.heads.items():
            heads[b, dependent] = offset_bucket(dependent, head)
            positions[b, dependent] = head
        for dependent, label in arcs.labels.items():
            labels[b, dependent] = deprels.ids([label])[0]
    return heads, labels, positions


def encode(sentences: Sequence[Sentence], vocabularies: Mapping[str, Vocabulary],
           contextual: Contextual | None = None, *, given: Sequence[Constraints | None] | None = None,
           hide_given: bool = False) -> Batch:
    """The tensors of ``sentences`` under ``vocabularies`` (keys ``words``, ``chars``,
    :data:`COLUMNS`, ``lemmas``, ``deprels``, and ``pretrained`` with word vectors); unknown
    strings get the unknown id as inputs and :data:`IGNORE` as targets. ``contextual`` adds an
    encoder's vectors (:attr:`Batch.encoded`). ``given``: arcs (and labels) whose heads are
    known, one :class:`~parsing.constraints.Constraints` or None per sentence, read as inputs
    (:attr:`Batch.given_heads`, :attr:`Batch.given_labels`); with ``hide_given`` their head
    and label targets are :data:`IGNORE` (a revealed arc is not a lesson)."""
    width = max(len(s) for s in sentences) + 1
    forms = sorted({form for s in sentences for form in s.forms})
    row_of = {form: i for i, form in enumerate(forms)}
    char_rows = [vocabularies["chars"].ids(list(form[:MAX_CHARS])) or [1] for form in forms]
    char_width = max(len(row) for row in char_rows)
    words = _padded([vocabularies["words"].ids(s.forms) for s in sentences], width, 0)
    tags = {c: _padded([vocabularies[c].ids(input_tags(s, c)) for s in sentences], width, 0) for c in COLUMNS}
    targets: dict[str, list[list[int]]] = {name: [] for name in (*COLUMNS, "lemmas", "heads", "deprels")}
    for sentence in sentences:
        for column in COLUMNS:
            values = getattr(sentence, column)
            ids = vocabularies[column].ids(values)
            targets[column].append(_target(ids, [i > 1 for i in ids]))
        scripts = [lemma_script(f, lemma) for f, lemma in zip(sentence.forms, sentence.lemmas, strict=True)]
        ids = vocabularies["lemmas"].ids(scripts)
        known = [i > 1 and lemma != "_" for i, lemma in zip(ids, sentence.lemmas, strict=True)]
        targets["lemmas"].append(_target(ids, known))
    arcs_of: Sequence[Constraints | None] = given if given is not None else [None] * len(sentences)
    for sentence, arcs in zip(sentences, arcs_of, strict=True):
        hidden = set(arcs.heads) if hide_given and arcs is not None else set()
        heads = [int(h) for h in sentence.heads]
        known = [h >= 0 and d not in hidden for d, h in enumerate(heads)]
        targets["heads"].append(_target(heads, known))
        ids = vocabularies["deprels"].ids(sentence.deprels)
        targets["deprels"].append(_target(ids, [i > 1 and ok for i, ok in zip(ids, known, strict=True)]))
    padded_targets = {name: _padded(rows, width, IGNORE) for name, rows in targets.items()}
    if "featvals" in vocabularies:
        padded_targets["featcats"] = _feature_targets(sentences, vocabularies["featvals"], width)
    given_heads, given_labels, given_positions = (_given(sentences, given, width, vocabularies["deprels"])
                                                  if given is not None else (None, None, None))
    return Batch(
        words=words,
        lengths=torch.tensor([len(s) + 1 for s in sentences], dtype=torch.long),
        chars=_padded(char_rows, char_width, 0),
        char_lengths=torch.tensor([len(row) for row in char_rows], dtype=torch.long),
        form_ids=_padded([[row_of[f] for f in s.forms] for s in sentences], width, 0),
        tags=tags,
        targets=padded_targets,
        pretrained=_padded([lookup(vocabularies["pretrained"], s.forms) for s in sentences], width, 0)
        if "pretrained" in vocabularies else None,
        encoded=contextual(sentences) if contextual is not None else None,
        given_heads=given_heads,
        given_labels=given_labels,
        given_positions=given_positions,
    )


def _feature_targets(sentences: Sequence[Sentence], vocabulary: Vocabulary, width: int) -> Tensor:
    """``targets["featcats"]``: per word and FEATS category its value's position in the category's
    group, :data:`IGNORE` at ROOT, padding and unseen values, shape ``(B, T, K)``."""
    groups = feature_groups(vocabulary)
    unknown = [IGNORE] * len(groups)
    rows = [[unknown, *(feature_targets(f, vocabulary, groups, IGNORE) for f in s.feats[1:]),
             *[unknown] * (width - len(s) - 1)] for s in sentences]
    return torch.tensor(rows, dtype=torch.long).reshape(len(sentences), width, len(groups))


def build_vocabularies(sentences: Sequence[Sentence], *, min_word_count: int = 1,
                       feature_categories: bool = False) -> dict[str, Vocabulary]:
    """Every vocabulary :func:`encode` needs, from training sentences (ROOT's strings included,
    so position 0 has ids of its own); with ``feature_categories`` also ``featvals``, the FEATS
    categories' values (:mod:`parsing.biaffine.feats`)."""
    scripts = (lemma_script(f, lemma) for s in sentences
               for f, lemma in zip(s.forms[1:], s.lemmas[1:], strict=True) if lemma != "_")
    return {
        "words": Vocabulary.build((f for s in sentences for f in s.forms), min_count=min_word_count),
        "chars": Vocabulary.build(c for s in sentences for f in s.forms for c in f[:MAX_CHARS]),
        **{c: Vocabulary.build(v for s in sentences for v in getattr(s, c)) for c in COLUMNS},
        "lemmas": Vocabulary.build(scripts) if any(s.lemmas[1:] != ["_"] * len(s) for s in sentences)
        else Vocabulary.build([lemma_script("_", "_")]),
        "deprels": Vocabulary.build(d for s in sentences for d in s.deprels[1:]),
        **({"featvals": build_feature_vocabulary(f for s in sentences for f in s.feats[1:])}
           if feature_categories else {}),
    }


def vocabulary_sizes(vocabularies: Mapping[str, Vocabulary]
                     ) -> tuple[dict[str, Any], list[tuple[str, list[int]]]]:
    """The :class:`~parsing.biaffine.network.NetworkConfig` sizes that ``vocabularies`` set
    and the FEATS categories' groups (``[]`` without ``featvals``;
    :func:`~parsing.biaffine.feats.feature_groups`)."""
    sizes: dict[str, Any] = {name: len(vocabulary) for name, vocabulary in vocabularies.items()
                             if name not in ("featvals", "pretrained")}
    groups = feature_groups(vocabularies["featvals"]) if "featvals" in vocabularies else []
    if groups:
        sizes.update(feat_values=len(vocabularies["featvals"]), feat_categories=len(groups),
                     feat_width=max(len(ids) for _, ids in groups))
    return sizes, groups
