"""Attachment scores with the CoNLL 2018 shared-task conventions, and their breakdowns.

What is scored (the conventions of the official ``conll18_ud_eval.py``, shipped today as
``udtools.udeval``):

* Every syntactic word counts, **punctuation included** (unless ``exclude_punct``).
  Multiword-token ranges (``1-2``) and empty nodes (``3.1``) are not words:
  :mod:`parsing.conllu_io` never puts them in a :class:`~parsing.types.Sentence`.
* Labels are compared on their universal part: ``nmod:poss`` counts as ``nmod``.
* UAS: head correct. LAS: head and universal label correct. UPOS: tag correct.
* CLAS: LAS restricted to content words, i.e. words whose universal label is in
  :data:`CONTENT_DEPRELS`. That set is an allow-list copied from the official script, so
  everything else is excluded: the functional relations aux, case, cc, clf, cop, det,
  mark, punct, and any label outside the UD inventory (``_``, a typo, a made-up
  relation). Gold words are filtered by their gold label, system words by their system
  label; CLAS is the F1 of ``correct / system content words`` and
  ``correct / gold content words``, exactly as the official script reports it.

Unlike the official script this module does **not** re-tokenise or align: gold and system
must have the same sentences and the same words (same forms in the same order), which is
always the case for a parser run on gold tokens. With the same words, precision, recall
and F1 coincide for UAS, LAS and UPOS, and equal the official numbers.

Conventions: index 0 is ROOT; ``heads`` has shape ``(n+1,)`` with ``heads[0] == -1``.
Arrays below with a leading ``W`` are over all words of all sentences concatenated
(ROOT excluded), in corpus order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from parsing.types import Parse, Sentence

CONTENT_DEPRELS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
    "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod",
    "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan", "goeswith",
    "reparandum", "root", "dep",
})  # fmt: skip
"""Universal relations CLAS scores (``CONTENT_DEPRELS`` of the official CoNLL 2018 script)."""

NON_CONTENT_DEPRELS = frozenset({"aux", "case", "cc", "clf", "cop", "det", "mark", "punct"})
"""The UD relations CLAS leaves out (with any label that is not a UD relation)."""

ARC_LENGTH_BUCKETS = ("root", "1", "2", "3-6", "7+")
"""Labels of :func:`by_arc_length`'s buckets (gold ``|head - dependent|``; root = head 0)."""

SENTENCE_LENGTH_BUCKETS = ("1-10", "11-20", "21-30", "31-40", "41+")
"""Labels of :func:`by_sentence_length`'s buckets (words per sentence, punctuation included)."""

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]
StrArray = NDArray[np.str_]


@dataclass(frozen=True, slots=True)
class Score:
    """Counts behind one metric, with the official script's precision/recall/F1.

    For UAS, LAS and UPOS ``gold == system`` (the same words), so the three coincide.
    """

    correct: int
    gold: int
    system: int

    @property
    def precision(self) -> float:
        """``correct / system`` (0 when there is nothing to score)."""
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        """``correct / gold`` (0 when there is nothing to score)."""
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        """``2 * correct / (gold + system)``: the number the official script reports."""
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Attachment:
    """Unlabelled and labelled attachment counts over a group of words."""

    words: int
    uas_correct: int
    las_correct: int

    @property
    def uas(self) -> float:
        """Fraction of the group's words with the correct head (0 for an empty group)."""
        return self.uas_correct / self.words if self.words else 0.0

    @property
    def las(self) -> float:
        """Fraction with the correct head and universal label (0 for an empty group)."""
        return self.las_correct / self.words if self.words else 0.0


@dataclass(frozen=True, slots=True)
class SentenceBucket:
    """Attachment over the sentences of one length bucket, with their exact matches."""

    sentences: int
    attachment: Attachment
    exact_unlabelled: int
    exact_labelled: int


@dataclass(frozen=True, slots=True)
class ExactMatch:
    """Sentences whose every scored word is correct (unlabelled: heads; labelled: both)."""

    sentences: int
    unlabelled: int
    labelled: int

    @property
    def unlabelled_rate(self) -> float:
        """Fraction of sentences with every head right."""
        return self.unlabelled / self.sentences if self.sentences else 0.0

    @property
    def labelled_rate(self) -> float:
        """Fraction of sentences with every head and universal label right."""
        return self.labelled / self.sentences if self.sentences else 0.0


@dataclass(frozen=True, slots=True)
class ArcTable:
    """Gold and system annotations of every scored word, concatenated (``W`` words).

    Built once by :func:`arc_table`; every score and breakdown is a function of it.

    Attributes:
        sentence: shape ``(W,)``, index of each word's sentence.
        position: shape ``(W,)``, the word's index ``1..n`` in its sentence.
        sentence_lengths: shape ``(S,)``, words per sentence (all words, even unscored).
        gold_heads, system_heads: shape ``(W,)``; ``-1`` for an unknown system head.
        gold_deprels, system_deprels: shape ``(W,)``, universal labels (subtypes cut).
        gold_upos: shape ``(W,)``.
        system_upos: shape ``(W,)``, or None when the system did not tag.
    """

    sentence: IntArray
    position: IntArray
    sentence_lengths: IntArray
    gold_heads: IntArray
    system_heads: IntArray
    gold_deprels: StrArray
    system_deprels: StrArray
    gold_upos: StrArray
    system_upos: StrArray | None

    def __len__(self) -> int:
        """Number of scored words ``W``."""
        return len(self.gold_heads)

    @property
    def head_correct(self) -> BoolArray:
        """Shape ``(W,)``: the system head equals the gold head."""
        correct: BoolArray = self.gold_heads == self.system_heads
        return correct

    @property
    def label_correct(self) -> BoolArray:
        """Shape ``(W,)``: head and universal label both correct (LAS)."""
        correct: BoolArray = self.head_correct & (self.gold_deprels == self.system_deprels)
        return correct


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything :func:`evaluate` measures. Scores are fractions in ``[0, 1]``.

    Attributes:
        words, sentences: how many words were scored and sentences read.
        uas, las, clas, upos: counts behind each metric (``upos`` is None when the system
            has no tags); report ``.f1``.
        exact_match: complete-tree matches.
        by_upos: gold UPOS of the dependent -> attachment.
        by_deprel: universal relation -> labelled-attachment precision/recall
            (gold = words with that gold label, system = with that system label).
        by_arc_length: :data:`ARC_LENGTH_BUCKETS` -> attachment.
        by_sentence_length: :data:`SENTENCE_LENGTH_BUCKETS` -> bucket.
        exclude_punct: whether punctuation was left out.
    """

    words: int
    sentences: int
    uas: Score
    las: Score
    clas: Score
    upos: Score | None
    exact_match: ExactMatch
    by_upos: dict[str, Attachment]
    by_deprel: dict[str, Score]
    by_arc_length: dict[str, Attachment]
    by_sentence_length: dict[str, SentenceBucket]
    exclude_punct: bool = False


def universal(deprel: str) -> str:
    """The universal part of a dependency label.

    Examples:
        >>> universal("nmod:poss"), universal("punct")
        ('nmod', 'punct')
    """
    return deprel.split(":", 1)[0]


def is_punctuation(upos: str, deprel: str) -> bool:
    """Whether a **gold** word counts as punctuation for ``exclude_punct``.

    A word is punctuation when its gold UPOS is ``PUNCT`` or its gold universal label is
    ``punct`` (either suffices, so a treebank without tags still works). Only gold is
    looked at, so every system is scored on the same words.

    Examples:
        >>> is_punctuation("PUNCT", "punct"), is_punctuation("SYM", "punct:x")
        (True, True)
        >>> is_punctuation("NOUN", "nsubj")
        False
    """
    return upos == "PUNCT" or universal(deprel) == "punct"


def check_same_words(gold: Sequence[Sentence], system: Sequence[Sentence | Parse]) -> None:
    """Raise ValueError unless ``system`` has exactly ``gold``'s sentences and words.

    Forms are compared when the system item is a :class:`~parsing.types.Sentence`; a
    :class:`~parsing.types.Parse` has no forms, so only its length is checked.

    Raises:
        ValueError: naming the first sentence (1-based, with its ``sent_id``) and word
            that differ.
    """
    if len(gold) != len(system):
        raise ValueError(f"gold has {len(gold)} sentences but system has {len(system)}")
    for index, (gold_sentence, system_sentence) in enumerate(zip(gold, system, strict=True)):
        where = f"sentence {index + 1}" + (
            f" (sent_id {gold_sentence.sent_id})" if gold_sentence.sent_id else ""
        )
        if len(gold_sentence) != len(system_sentence):
            raise ValueError(
                f"{where}: gold has {len(gold_sentence)} words but system has "
                f"{len(system_sentence)} (the scorer does not re-tokenise)"
            )
        if isinstance(system_sentence, Sentence):
            pairs = zip(gold_sentence.forms[1:], system_sentence.forms[1:], strict=True)
            for word, (gold_form, system_form) in enumerate(pairs, start=1):
                if gold_form != system_form:
                    raise ValueError(
                        f"{where}, word {word}: gold form {gold_form!r} but system form "
                        f"{system_form!r} (the scorer does not re-tokenise)"
                    )


def arc_table(
    gold: Sequence[Sentence],
    system: Sequence[Sentence | Parse],
    *,
    exclude_punct: bool = False,
) -> ArcTable:
    """Line up gold and system words into concatenated arrays.

    Args:
        gold: gold sentences; every one must have a tree (all heads known).
        system: the system's sentences or parses, one per gold sentence, same words.
        exclude_punct: leave out words :func:`is_punctuation` calls punctuation.

    Returns:
        The table of the scored words.

    Raises:
        ValueError: different sentences or words (see :func:`check_same_words`), or a
            gold sentence without a tree.
    """
    check_same_words(gold, system)
    for index, sentence in enumerate(gold):
        if not sentence.has_tree:
            raise ValueError(f"gold sentence {index + 1} has words without a head")
    lengths = np.array([len(sentence) for sentence in gold], dtype=np.intp)
    word_sentence = np.repeat(np.arange(len(gold), dtype=np.intp), lengths)
    position = _concat([np.arange(1, n + 1, dtype=np.intp) for n in lengths])
    gold_heads = _concat([s.heads[1:] for s in gold])
    system_heads = _concat([s.heads[1:] for s in system])
    gold_deprels = _labels([universal(r) for s in gold for r in s.deprels[1:]])
    system_deprels = _labels([universal(r) for s in system for r in s.deprels[1:]])
    gold_upos = _labels([tag for s in gold for tag in s.upos[1:]])
    tagged = all(s.upos is not None for s in system)
    system_upos = _labels([t for s in system for t in (s.upos or [])[1:]]) if tagged else None
    table = ArcTable(
        word_sentence, position, lengths, gold_heads, system_heads,
        gold_deprels, system_deprels, gold_upos, system_upos,
    )  # fmt: skip
    if not exclude_punct:
        return table
    punct = np.array(
        [is_punctuation(u, r) for u, r in zip(gold_upos, gold_deprels, strict=True)], dtype=bool
    )
    return _select(table, ~punct)


def _concat(parts: Sequence[NDArray[Any]]) -> IntArray:
    return np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, dtype=np.intp)


def _labels(values: list[str]) -> StrArray:
    return np.array(values, dtype=np.str_) if values else np.zeros(0, dtype="<U1")


def _select(table: ArcTable, keep: BoolArray) -> ArcTable:
    """The rows of ``table`` where ``keep`` (shape ``(W,)``) is true."""
    return ArcTable(
        table.sentence[keep], table.position[keep], table.sentence_lengths,
        table.gold_heads[keep], table.system_heads[keep],
        table.gold_deprels[keep], table.system_deprels[keep], table.gold_upos[keep],
        None if table.system_upos is None else table.system_upos[keep],
    )  # fmt: skip


def attachment(table: ArcTable) -> Attachment:
    """UAS and LAS counts over every word of ``table``."""
    return Attachment(len(table), int(table.head_correct.sum()), int(table.label_correct.sum()))


def clas_score(table: ArcTable) -> Score:
    """CLAS counts: labelled attachment of content words (see the module docstring)."""
    content = np.array(sorted(CONTENT_DEPRELS))
    gold_content = np.isin(table.gold_deprels, content)
    system_content = np.isin(table.system_deprels, content)
    correct = table.label_correct & gold_content
    return Score(int(correct.sum()), int(gold_content.sum()), int(system_content.sum()))


def upos_score(table: ArcTable) -> Score | None:
    """UPOS accuracy counts, or None when the system has no tags."""
    if table.system_upos is None:
        return None
    correct = int((table.gold_upos == table.system_upos).sum())
    return Score(correct, len(table), len(table))


def exact_match(table: ArcTable) -> ExactMatch:
    """Complete-tree matches: sentences none of whose scored words is wrong.

    A sentence with no scored word (all punctuation under ``exclude_punct``) counts as
    matched.
    """
    sentences = len(table.sentence_lengths)
    head_errors = np.bincount(table.sentence[~table.head_correct], minlength=sentences)
    label_errors = np.bincount(table.sentence[~table.label_correct], minlength=sentences)
    return ExactMatch(sentences, int((head_errors == 0).sum()), int((label_errors == 0).sum()))


def by_upos(table: ArcTable) -> dict[str, Attachment]:
    """Attachment per gold UPOS of the dependent, tags sorted; counts sum to the totals."""
    return _grouped(table, table.gold_upos)


def by_deprel(table: ArcTable) -> dict[str, Score]:
    """Labelled attachment per universal relation, like CoNLL-X ``eval.pl``.

    For relation ``r``: ``gold`` = words whose gold label is ``r``, ``system`` = words
    whose system label is ``r``, ``correct`` = words with gold label ``r`` whose head and
    label the system got right. So ``precision`` / ``recall`` are per system / gold label.
    """
    correct = table.label_correct
    relations = sorted(set(table.gold_deprels.tolist()) | set(table.system_deprels.tolist()))
    return {
        relation: Score(
            int((correct & (table.gold_deprels == relation)).sum()),
            int((table.gold_deprels == relation).sum()),
            int((table.system_deprels == relation).sum()),
        )
        for relation in relations
    }


def arc_length_bucket(gold_heads: IntArray, positions: IntArray) -> StrArray:
    """Bucket label of every gold arc (shape ``(W,)`` each): root, 1, 2, 3-6 or 7+.

    Examples:
        >>> arc_length_bucket(np.array([0, 1, 1, 9]), np.array([1, 2, 4, 1])).tolist()
        ['root', '1', '3-6', '7+']
    """
    length = np.abs(gold_heads - positions)
    index = np.select([gold_heads == 0, length == 1, length == 2, length <= 6], [0, 1, 2, 3], 4)
    labels: StrArray = np.array(ARC_LENGTH_BUCKETS)[index]
    return labels


def by_arc_length(table: ArcTable) -> dict[str, Attachment]:
    """Attachment per gold arc length bucket (:data:`ARC_LENGTH_BUCKETS`, all present)."""
    buckets = arc_length_bucket(table.gold_heads, table.position)
    return _grouped(table, buckets, keys=ARC_LENGTH_BUCKETS)


def sentence_length_bucket(lengths: IntArray) -> StrArray:
    """Bucket label of every sentence length (shape ``(S,)``): 1-10, ..., 41+.

    Examples:
        >>> sentence_length_bucket(np.array([1, 10, 11, 40, 41])).tolist()
        ['1-10', '1-10', '11-20', '31-40', '41+']
    """
    index = np.minimum((np.maximum(lengths, 1) - 1) // 10, len(SENTENCE_LENGTH_BUCKETS) - 1)
    labels: StrArray = np.array(SENTENCE_LENGTH_BUCKETS)[index]
    return labels


def by_sentence_length(table: ArcTable) -> dict[str, SentenceBucket]:
    """Attachment and exact matches per sentence-length bucket (all buckets present)."""
    sentence_bucket = sentence_length_bucket(table.sentence_lengths)
    word_attachment = _grouped(table, sentence_bucket[table.sentence],
                               keys=SENTENCE_LENGTH_BUCKETS)
    sentences = len(table.sentence_lengths)
    head_ok = np.bincount(table.sentence[~table.head_correct], minlength=sentences) == 0
    label_ok = np.bincount(table.sentence[~table.label_correct], minlength=sentences) == 0
    result = {}
    for key in SENTENCE_LENGTH_BUCKETS:
        members = sentence_bucket == key
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


def evaluate(
    gold: Sequence[Sentence],
    system: Sequence[Sentence | Parse],
    *,
    exclude_punct: bool = False,
) -> Evaluation:
    """Score a system against gold with the CoNLL 2018 conventions (module docstring).

    The scorer does not re-tokenise: gold and system must hold the same sentences with
    the same words (forms, in order); run the parser on gold tokenisation.

    Args:
        gold: gold sentences, each with a tree.
        system: one :class:`~parsing.types.Sentence` (e.g. read from the system's
            CoNLL-U file) or :class:`~parsing.types.Parse` per gold sentence.
        exclude_punct: score only words that are not gold punctuation (gold UPOS
            ``PUNCT`` or gold label ``punct``); this applies to every metric and
            breakdown. Off by default, as in CoNLL 2018.

    Returns:
        Totals, exact matches and every breakdown.

    Raises:
        ValueError: the sentences or words differ (naming the first difference), or a
            gold sentence has no tree.

    Examples:
        >>> gold = [Sentence.from_words(["She", "runs"], heads=[2, 0], deprels=["nsubj", "root"])]
        >>> system = [Parse(heads=np.array([-1, 0, 1]), deprels=["", "root", "nsubj"])]
        >>> evaluate(gold, system).uas.f1
        0.0
        >>> evaluate(gold, gold).las.f1
        1.0
    """
    table = arc_table(gold, system, exclude_punct=exclude_punct)
    total = attachment(table)
    return Evaluation(
        words=len(table),
        sentences=len(gold),
        uas=Score(total.uas_correct, total.words, total.words),
        las=Score(total.las_correct, total.words, total.words),
        clas=clas_score(table),
        upos=upos_score(table),
        exact_match=exact_match(table),
        by_upos=by_upos(table),
        by_deprel=by_deprel(table),
        by_arc_length=by_arc_length(table),
        by_sentence_length=by_sentence_length(table),
        exclude_punct=exclude_punct,
    )


def _percent(fraction: float) -> float:
    return round(100.0 * fraction, 4)


def _attachment_dict(counts: Attachment) -> dict[str, float | int]:
    return {"words": counts.words, "UAS": _percent(counts.uas), "LAS": _percent(counts.las)}


def _score_dict(score: Score) -> dict[str, float | int]:
    return {
        "correct": score.correct, "gold": score.gold, "system": score.system,
        "precision": _percent(score.precision), "recall": _percent(score.recall),
        "f1": _percent(score.f1),
    }  # fmt: skip


BREAKDOWNS = ("by_upos", "by_deprel", "by_arc_length", "by_sentence_length")
"""Keys of the breakdowns in :func:`evaluation_to_dict`."""


def evaluation_to_dict(
    evaluation: Evaluation, *, breakdowns: Sequence[str] = BREAKDOWNS
) -> dict[str, Any]:
    """A JSON-ready dict: ``UAS``, ``LAS``, ``CLAS``, ``UPOS`` as percentages (F1).

    Args:
        evaluation: what :func:`evaluate` returned.
        breakdowns: which of :data:`BREAKDOWNS` to include.

    Returns:
        ``{"UAS": float, "LAS": float, "CLAS": float, "UPOS": float | None, "words": int,
        "sentences": int, "exclude_punct": bool, "counts": {...}, "exact_match": {...},
        "by_upos": {...}, ...}``; percentages are rounded to 4 decimals.
    """
    scores: Mapping[str, Score | None] = {
        "UAS": evaluation.uas, "LAS": evaluation.las,
        "CLAS": evaluation.clas, "UPOS": evaluation.upos,
    }  # fmt: skip
    result: dict[str, Any] = {
        name: None if score is None else _percent(score.f1) for name, score in scores.items()
    }
    result["words"] = evaluation.words
    result["sentences"] = evaluation.sentences
    result["exclude_punct"] = evaluation.exclude_punct
    result["counts"] = {
        name: _score_dict(score) for name, score in scores.items() if score is not None
    }
    match = evaluation.exact_match
    result["exact_match"] = {
        "sentences": match.sentences,
        "unlabelled": _percent(match.unlabelled_rate),
        "labelled": _percent(match.labelled_rate),
    }
    if "by_upos" in breakdowns:
        result["by_upos"] = {k: _attachment_dict(v) for k, v in evaluation.by_upos.items()}
    if "by_deprel" in breakdowns:
        result["by_deprel"] = {k: _score_dict(v) for k, v in evaluation.by_deprel.items()}
    if "by_arc_length" in breakdowns:
        result["by_arc_length"] = {
            k: _attachment_dict(v) for k, v in evaluation.by_arc_length.items()
        }
    if "by_sentence_length" in breakdowns:
        result["by_sentence_length"] = {
            key: {
                "sentences": bucket.sentences,
                **_attachment_dict(bucket.attachment),
                "exact_unlabelled": bucket.exact_unlabelled,
                "exact_labelled": bucket.exact_labelled,
            }
            for key, bucket in evaluation.by_sentence_length.items()
        }
    return result
