"""The sentence and parse types every parser, decoder and scorer shares.

Conventions (see the package docstring): index 0 is ROOT; ``heads`` has shape ``(n+1,)``
with ``heads[0] == -1``; ``scores[dep, head]`` has shape ``(n+1, n+1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

Heads = NDArray[np.intp]
"""Head of every position, shape ``(n+1,)``; ``heads[0] == -1``."""

Scores = NDArray[np.float64]
"""Arc scores, shape ``(n+1, n+1)``; ``scores[dep, head]``."""

ROOT = "<ROOT>"
"""Form, lemma and tags given to position 0."""

NO_HEAD = -1
"""Head value of ROOT, and of words whose head is unknown (``_`` in CoNLL-U)."""


@dataclass(slots=True)
class Sentence:
    """One sentence's syntactic words as parallel columns over positions ``0..n``.

    Multiword-token ranges (``1-2``) and empty nodes (``3.1``) are not words and are not
    here; :mod:`parsing.conllu_io` keeps them for output.

    Attributes:
        forms, lemmas, upos, xpos, feats, deprels: ``n+1`` strings each; position 0 holds
            :data:`ROOT` (``deprels[0] == ""``). Missing values are ``"_"``.
        heads: shape ``(n+1,)``; ``heads[0] == -1``; ``-1`` also marks an unknown head.
        sent_id: the ``# sent_id`` comment, when there is one.
        annotated: for a *partial tree*, which words' arcs a person set or confirmed, shape
            ``(n+1,)`` (entry 0 False); the other arcs were filled in by the constrained
            ensemble. ``None``: the whole tree is the annotator's (gold). Learners that can
            leave the filled-in arcs out of their loss do (see :mod:`parsing.graph.model`).
        tagger_upos: the tagger's UPOS (``n+1``, ROOT first) where ``upos`` holds other tags: the
            gold UPOS of a training sentence that a self-tagging member learns to predict while
            it reads the tagger's, or a parsed sentence's UPOS once the self-tagging member's
            replaced the tagger's (:mod:`parsing.tag_source`). ``None``: ``upos`` is what a
            tagger gave, or there is no tagger. Only a member that reads the tagger's UPOS
            looks at it (``biaffine`` with ``upos_inputs``).
    """

    forms: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    feats: list[str]
    heads: Heads
    deprels: list[str]
    sent_id: str | None = None
    annotated: NDArray[np.bool_] | None = None
    tagger_upos: list[str] | None = None

    def __post_init__(self) -> None:
        size = len(self.forms)
        columns = (self.lemmas, self.upos, self.xpos, self.feats, self.deprels)
        if any(len(column) != size for column in columns) or self.heads.shape != (size,):
            raise ValueError("Sentence columns must all have n+1 entries")
        if self.annotated is not None and np.shape(self.annotated) != (size,):
            raise ValueError("Sentence.annotated must have n+1 entries")
        if self.tagger_upos is not None and len(self.tagger_upos) != size:
            raise ValueError("Sentence.tagger_upos must have n+1 entries")

    @property
    def partial(self) -> bool:
        """True for a partial tree: some words' arcs were not set or confirmed by a person."""
        return self.annotated is not None and not bool(np.all(self.annotated[1:]))

    def __len__(self) -> int:
        """Number of words ``n`` (ROOT excluded)."""
        return len(self.forms) - 1

    @property
    def has_tree(self) -> bool:
        """True when every word has a head (a gold or predicted tree is present)."""
        return bool(np.all(self.heads[1:] >= 0))

    @classmethod
    def from_words(
        cls,
        forms: list[str],
        *,
        upos: list[str] | None = None,
        heads: list[int] | None = None,
        deprels: list[str] | None = None,
        sent_id: str | None = None,
    ) -> Sentence:
        """Build a sentence from its words (without ROOT); handy in tests and examples.

        Examples:
            >>> s = Sentence.from_words(["She", "runs"], heads=[2, 0], deprels=["nsubj", "root"])
            >>> len(s), s.heads.tolist()
            (2, [-1, 2, 0])
        """
        n = len(forms)
        blank = ["_"] * n
        return cls(
            forms=[ROOT, *forms],
            lemmas=[ROOT, *blank],
            upos=[ROOT, *(upos or blank)],
            xpos=[ROOT, *blank],
            feats=[ROOT, *blank],
            heads=np.array([NO_HEAD, *(heads or [NO_HEAD] * n)], dtype=np.intp),
            deprels=["", *(deprels or blank)],
            sent_id=sent_id,
        )


@dataclass(slots=True)
class Parse:
    """A parser's output for one sentence.

    Attributes:
        heads: shape ``(n+1,)``, ``heads[0] == -1``.
        deprels: ``n+1`` labels, ``deprels[0] == ""``.
        arc_scores: shape ``(n+1,)``; the parser's score or probability for the arc it chose
            for each word (``arc_scores[0]`` is ``nan``), or ``None`` when it has none.
        upos: predicted UPOS tags (``n+1``, ``upos[0] == ROOT``) when the parser tagged.
        extras: anything method-specific (k-best lists, vote matrices), keyed by name.
    """

    heads: Heads
    deprels: list[str]
    arc_scores: NDArray[np.float64] | None = None
    upos: list[str] | None = None
    extras: dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of words ``n`` (ROOT excluded)."""
        return len(self.heads) - 1
