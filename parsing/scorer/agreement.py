"""Inter-annotator agreement on dependency trees: attachment agreement and Cohen's kappa.

Two annotators' trees of the same sentences are compared word by word (words 1..n, ``heads``
0 = ROOT, ``labels`` the DEPRELs):

* **UAS agreement**: the share of words both attached to the same head;
* **LAS agreement**: the share of words with the same head *and* the same label;
* **label kappa** (:func:`cohen_kappa`) over **all words**: each word's label as each annotator
  chose it, whatever the heads (how much they agree on relations beyond chance);
* **attached label kappa** over the words **both attached to the same head** only: agreement on
  the label of arcs they agree exist (label disagreement not caused by a different attachment).

Cohen's kappa is ``(p_o - p_e) / (1 - p_e)``, with ``p_o`` the observed share of equal labels
and ``p_e`` the chance agreement from each annotator's own label frequencies,
``Σ_l p_A(l) · p_B(l)``. It is undefined (``None``) without words or when ``p_e`` is 1 (both
used one and the same label for everything). Several pairs or a whole treebank are pooled by
adding their :class:`AgreementCounts` (each pair keeps its order: annotator A, annotator B).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

LabelPair = tuple[str, str]


def cohen_kappa(pairs: Counter[LabelPair]) -> float | None:
    """Cohen's kappa of label pairs ``(label by A, label by B) -> count``.

    >>> round(cohen_kappa(Counter({("x", "x"): 1, ("x", "y"): 1, ("y", "y"): 2})), 3)
    0.5
    >>> cohen_kappa(Counter({("x", "x"): 3})) is None
    True
    """
    total = sum(pairs.values())
    if total == 0:
        return None
    observed = sum(count for (a, b), count in pairs.items() if a == b) / total
    by_a: Counter[str] = Counter()
    by_b: Counter[str] = Counter()
    for (a, b), count in pairs.items():
        by_a[a] += count
        by_b[b] += count
    chance = sum(by_a[label] * by_b[label] for label in by_a) / (total * total)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


@dataclass
class AgreementCounts:
    """Word-level counts of two annotators over some sentences (add them to pool)."""

    sentences: int = 0
    words: int = 0
    same_head: int = 0
    same_arc: int = 0
    labels: Counter[LabelPair] = field(default_factory=Counter)
    """Every word: (label by A, label by B)."""
    attached_labels: Counter[LabelPair] = field(default_factory=Counter)
    """Words both attached to the same head: (label by A, label by B)."""

    def __add__(self, other: AgreementCounts) -> AgreementCounts:
        return AgreementCounts(self.sentences + other.sentences, self.words + other.words,
                               self.same_head + other.same_head, self.same_arc + other.same_arc,
                               self.labels + other.labels, self.attached_labels + other.attached_labels)

    @property
    def uas(self) -> float | None:
        """Share of words with the same head (None without words)."""
        return self.same_head / self.words if self.words else None

    @property
    def las(self) -> float | None:
        """Share of words with the same head and label (None without words)."""
        return self.same_arc / self.words if self.words else None

    @property
    def label_kappa(self) -> float | None:
        """Cohen's kappa of the labels over all words."""
        return cohen_kappa(self.labels)

    @property
    def attached_kappa(self) -> float | None:
        """Cohen's kappa of the labels over the words both attached to the same head."""
        return cohen_kappa(self.attached_labels)

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-ready: counts, ``uas``/``las`` (0..1) and both kappas."""
        return {"sentences": self.sentences, "words": self.words, "uas": self.uas, "las": self.las,
                "label_kappa": self.label_kappa, "attached_kappa": self.attached_kappa}


def sentence_agreement(
    heads_a: Sequence[int], labels_a: Sequence[str], heads_b: Sequence[int], labels_b: Sequence[str]
) -> AgreementCounts:
    """The counts of one sentence annotated by A and by B.

    >>> counts = sentence_agreement([2, 0, 2], ["nsubj", "root", "obj"], [2, 0, 1], ["nsubj", "root", "nmod"])
    >>> counts.same_head, counts.same_arc, counts.words
    (2, 2, 3)

    :raise ValueError: the four sequences are not all as long.
    """
    n = len(heads_a)
    if not len(labels_a) == len(heads_b) == len(labels_b) == n:
        raise ValueError("both trees need one head and one label per word")
    counts = AgreementCounts(sentences=1, words=n)
    for head_a, label_a, head_b, label_b in zip(heads_a, labels_a, heads_b, labels_b, strict=True):
        pair = (str(label_a), str(label_b))
        counts.labels[pair] += 1
        if int(head_a) == int(head_b):
            counts.same_head += 1
            counts.attached_labels[pair] += 1
            counts.same_arc += label_a == label_b
    return counts


def corpus_agreement(
    trees: Iterable[tuple[Sequence[int], Sequence[str], Sequence[int], Sequence[str]]]
) -> AgreementCounts:
    """The pooled counts of many sentences (``(heads A, labels A, heads B, labels B)`` each)."""
    total = AgreementCounts()
    for heads_a, labels_a, heads_b, labels_b in trees:
        total = total + sentence_agreement(heads_a, labels_a, heads_b, labels_b)
    return total
