"""Feature rows of the arc error detector: one row per word of the tree being scored.

Every feature is relative to the scored tree (``heads``/``deprels``: the ensemble's, a gold
or a reviewed tree), so the same code scores all of them:

* **votes** (the members' weighted parses, weights as the ensemble votes:
  :func:`parsing.ensemble.voting.ensemble_vote_weights`): the share of member weight behind
  the tree's head (:func:`~parsing.ensemble.voting.vote_share`) and behind its head *and*
  universal label, the best share any proposed head gets and the gap to it, the head entropy
  (:func:`~parsing.ensemble.confidence.head_entropy`), the number of distinct heads and of
  distinct labels proposed, and per member whether it agrees on the head and on head + label;
* **word**: one-hot UPOS of the word and of its head (``ROOT``), one-hot universal label;
* **shape**: arc length (and its log), direction, the word's relative position, sentence
  length, the word's number of dependents, siblings sharing its label, whether the arc is
  non-projective, the word's depth;
* **confidence** (members that give arc probabilities, ``confident``: the neural member): the
  probability the member gives its own head, and the same split by whether that head is the
  tree's (the member agrees and is sure, or disagrees and is sure);
* **outputs** (confident members whose parses carry their own tags and probabilities,
  ``outputs``: the neural member's ``extras``): the probability of its UPOS for the word and for
  its head, whether that UPOS differs from the one the tree is read with (a tag error every member
  parsed with), the probability of its label, and the probability it gives the tree's head and the
  best other head (:func:`output_features`);
* **treebank** (:mod:`parsing.detect.counts`, counted on the training trees): smoothed,
  log-scaled configuration, tag, form, lemma, word-pair and context (variation n-gram) counts,
  the NIL variation share of the same two words at the same distance, the strongest
  attachment the training trees suggest for the word elsewhere in its window, and how often
  the training trees give the word's form, and its head's, the tag it is read with (a tag
  error every member parsed with).

Shapes: ``member_heads`` ``(M, n+1)``; ``weights`` ``(M,)``; the result ``(n, F)`` with
``F == len(feature_names(...))``. Missing values are ``nan`` (gradient boosting routes them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from parsing.detect.counts import (
    ROOT_TAG,
    WINDOW,
    TreebankCounts,
    arc_events,
    form_tag_key,
    link_key,
    seen_key,
)
from parsing.ensemble.base import FloatArray, token_weights
from parsing.ensemble.confidence import head_entropy
from parsing.ensemble.voting import vote_share
from parsing.scorer.metrics import universal
from parsing.trees import depths
from parsing.types import Sentence

VOTE_FEATURES = ("head_share", "labelled_share", "label_given_head", "best_share", "share_gap",
                 "entropy", "distinct_heads", "distinct_labels", "majority_head", "head_arc_share",
                 "least_child_share")
SHAPE_FEATURES = ("length", "log_length", "direction", "position", "log_sentence_length", "children",
                  "same_label_siblings", "non_projective", "depth")
COUNT_FEATURES = ("config_log", "config_pair_log", "config_p", "tag_label_p", "form_log", "form_label_p",
                  "lemma_log", "lemma_label_p", "pair_log", "pair_label_p", "context_log",
                  "context_label_p", "nil_seen_log", "nil_link_share", "alternative_link_share",
                  "form_tag_p", "head_form_tag_p")
CONFIDENCE_FEATURES = ("p", "p_agrees", "p_differs")
"""Per member that gives arc probabilities (:func:`confidence_features`), after every other column."""
OUTPUT_FEATURES = ("upos_p", "head_upos_p", "upos_differs", "head_upos_differs", "label_p", "p_tree",
                   "p_other")
"""Per member whose parses carry its own tags and probabilities (:func:`output_features`), last."""
SMOOTHING = 0.5
"""Added to every count before a share is taken (``(c + a) / (total + a * outcomes)``)."""
UPOS_OUTCOMES = 17
"""The UD UPOS inventory's size: the outcomes of a form's tag share."""


def feature_names(members: Sequence[str], upos_tags: Sequence[str], labels: Sequence[str],
                  confident: Sequence[str] = (), outputs: Sequence[str] = ()) -> list[str]:
    """The name of every column of :func:`word_features`, in order, then the
    :func:`confidence_features` of the ``confident`` members, then the :func:`output_features` of
    the ``outputs`` ones.

    Examples:
        >>> feature_names(["a"], ["NOUN"], ["nsubj"])[-4:]
        ['upos=NOUN', 'head_upos=ROOT', 'head_upos=NOUN', 'label=nsubj']
        >>> feature_names(["a"], ["NOUN"], ["nsubj"], confident=["a"])[-3:]
        ['p:a', 'p_agrees:a', 'p_differs:a']
        >>> feature_names(["a"], ["NOUN"], ["nsubj"], outputs=["a"])[-3:]
        ['label_p:a', 'p_tree:a', 'p_other:a']
    """
    return [*VOTE_FEATURES, *(f"agrees:{m}" for m in members), *(f"agrees_labelled:{m}" for m in members),
            *SHAPE_FEATURES, *COUNT_FEATURES, "given_tree", *(f"upos={t}" for t in upos_tags),
            f"head_upos={ROOT_TAG}", *(f"head_upos={t}" for t in upos_tags), *(f"label={x}" for x in labels),
            *(f"{column}:{m}" for m in confident for column in CONFIDENCE_FEATURES),
            *(f"{column}:{m}" for m in outputs for column in OUTPUT_FEATURES)]


def output_features(upos: Sequence[str], heads: ArrayLike, extras: Mapping[str, object]) -> FloatArray:
    """The member's own outputs beside the tree (``OUTPUT_FEATURES``), shape ``(n, 7)``: how sure
    it is of its UPOS for the word and for its head, whether that UPOS differs from the one the
    tree is read with (``upos``; a tag every member parsed with), the probability of its label at
    its head, the probability it gave the tree's head before decoding (0 outside its most probable
    heads) and the best it gave any other head.

    Args:
        upos: the tags the tree is read with (``n+1``, ROOT first: the ones the members parsed
            with for the ensemble's tree, a given tree's own).
        heads: the tree being scored, ``(n+1,)``.
        extras: the member's ``Parse.extras`` (the neural member's decoder): ``"upos"``,
            ``"upos_p"``, ``"label_p"`` (``n+1`` each) and ``"head_top"`` (``n+1`` lists of
            ``[head, p]``); the columns of a missing entry are ``nan``.

    Examples:
        >>> x = output_features(["<ROOT>", "NOUN", "VERB"], [-1, 2, 0],
        ...                     {"upos": ["<ROOT>", "NOUN", "NOUN"], "upos_p": [1.0, 0.9, 0.6],
        ...                      "head_top": [[], [[2, 0.7], [0, 0.2]], [[1, 0.5], [0, 0.4]]]})
        >>> x[0, :4].tolist(), x[:, 5:].tolist()
        ([0.9, 0.6, 0.0, 1.0], [[0.7, 0.2], [0.4, 0.5]])
    """
    tree = np.asarray(heads, dtype=np.intp)
    n = tree.shape[0] - 1
    head = np.clip(tree[1:], 0, n)

    def column(key: str) -> FloatArray | None:
        values = extras.get(key)
        if not isinstance(values, Sequence) or len(values) != n + 1:
            return None
        return np.asarray(values, dtype=np.float64)

    nan = np.full(n, np.nan)
    sure, label = column("upos_p"), column("label_p")
    own = extras.get("upos")
    if isinstance(own, Sequence) and len(own) == n + 1 and len(upos) == n + 1:
        differs = np.array([a != b for a, b in zip(own, upos, strict=True)], dtype=np.float64)
        differs[0] = 0.0  # ROOT
        word_differs, head_differs = differs[1:], differs[head]
    else:
        word_differs = head_differs = nan
    if sure is not None:
        sure = sure.copy()
        sure[0] = 1.0
    tree_p, other_p = nan, nan
    top = extras.get("head_top")
    if isinstance(top, Sequence) and len(top) == n + 1:
        tree_p, other_p = np.zeros(n), np.zeros(n)
        for d in range(1, n + 1):
            for candidate, p in top[d]:
                if int(candidate) == tree[d]:
                    tree_p[d - 1] = p
                else:
                    other_p[d - 1] = max(other_p[d - 1], p)
    return np.stack([nan if sure is None else sure[1:], nan if sure is None else sure[head],
                     word_differs, head_differs, nan if label is None else label[1:], tree_p, other_p],
                    axis=1)


def confidence_features(heads: ArrayLike, member_heads: ArrayLike,
                        probabilities: Sequence[ArrayLike | None]) -> FloatArray:
    """The confidence columns (``CONFIDENCE_FEATURES`` per member), shape ``(n, 3K)``.

    Args:
        heads: the tree being scored, ``(n+1,)``.
        member_heads: the ``K`` confident members' heads, ``(K, n+1)``.
        probabilities: each one's probability of its own head per word, ``(n+1,)`` (ROOT first),
            or ``None`` when not known (a parse stored without them): ``nan`` columns.

    Examples:
        >>> confidence_features([-1, 2, 0], [[-1, 2, 0]], [[0.0, 0.9, 0.6]]).tolist()
        [[0.9, 0.9, 0.0], [0.6, 0.6, 0.0]]
        >>> confidence_features([-1, 0, 1], [[-1, 2, 0]], [[0.0, 0.9, 0.6]])[0].tolist()
        [0.9, 0.0, 0.9]
    """
    tree = np.asarray(heads, dtype=np.intp)
    member = np.asarray(member_heads, dtype=np.intp).reshape(len(probabilities), tree.shape[0])
    n = tree.shape[0] - 1
    blocks = []
    for row, probability in zip(member, probabilities, strict=True):
        if probability is None:
            blocks.append(np.full((n, len(CONFIDENCE_FEATURES)), np.nan))
            continue
        p = np.asarray(probability, dtype=np.float64)[1:]
        if p.shape != (n,):
            raise ValueError(f"{p.shape[0]} arc probabilities for a sentence of {n} words")
        agrees = row[1:] == tree[1:]
        blocks.append(np.stack([p, np.where(agrees, p, 0.0), np.where(agrees, 0.0, p)], axis=1))
    return np.hstack(blocks) if blocks else np.zeros((n, 0))


def vote_features(member_heads: ArrayLike, member_labels: Sequence[Sequence[str]], weights: ArrayLike,
                  heads: ArrayLike, deprels: Sequence[str]) -> FloatArray:
    """The vote columns (``VOTE_FEATURES`` then the ``2M`` agreement columns), shape ``(n, 11 + 2M)``.

    ``head_arc_share`` is the labelled share of the head word's own arc (1 under ROOT),
    ``least_child_share`` the lowest labelled share among the word's dependents (1 for a leaf).

    Examples:
        >>> x = vote_features([[-1, 0, 1], [-1, 2, 0]], [["", "root", "obj"], ["", "obj", "root"]],
        ...                   [1.0, 1.0], [-1, 0, 1], ["", "root", "obj"])
        >>> x[:, :3].tolist()
        [[0.5, 0.5, 1.0], [0.5, 0.5, 1.0]]
    """
    member = np.asarray(member_heads, dtype=np.intp)
    chosen = np.asarray(heads, dtype=np.intp)
    n_members, size = member.shape
    weight = token_weights(weights, n_members, size)[:, 1:]  # (M, n)
    total = np.maximum(weight.sum(axis=0), 1e-12)
    agrees = member[:, 1:] == chosen[None, 1:]  # (M, n)
    tree_labels = np.array([universal(x) for x in deprels[1:]], dtype=np.str_)
    labels = np.array([[universal(x) for x in row[1:]] for row in member_labels], dtype=np.str_).reshape(
        n_members, size - 1)
    labelled = agrees & (labels == tree_labels[None, :])
    head_share = vote_share(member, weights, chosen)[1:]
    labelled_share = (weight * labelled).sum(axis=0) / total
    same = member[:, None, 1:] == member[None, :, 1:]  # (M, M, n)
    best = (same * weight[None, :, :]).sum(axis=1).max(axis=0) / total
    distinct_heads = np.array([len(set(member[:, d].tolist())) for d in range(1, size)], dtype=np.float64)
    distinct_labels = np.array([len(set(labels[agrees[:, i], i].tolist())) for i in range(size - 1)],
                               dtype=np.float64)
    with_root = np.concatenate([[1.0], labelled_share])  # ROOT's "arc" is certain
    parent = with_root[np.clip(chosen[1:], 0, size - 1)]
    least_child = np.ones(size)
    np.minimum.at(least_child, np.clip(chosen[1:], 0, size - 1), labelled_share)
    columns = [head_share, labelled_share,
               np.divide(labelled_share, head_share, out=np.zeros_like(head_share), where=head_share > 0),
               best, best - head_share, head_entropy(member, weights)[1:], distinct_heads, distinct_labels,
               (head_share >= best - 1e-9).astype(np.float64), parent, least_child[1:]]
    return np.hstack([np.stack(columns, axis=1), agrees.T.astype(np.float64), labelled.T.astype(np.float64)])


def shape_features(heads: ArrayLike, deprels: Sequence[str]) -> FloatArray:
    """The tree-shape columns (``SHAPE_FEATURES``), shape ``(n, 9)``.

    Examples:
        >>> shape_features([-1, 2, 0, 2], ["", "nsubj", "root", "nsubj"])[:, [0, 2, 5, 6]].tolist()
        [[1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 2.0, 0.0], [1.0, -1.0, 0.0, 1.0]]
    """
    tree = np.asarray(heads, dtype=np.intp)
    n = tree.shape[0] - 1
    deps = np.arange(1, n + 1)
    head = tree[1:]
    length = np.where(head == 0, 0, np.abs(head - deps)).astype(np.float64)
    way = np.where(head == 0, 0.0, np.where(head > deps, 1.0, -1.0))
    children = np.bincount(np.clip(head, 0, n), minlength=n + 1)[1:].astype(np.float64)
    labels = [universal(x) for x in deprels]
    pairs = Counter((int(h), labels[d]) for d, h in zip(deps.tolist(), head.tolist(), strict=True))
    siblings = np.array([pairs[(int(tree[d]), labels[d])] - 1 for d in deps], dtype=np.float64)
    depth = depths(tree)[1:].astype(np.float64)
    return np.stack([length, np.log1p(length), way, deps / max(n, 1), np.full(n, np.log(max(n, 1))),
                     children, siblings, crossing_arcs(tree).astype(np.float64), depth], axis=1)


def crossing_arcs(heads: ArrayLike) -> NDArray[np.bool_]:
    """Whether each word's arc crosses another arc (ROOT arcs included), shape ``(n,)``.

    Examples:
        >>> crossing_arcs([-1, 3, 4, 0, 3]).tolist()
        [True, True, True, False]
    """
    tree = np.asarray(heads, dtype=np.intp)[1:]
    deps = np.arange(1, tree.shape[0] + 1)
    left, right = np.minimum(deps, tree), np.maximum(deps, tree)
    crosses = ((left[:, None] < left[None, :]) & (left[None, :] < right[:, None])
               & (right[:, None] < right[None, :]))
    result: NDArray[np.bool_] = np.asarray(crosses.any(axis=1) | crosses.any(axis=0), dtype=bool)
    return result


def _share(count: NDArray[np.int64], total: NDArray[np.int64], outcomes: float) -> FloatArray:
    share: FloatArray = (count + SMOOTHING) / (total + SMOOTHING * outcomes)
    return share


def count_features(sentence: Sentence, heads: ArrayLike, deprels: Sequence[str], counts: TreebankCounts,
                   own: Counter[str] | None = None) -> FloatArray:
    """The treebank columns (``COUNT_FEATURES``), shape ``(n, 17)``.

    Args:
        own: the events of this sentence's tree as ``counts`` counted it
            (:func:`~parsing.detect.counts.tree_events`), when it is one of the counted trees:
            left out of every count.
    """
    tree = np.asarray(heads, dtype=np.intp)
    n = len(sentence)
    forms = [f.lower() for f in sentence.forms]
    events = [arc_events(sentence, tree, deprels, d) for d in range(1, n + 1)]
    # the first ten events of every arc are always there (arc_events' order); lemma and link vary
    fixed = counts.lookup([e for row in events for e in row[:10]], own).reshape(n, 10)
    lemma = np.array([[0, 0] if len(row) < 12 or not row[10].startswith("LL|") else [-1, -1]
                      for row in events], dtype=np.int64)
    lemma_events = [e for row in events for e in row[10:12] if e.startswith(("LL|", "L|"))]
    found = counts.lookup(lemma_events, own).reshape(-1, 2) if lemma_events else np.zeros((0, 2), np.int64)
    has_lemma = lemma[:, 0] < 0
    lemma[has_lemma] = found
    link_events, seen, offsets = [], [], []
    for d in range(1, n + 1):
        for offset in range(-WINDOW, WINDOW + 1):
            if offset != 0 and 1 <= d + offset <= n:
                link_events.append(link_key(forms[d], forms[d + offset], offset))
                seen.append(seen_key(forms[d], forms[d + offset], offset))
                offsets.append((d, offset))
    linked = counts.lookup(link_events, own)
    together = counts.lookup(seen, own)
    nil_seen = np.full(n, np.nan)
    nil_share = np.full(n, np.nan)
    alternative = np.zeros(n)
    for (d, offset), k, s in zip(offsets, linked.tolist(), together.tolist(), strict=True):
        share = (k + SMOOTHING) / (s + 2 * SMOOTHING)
        if int(tree[d]) == d + offset:
            nil_seen[d - 1], nil_share[d - 1] = np.log1p(s), share
        elif k > 0:
            alternative[d - 1] = max(alternative[d - 1], share)
    labels = float(counts.n_labels)
    c = fixed
    tagged = counts.lookup([form_tag_key(forms[d], sentence.upos[d]) for d in range(1, n + 1)], own)
    form_tag = np.concatenate([[1.0], _share(tagged, c[:, 5], UPOS_OUTCOMES)])  # ROOT's tag is sure
    return np.stack([
        np.log1p(c[:, 0]), np.log1p(c[:, 1]), _share(c[:, 0], c[:, 1], 2 * labels),
        _share(c[:, 2], c[:, 3], labels), np.log1p(c[:, 5]), _share(c[:, 4], c[:, 5], labels),
        np.where(has_lemma, np.log1p(lemma[:, 1]), np.nan),
        np.where(has_lemma, _share(lemma[:, 0], lemma[:, 1], labels), np.nan),
        np.log1p(c[:, 7]), _share(c[:, 6], c[:, 7], labels),
        np.log1p(c[:, 9]), _share(c[:, 8], c[:, 9], labels),
        nil_seen, nil_share, alternative, form_tag[1:], form_tag[np.clip(tree[1:], 0, n)]], axis=1)


def word_features(sentence: Sentence, heads: ArrayLike, deprels: Sequence[str], member_heads: ArrayLike,
                  member_labels: Sequence[Sequence[str]], weights: ArrayLike, counts: TreebankCounts,
                  upos_tags: Sequence[str], labels: Sequence[str], own: Counter[str] | None = None,
                  given: bool = False) -> FloatArray:
    """Every column of :func:`feature_names` for the words of one scored tree, shape ``(n, F)``.

    Args:
        sentence: the words and the tags to use (``upos``: as the members parsed with them for
            the ensemble's tree; the tree's own for a gold or reviewed one).
        heads, deprels: the tree being scored (``n+1`` each).
        member_heads, member_labels, weights: the members' parses of the sentence and their
            vote weights, members in the detector's order.
        counts: the training trees' counts; own: see :func:`count_features`.
        given: the tree is a person's (gold, reviewed, imported), not the ensemble's: the
            ``given_tree`` column, so one model learns both kinds of error.
        upos_tags, labels: the one-hot vocabularies (unknown values: all zeros).

    Raises:
        ValueError: a tree or member parse whose length differs from the sentence's.
    """
    tree = np.asarray(heads, dtype=np.intp)
    member = np.asarray(member_heads, dtype=np.intp)
    size = len(sentence) + 1
    if tree.shape != (size,) or len(deprels) != size or member.ndim != 2 or member.shape[1] != size:
        raise ValueError(f"sentence {sentence.sent_id or ''} has {size - 1} words but the tree or a member "
                         f"parse has {tree.shape[0] - 1}/{member.shape[-1] - 1}")
    n = size - 1
    tag_index = {tag: i for i, tag in enumerate(upos_tags)}
    label_index = {label: i for i, label in enumerate(labels)}
    word_pos = np.zeros((n, len(upos_tags)))
    head_pos = np.zeros((n, len(upos_tags) + 1))
    label_hot = np.zeros((n, len(labels)))
    for d in range(1, size):
        if sentence.upos[d] in tag_index:
            word_pos[d - 1, tag_index[sentence.upos[d]]] = 1.0
        head = int(tree[d])
        if head == 0:
            head_pos[d - 1, 0] = 1.0
        elif sentence.upos[head] in tag_index:
            head_pos[d - 1, 1 + tag_index[sentence.upos[head]]] = 1.0
        if universal(deprels[d]) in label_index:
            label_hot[d - 1, label_index[universal(deprels[d])]] = 1.0
    return np.hstack([vote_features(member, member_labels, weights, tree, deprels),
                      shape_features(tree, deprels), count_features(sentence, tree, deprels, counts, own),
                      np.full((n, 1), 1.0 if given else 0.0), word_pos, head_pos, label_hot])
