"""Partial annotation: the annotator confirms or fixes only the doubtful words.

On dev, words whose head has a vote share of 0.8-1.0 are right about 95% of the time, so an
annotator can leave them to the parsers. :func:`partial_tree` is what such an annotator
(an oracle, in simulations) leaves behind: every word whose *labelled* vote share (the member
weight behind the ensemble's head and label together) is below ``threshold`` gets its true
head and label (a *human-touched* word, confirmed or fixed); every other word keeps the
ensemble's arc. The share counts labels because a head share alone left the members' shared
label errors in the training trees (simulated Telugu rounds stalled 1-3 LAS below whole-sentence
annotation). The round's arc error detector (:mod:`parsing.detect`) can choose words too
(issue #32): :func:`words_to_touch` touches a word whose labelled share is below the threshold
**or** whose ``p_wrong`` is at least ``min_p_wrong`` (the detector sees errors the members
make alike, which the share never flags), and with no share threshold the detector alone
chooses (its ``p_wrong`` ranks the wrong arcs better than the share does).
Forcing the human arcs can make the ensemble's other arcs inconsistent (a cycle through a fixed
word), so the tree is decoded again over the members' votes with the human arcs forced and the
ensemble's arcs strongly preferred (:func:`parsing.ensemble.constrained.force_combined`, the
constrained ensemble's step): the result is always a tree, equal to the ensemble's wherever
that agrees with the human arcs.
:func:`interactive_partial_trees` is the annotator of the editor with re-parsing on: one
doubtful word at a time, the shares read again from a constrained re-parse after each (in
simulated rounds it touched 2-10% fewer words, but the members learned no faster from its trees).

What each member does with a partial tree (``Sentence.annotated`` marks the human words,
provenance "human"; the others, provenance "parser", were filled in as above):

* ``graph1``, ``graph2`` (graph-based): the arcs are learned from the annotated words only.
  Each online update's target is the best tree under the current weights that contains the
  human arcs (constrained decoding, Li, Zhang, Chao & Zhang 2016), and the loss counts only
  human words, so the filled-in arcs are left out of the loss. Their labeller
  (:class:`parsing.labeller.ArcLabeller`) trains on the annotated arcs only; the filled-in
  labels are left out too (the tree around an annotated arc is still read whole).
* ``eager``, ``hybrid`` and their right-to-left twins (transition-based, dynamic oracle):
  they follow the whole filled-in tree (lifted whole by the pseudo-projective transform), and
  an update whose wrong prediction loses only filled-in arcs gets ``filled_weight`` (the
  dynamic oracle with the filled words' heads unknown, -1, tells which; 1 by default learns
  them like human arcs, 0 leaves them out of the loss).
* ``swap`` and ``swap-rtl``: trained on the whole filled-in tree, every arc and label weighted
  alike: the static swap oracle orders the words by the complete tree.
* ``neural``: trained on the whole filled-in tree, like the transition members.

Conventions (see :mod:`parsing`): index 0 is ROOT, ``heads[0] == -1``, ``scores[dep, head]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.constraints import Constraints
from parsing.ensemble.base import stack_heads, token_weights
from parsing.ensemble.constrained import force_combined
from parsing.types import Parse, Sentence

__all__ = ["FLAG_P_WRONG", "Reparse", "doubtful_words", "flagged_words", "interactive_partial_trees",
           "labelled_share", "partial_tree", "refill", "words_to_touch"]


FLAG_P_WRONG = 0.5
"""The detector's ``p_wrong`` from which the editor counts a word as doubtful even when every
member agrees on it (``A``, accept all agreed arcs, leaves it to the annotator): a flagged word is
more likely wrong than right (the detector's probabilities are calibrated). In simulated rounds
(bench/README.md) share < 0.8 **or** ``p_wrong >= 0.3`` touched more words for no gain; at 0.5 the
flags add few words to the share's."""


def labelled_share(member_parses: Sequence[Parse], ensemble: Parse,
                   weights: ArrayLike) -> NDArray[np.float64]:
    """The share of the member weight behind each word's head and label together in
    ``ensemble``, shape ``(n+1,)`` (entry 0 is 0).

    Examples:
        >>> a = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> c = Parse(np.array([-1, 0, 1]), ["", "root", "nmod"])
        >>> labelled_share([a, a, c], a, [1.0, 1.0, 1.0]).round(2).tolist()
        [0.0, 1.0, 0.67]
    """
    heads = stack_heads(member_parses)
    size = heads.shape[1]
    agree = (heads == ensemble.heads[None, :]) & np.array(
        [[parse.deprels[d] == ensemble.deprels[d] for d in range(size)] for parse in member_parses])
    weight = token_weights(weights, len(member_parses), size)
    total = weight.sum(axis=0)
    share: NDArray[np.float64] = np.divide((weight * agree).sum(axis=0), total, out=np.zeros(size),
                                           where=total > 0)
    share[0] = 0.0
    return share


def doubtful_words(member_parses: Sequence[Parse], ensemble: Parse, weights: ArrayLike,
                   threshold: float) -> NDArray[np.bool_]:
    """Words whose labelled arc in the ensemble's tree (head and label together) has less than
    ``threshold`` of the member weight behind it (:func:`labelled_share`), shape ``(n+1,)``;
    entry 0 (ROOT) is False.

    Examples:
        >>> a = Parse(np.array([-1, 0, 1]), ["", "root", "obj"])
        >>> b = Parse(np.array([-1, 2, 0]), ["", "nsubj", "root"])
        >>> c = Parse(np.array([-1, 0, 1]), ["", "root", "nmod"])
        >>> doubtful_words([a, a, b], a, [1.0, 1.0, 1.0], 0.6).tolist()
        [False, False, False]
        >>> doubtful_words([a, a, c], a, [1.0, 1.0, 1.0], 0.8).tolist()   # same head, other label
        [False, False, True]
    """
    _check_threshold(threshold)
    doubtful: NDArray[np.bool_] = labelled_share(member_parses, ensemble, weights) < threshold
    doubtful[0] = False
    return doubtful


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"the vote-share threshold must lie in (0, 1], got {threshold}")


def flagged_words(p_wrong: ArrayLike, min_p_wrong: float) -> NDArray[np.bool_]:
    """Words the arc error detector flags: ``p_wrong >= min_p_wrong``, shape ``(n+1,)``; entry 0
    (ROOT) is False.

    Args:
        p_wrong: the detector's chance that each word's arc is wrong, words 1..n, shape ``(n,)``
            (:meth:`parsing.detect.model.ArcDetector.score` gives one such array per tree).
        min_p_wrong: the least ``p_wrong`` of a flagged word, in (0, 1].

    Raises:
        ValueError: ``min_p_wrong`` outside (0, 1], or ``p_wrong`` not one flat array of numbers
            in [0, 1].

    Examples:
        >>> flagged_words([0.1, 0.5, 0.9], 0.5).tolist()
        [False, False, True, True]
    """
    if not 0.0 < min_p_wrong <= 1.0:
        raise ValueError(f"the detector's flag threshold (p_wrong) must lie in (0, 1], got {min_p_wrong}")
    scores = np.asarray(p_wrong, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(f"p_wrong must be one probability per word, shape (n,), got shape {scores.shape}")
    if not ((scores >= 0) & (scores <= 1)).all():  # NaN fails both
        raise ValueError("p_wrong must be probabilities in [0, 1]")
    flagged: NDArray[np.bool_] = np.concatenate([[False], scores >= min_p_wrong])
    return flagged


def words_to_touch(member_parses: Sequence[Parse], ensemble: Parse, weights: ArrayLike,
                   threshold: float | None, *, p_wrong: ArrayLike | None = None,
                   min_p_wrong: float | None = None) -> NDArray[np.bool_]:
    """The words a partial annotator confirms or fixes, shape ``(n+1,)``; entry 0 is False.

    A word is touched when its labelled share is below ``threshold`` (:func:`doubtful_words`)
    **or** the detector flags it (``p_wrong >= min_p_wrong``, :func:`flagged_words`). Either
    rule may be left out: ``threshold`` None lets the detector alone choose; ``p_wrong`` and
    ``min_p_wrong`` None is the share alone.

    Args:
        member_parses, ensemble, weights: as :func:`doubtful_words`.
        threshold: the share threshold in (0, 1], or None.
        p_wrong: the detector's scores of the ensemble's arcs, words 1..n, shape ``(n,)``.
        min_p_wrong: the detector's flag threshold in (0, 1]; given with ``p_wrong``.

    Raises:
        ValueError: neither rule, ``p_wrong`` without ``min_p_wrong`` (or the reverse), a
            threshold out of range or ``p_wrong`` of another length than the sentence.

    Examples:
        >>> a = Parse(np.array([-1, 0, 1, 1]), ["", "root", "obj", "obj"])
        >>> c = Parse(np.array([-1, 0, 1, 1]), ["", "root", "nmod", "obj"])
        >>> words_to_touch([a, a, c], a, [1.0] * 3, 0.8).tolist()   # the share alone
        [False, False, True, False]
        >>> words_to_touch([a, a, c], a, [1.0] * 3, 0.8, p_wrong=[0.0, 0.1, 0.7], min_p_wrong=0.5).tolist()
        [False, False, True, True]
        >>> words_to_touch([a, a, c], a, [1.0] * 3, None, p_wrong=[0.0, 0.1, 0.7], min_p_wrong=0.5).tolist()
        [False, False, False, True]
    """
    if (p_wrong is None) != (min_p_wrong is None):
        raise ValueError("the detector's p_wrong and its flag threshold min_p_wrong go together")
    if threshold is None and min_p_wrong is None:
        raise ValueError("partial annotation needs a share threshold, the detector's flags or both")
    size = len(ensemble.heads)
    touched = (doubtful_words(member_parses, ensemble, weights, threshold) if threshold is not None
               else np.zeros(size, dtype=bool))
    if p_wrong is not None and min_p_wrong is not None:
        flagged = flagged_words(p_wrong, min_p_wrong)
        if len(flagged) != size:
            raise ValueError(f"p_wrong has {len(flagged) - 1} scores for a sentence of {size - 1} words")
        touched |= flagged
    return touched


def partial_tree(gold: Sentence, member_parses: Sequence[Parse], ensemble: Parse, weights: ArrayLike,
                 threshold: float | None, *, p_wrong: ArrayLike | None = None,
                 min_p_wrong: float | None = None) -> tuple[Sentence, NDArray[np.bool_]]:
    """The tree a partial annotator leaves, and which words they touched (module docstring).

    Args:
        gold: the sentence with its true tree (what the annotator knows).
        member_parses: the members' parses of it (``M`` parses).
        ensemble: the ensemble's parse.
        weights: member weights of the vote shares, shape ``(M,)``.
        threshold: words with a vote share below it are touched (None: the detector alone).
        p_wrong, min_p_wrong: the detector's scores of the ensemble's arcs, shape ``(n,)``, and
            the least score of a flagged word: flagged words are touched too
            (:func:`words_to_touch`).

    Returns:
        ``(sentence, touched)``: a copy of ``gold`` whose heads/deprels are the human arcs
        on touched words and the (re-decoded) ensemble's elsewhere, marked as a partial tree
        (``annotated`` is ``touched``, as the app marks a saved partial tree's human arcs, so
        the members learn from it as they do from the app's); ``touched`` has shape ``(n+1,)``.

    Examples:
        >>> gold = Sentence.from_words(["a", "b"], heads=[0, 1], deprels=["root", "obj"])
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"])
        >>> tree, touched = partial_tree(gold, [p, p], p, [1.0, 1.0], 0.8)
        >>> tree.deprels, touched.tolist()   # unanimous: nothing touched, the parsers' labels stay
        (['', 'root', 'dep'], [False, False, False])
        >>> tree.partial
        True
    """
    touched = words_to_touch(member_parses, ensemble, weights, threshold, p_wrong=p_wrong,
                             min_p_wrong=min_p_wrong)
    return _filled(replace(gold, annotated=touched.copy()), member_parses, ensemble, weights), touched


def _filled(tree: Sentence, member_parses: Sequence[Parse], ensemble: Parse, weights: ArrayLike) -> Sentence:
    """``tree`` with its human arcs (``annotated``) kept and every other arc the ensemble's,
    re-decoded over the members' votes with the human arcs forced (module docstring)."""
    assert tree.annotated is not None
    human = Constraints.from_tree(tree.heads, tree.deprels, np.flatnonzero(tree.annotated))
    filled = force_combined(ensemble, member_parses, weights, human)
    return replace(tree, heads=filled.heads, deprels=filled.deprels)


def refill(tree: Sentence, member_parses: Sequence[Parse], ensemble: Parse, weights: ArrayLike) -> Sentence:
    """A partial tree whose parser arcs are filled again from newer parses, around its human arcs.

    Args:
        tree: a partial tree (``annotated`` marks its human words; their arcs are kept).
        member_parses: newer member parses of the sentence (``M`` parses); ensemble: the newer
            ensemble parse; weights: member weights, shape ``(M,)``.

    Returns:
        A copy of ``tree`` with the human arcs unchanged and every other arc the newer
        ensemble's (re-decoded with the human arcs forced, as :func:`partial_tree` fills).

    Raises:
        ValueError: ``tree`` is not a partial tree.

    Examples:
        >>> gold = Sentence.from_words(["a", "b"], heads=[0, 1], deprels=["root", "obj"])
        >>> old = replace(gold, deprels=["", "root", "dep"], annotated=np.array([False, True, False]))
        >>> newer = Parse(gold.heads, gold.deprels)
        >>> refill(old, [newer, newer], newer, [1.0, 1.0]).deprels
        ['', 'root', 'obj']
    """
    if not tree.partial:
        raise ValueError("only a partial tree (some words not set by a person) can be filled again")
    return _filled(tree, member_parses, ensemble, weights)


Reparse = Callable[[Sequence[int], Sequence[Constraints]], tuple[list[list[Parse]], list[Parse]]]
"""``(sentence indices, their constraints) -> (each sentence's M member parses, its ensemble
tree)``: a constrained re-parse (:func:`parsing.ensemble.reparse.reparse_under_constraints`)."""


def interactive_partial_trees(golds: Sequence[Sentence], member_parses: Sequence[Sequence[Parse]],
                              ensembles: Sequence[Parse], weights: ArrayLike, threshold: float,
                              reparse: Reparse) -> list[tuple[Sentence, NDArray[np.bool_]]]:
    """Partial annotation with re-parsing: the trees an annotator leaves who touches one
    doubtful word at a time and lets the parsers re-parse around it (issue 12's editor loop).

    Each step the annotator gives the doubtful word with the lowest labelled share
    (:func:`labelled_share`; ties to the leftmost) its true head and label; the sentence is
    re-parsed under every arc touched so far, and the shares are read again from the
    re-parse. A sentence is done when no untouched word is below ``threshold``. A touch can
    lift a doubtful word's share above the threshold (the members now agree around the human
    arc) and so spare it; it can also make a confident word doubtful. All sentences step
    together, so ``reparse`` sees one batch per step.

    Args:
        golds: the sentences with their true trees, ``S`` of them.
        member_parses: each sentence's ``M`` member parses before any touch.
        ensembles: each sentence's ensemble tree before any touch.
        weights: member weights of the shares, shape ``(M,)``.
        threshold: words with a labelled share below it are touched.
        reparse: the constrained re-parse.

    Returns:
        One ``(sentence, touched)`` per input, as :func:`partial_tree` returns it: the gold
        sentence with the last re-parse's tree (the human arcs on touched words), marked as a
        partial tree, and the touched words, shape ``(n+1,)``.

    Raises:
        ValueError: a threshold outside (0, 1], or inputs of different lengths.
    """
    _check_threshold(threshold)
    if not len(golds) == len(member_parses) == len(ensembles):
        raise ValueError(f"{len(golds)} sentences, {len(member_parses)} member parse lists, "
                         f"{len(ensembles)} ensemble trees")
    members = [list(parses) for parses in member_parses]
    trees = list(ensembles)
    touched = [np.zeros(len(gold) + 1, dtype=bool) for gold in golds]
    active = list(range(len(golds)))
    while active:
        stepped = []
        for i in active:
            share = labelled_share(members[i], trees[i], weights)
            share[touched[i]] = np.inf
            share[0] = np.inf
            word = int(np.argmin(share))  # the leftmost of the lowest
            if share[word] < threshold:
                touched[i][word] = True
                stepped.append(i)
        if stepped:
            gold_arcs = [Constraints.from_tree(golds[i].heads, golds[i].deprels, np.flatnonzero(touched[i]))
                         for i in stepped]
            again, combined = reparse(stepped, gold_arcs)
            for j, i in enumerate(stepped):
                members[i], trees[i] = list(again[j]), combined[j]
        active = stepped
    return [(replace(gold, heads=tree.heads, deprels=tree.deprels, annotated=mask.copy()), mask)
            for gold, tree, mask in zip(golds, trees, touched, strict=True)]
