"""Breakdowns of attachment scores: by UPOS, by relation, by arc and sentence length.

Every breakdown is a function of an :class:`~parsing.scorer.types.ArcTable` (built by
:func:`parsing.scorer.metrics.arc_table`), and :func:`parsing.scorer.metrics.evaluate` reports them all.
Counts of the groups of a breakdown sum to the totals.

Conventions: index 0 is ROOT; a gold head of 0 is the root arc. Arrays with a leading
``W`` are over all scored words of all sentences concatenated (ROOT excluded), in corpus
order; ``S`` is the number of sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parsing.scorer.types import ArcTable, Attachment, IntArray, Score, SentenceBucket, StrArray

ARC_LENGTH_BUCKETS = ("root", "1", "2", "3-6", "7+")
"""Labels of :func:`by_arc_length`'s buckets (gold ``|head - dependent|``; root = head 0)."""

SENTENCE_LENGTH_BUCKETS = ("1-10", "11-20", "21-30", "31-40", "41+")
"""Labels of :func:`by_sentence_length`'s buckets (words per sentence, punctuation included)."""


def by_upos(table: ArcTable) -> dict[str, Attachment]:
    """Attachment per gold UPOS of the dependent, tags sorted; counts sum to the totals."""
    return _grouped(table, table.gold_upos)


def by_deprel(table: ArcTable) -> dict[str, Score]:
    """Labelled attachment per universal relation, like CoNLL-X ``eval.pl``.

    For relation ``r``: ``gold`` = words whose gold label is ``r``, ``system`` = words
    whose system label is ``r``, ``correct`` = words with gold label ``r`` whose head and
    label the system got right. So ``precision`` / ``recall`` are per system / gold label.
    """
    words = len(table.gold_deprels)
    # every label of either side once, sorted; index[:W] are the gold words', index[W:] the system's
    relations, index = np.unique(np.concatenate([table.gold_deprels, table.system_deprels]),
                                 return_inverse=True)
    gold_index, system_index = index.reshape(-1)[:words], index.reshape(-1)[words:]
    size = len(relations)
    correct = np.bincount(gold_index[table.label_correct], minlength=size)
    gold = np.bincount(gold_index, minlength=size)
    system = np.bincount(system_index, minlength=size)
    return {str(relation): Score(int(correct[i]), int(gold[i]), int(system[i]))
            for i, relation in enumerate(relations.tolist())}


def arc_length_bucket(gold_heads: IntArray, positions: IntArray) -> StrArray:
    """Bucket label of every gold arc (shape ``(W,)`` each): root, 1, 2, 3-6 or 7+.

    Examples:
        >>> arc_length_bucket(np.array([0, 1, 1, 9]), np.array([1, 2, 4, 1])).tolist()
        ['root', '1', '3-6', '7+']
    """
    labels: StrArray = np.array(ARC_LENGTH_BUCKETS)[_arc_length_index(gold_heads, positions)]
    return labels


def _arc_length_index(gold_heads: IntArray, positions: IntArray) -> IntArray:
    """Index into :data:`ARC_LENGTH_BUCKETS` of every gold arc (shape ``(W,)``)."""
    length = np.abs(gold_heads - positions)
    index: IntArray = np.select([gold_heads == 0, length == 1, length == 2, length <= 6], [0, 1, 2, 3], 4)
    return index


def by_arc_length(table: ArcTable) -> dict[str, Attachment]:
    """Attachment per gold arc length bucket (:data:`ARC_LENGTH_BUCKETS`, all present)."""
    return _grouped_index(table, _arc_length_index(table.gold_heads, table.position), ARC_LENGTH_BUCKETS)


def sentence_length_bucket(lengths: IntArray) -> StrArray:
    """Bucket label of every sentence length (shape ``(S,)``): 1-10, ..., 41+.

    Examples:
        >>> sentence_length_bucket(np.array([1, 10, 11, 40, 41])).tolist()
        ['1-10', '1-10', '11-20', '31-40', '41+']
    """
    labels: StrArray = np.array(SENTENCE_LENGTH_BUCKETS)[_sentence_length_index(lengths)]
    return labels


def _sentence_length_index(lengths: IntArray) -> IntArray:
    """Index into :data:`SENTENCE_LENGTH_BUCKETS` of every sentence length (shape ``(S,)``)."""
    index: IntArray = np.minimum((np.maximum(lengths, 1) - 1) // 10, len(SENTENCE_LENGTH_BUCKETS) - 1)
    return index


def by_sentence_length(table: ArcTable) -> dict[str, SentenceBucket]:
    """Attachment and exact matches per sentence-length bucket (all buckets present)."""
    sentence_bucket = _sentence_length_index(table.sentence_lengths)
    word_attachment = _grouped_index(table, sentence_bucket[table.sentence], SENTENCE_LENGTH_BUCKETS)
    sentences = len(table.sentence_lengths)
    head_ok = np.bincount(table.sentence[~table.head_correct], minlength=sentences) == 0
    label_ok = np.bincount(table.sentence[~table.label_correct], minlength=sentences) == 0
    result = {}
    for number, key in enumerate(SENTENCE_LENGTH_BUCKETS):
        members = sentence_bucket == number
        result[key] = SentenceBucket(
            int(members.sum()), word_attachment[key],
            int((members & head_ok).sum()), int((members & label_ok).sum()),
        )  # fmt: skip
    return result


def _grouped(
    table: ArcTable, groups: StrArray, *, keys: Sequence[str] | None = None
) -> dict[str, Attachment]:
    """Attachment per value of ``groups`` (shape ``(W,)``), in ``keys`` order or sorted."""
    names, inverse = np.unique(groups, return_inverse=True)
    inverse = inverse.reshape(-1)
    count = np.bincount(inverse, minlength=len(names))
    heads = np.bincount(inverse, weights=table.head_correct, minlength=len(names))
    labels = np.bincount(inverse, weights=table.label_correct, minlength=len(names))
    found = {
        str(name): Attachment(int(count[i]), int(heads[i]), int(labels[i]))
        for i, name in enumerate(names)
    }
    if keys is None:
        return found
    return {key: found.get(key, Attachment(0, 0, 0)) for key in keys}


def _grouped_index(table: ArcTable, index: IntArray, keys: Sequence[str]) -> dict[str, Attachment]:
    """Attachment per bucket, ``index`` (shape ``(W,)``) giving each word's bucket in ``keys``."""
    count = np.bincount(index, minlength=len(keys))
    heads = np.bincount(index[table.head_correct], minlength=len(keys))
    labels = np.bincount(index[table.label_correct], minlength=len(keys))
    return {key: Attachment(int(count[i]), int(heads[i]), int(labels[i])) for i, key in enumerate(keys)}


ARC_DIRECTION_BUCKETS = ("root", "left 7+", "left 3-6", "left 2", "left 1",
                         "right 1", "right 2", "right 3-6", "right 7+")
"""Labels of :func:`by_arc_direction`'s buckets: where the gold head is from its dependent
(``left``: the head comes first) and how far (``|head - dependent|``); root = head 0."""


def arc_direction_bucket(gold_heads: IntArray, positions: IntArray) -> StrArray:
    """Direction and length bucket of every gold arc (shape ``(W,)`` each).

    Examples:
        >>> arc_direction_bucket(np.array([0, 1, 4, 20]), np.array([1, 2, 1, 3])).tolist()
        ['root', 'left 1', 'right 3-6', 'right 7+']
    """
    side = np.where(gold_heads < positions, "left", "right")
    length = arc_length_bucket(gold_heads, positions)
    labels: StrArray = np.where(gold_heads == 0, "root", np.char.add(np.char.add(side, " "), length))
    return labels


def by_arc_direction(table: ArcTable) -> dict[str, Attachment]:
    """Attachment per gold arc direction and length (:data:`ARC_DIRECTION_BUCKETS`, all present)."""
    length = _arc_length_index(table.gold_heads, table.position)  # 0 root, 1..4: 1, 2, 3-6, 7+
    index = np.where(table.gold_heads == 0, 0,
                     np.where(table.gold_heads < table.position, 5 - length, 4 + length))
    return _grouped_index(table, index, ARC_DIRECTION_BUCKETS)
