"""Candidate lists for reranking: k-best trees of a sentence with their derivations under the
scoring model (the neural member or the ISBN parser, whose network defines the features;
:mod:`parsing.rerank.scoring`).

Two ways to get a tree's derivation (its action sequence in the scoring model's action space):

- from the beam (:func:`beam_candidates`): the scoring model's own k-best list; each tree
  keeps every derivation the beam reached it by (arc-hybrid has spurious ambiguity, and
  pseudo-projective labels can deprojectivise to the same tree), so ``P(tree)`` is the sum
  over those derivations, as in the parser's k-best distribution;
- re-derived (:func:`rederived_candidates`, neural member only): trees proposed by another
  model (a jackknife fold model) are projectivised and given the static oracle's derivation
  in the scoring model's label ids. A tree has then one canonical derivation: its ``P`` under
  the scoring model is that derivation's probability (other derivations of the same tree are
  ignored).

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from parsing.kbest import Derivations
from parsing.neural import NeuralTransitionParser, system
from parsing.rerank.scoring import Scorable, scoring_model
from parsing.scorer.metrics import universal
from parsing.types import Heads, Sentence

IntArray = NDArray[np.int64]
Tree = tuple[Heads, list[str]]


@dataclass(frozen=True, slots=True)
class Candidates:
    """One sentence's candidate trees, in list order (most probable first for a beam).

    Attributes:
        trees: ``K`` trees ``(heads (n+1,), deprels (n+1,))``.
        derivations: per tree, one or more action sequences in the scoring model's action
            space (``(2n,)`` for the neural member, ``(T,)`` decision codes for the ISBN parser).
    """

    trees: list[Tree]
    derivations: list[list[IntArray]]

    def __post_init__(self) -> None:
        if not self.trees:
            raise ValueError("a candidate list must hold at least one tree (got an empty list)")
        if len(self.derivations) != len(self.trees) or any(not d for d in self.derivations):
            raise ValueError("every candidate tree needs at least one derivation")

    def __len__(self) -> int:
        return len(self.trees)


def listed_candidates(listed: Sequence[Derivations]) -> Candidates:
    """The candidates of one k-best list with derivations (a ``kbest_derivations`` entry)."""
    return Candidates([(heads, deprels) for heads, deprels, _, _ in listed],
                      [[actions for actions, _ in paths] for _, _, _, paths in listed])


def beam_candidates(parser: Scorable, sentences: Sequence[Sentence], k: int) -> list[Candidates]:
    """The parser's k-best lists (beam ``k``) with the beam's derivations of each tree.

    Raises:
        ValueError: ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return [listed_candidates(listed) for listed in scoring_model(parser).kbest_derivations(sentences, k)]


def oracle_derivation(
    parser: NeuralTransitionParser, heads: Heads, deprels: Sequence[str]
) -> IntArray | None:
    """The static oracle's action sequence ``(2n,)`` of a tree in ``parser``'s action space, or
    ``None`` when the parser cannot build it (a label, or a label on ROOT's dependent, it
    never saw; a tree that is not single-rooted)."""
    if np.count_nonzero(heads[1:] == 0) != 1:
        return None
    lifted_heads, lifted_labels = system.projectivize(np.asarray(heads), list(deprels))
    label_ids = {label: number for number, label in enumerate(parser.labels_, start=1)}
    space = parser.space_
    state = system.start(len(heads) - 1)
    actions: list[int] = []
    try:
        while not system.is_final(state):
            move = system.oracle_move(state, lifted_heads)
            label = -1
            if move != system.SHIFT:
                dependent = system.dependent(state, move)
                if lifted_labels[dependent] not in label_ids:
                    return None
                label = label_ids[lifted_labels[dependent]]
                allowed = space.root_labels if state.stack[-2:-1] == [0] and move == system.RIGHT \
                    else space.other_labels
                if not allowed[label]:
                    return None
            actions.append(space.encode(move, label))
            state = system.advance(state, move, label)
    except ValueError:
        return None
    return np.array(actions, dtype=np.int64)


def rederived_candidates(
    parser: NeuralTransitionParser, trees: Sequence[Sequence[Tree]]
) -> list[Candidates | None]:
    """Candidate lists of trees proposed elsewhere, each tree with its static-oracle derivation
    under ``parser`` (module docstring). Trees the parser cannot derive are dropped; a list
    left empty gives ``None``."""
    lists: list[Candidates | None] = []
    for listed in trees:
        kept: list[Tree] = []
        paths: list[list[IntArray]] = []
        for heads, deprels in listed:
            actions = oracle_derivation(parser, heads, deprels)
            if actions is not None:
                kept.append((heads, list(deprels)))
                paths.append([actions])
        lists.append(Candidates(kept, paths) if kept else None)
    return lists


def labelled_accuracy(gold: Sentence, trees: Sequence[Tree]) -> NDArray[np.float64]:
    """Each tree's LAS against ``gold`` under the CoNLL 2018 conventions (every word, the
    universal part of DEPREL), as a fraction: shape ``(K,)``."""
    n = len(gold)
    if n == 0:
        return np.zeros(len(trees))
    gold_labels = [universal(label) for label in gold.deprels[1:]]
    scores = []
    for heads, deprels in trees:
        same_head = np.asarray(heads[1:]) == gold.heads[1:]
        same_label = np.array([universal(a) == b for a, b in zip(deprels[1:], gold_labels, strict=True)])
        scores.append(np.count_nonzero(same_head & same_label) / n)
    return np.array(scores, dtype=np.float64)
