"""Attachment scores with the CoNLL 2018 shared-task conventions.

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

Breakdowns (by UPOS, relation, arc and sentence length) are in :mod:`parsing.scorer.breakdowns`,
the JSON conversion in :mod:`parsing.scorer.report`, the shared data types in
:mod:`parsing.scorer.types` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from parsing.scorer.breakdowns import by_arc_length, by_deprel, by_sentence_length, by_upos
from parsing.scorer.types import ArcTable as ArcTable
from parsing.scorer.types import Attachment as Attachment
from parsing.scorer.types import BoolArray as BoolArray
from parsing.scorer.types import ExactMatch as ExactMatch
from parsing.scorer.types import IntArray as IntArray
from parsing.scorer.types import Score as Score
from parsing.scorer.types import SentenceBucket as SentenceBucket
from parsing.scorer.types import StrArray as StrArray
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
        by_arc_length: :data:`~parsing.scorer.breakdowns.ARC_LENGTH_BUCKETS` -> attachment.
        by_sentence_length: :data:`~parsing.scorer.breakdowns.SENTENCE_LENGTH_BUCKETS` -> bucket.
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
        noun = "sentence" if len(gold) == 1 else "sentences"
        raise ValueError(f"gold has {len(gold)} {noun} but system has {len(system)}")
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
    return arc_tables(gold, [system], exclude_punct=exclude_punct)[0]


def arc_tables(
    gold: Sequence[Sentence],
    systems: Sequence[Sequence[Sentence | Parse]],
    *,
    exclude_punct: bool = False,
) -> list[ArcTable]:
    """:func:`arc_table` of each system against the same gold, the gold words lined up once.

    Raises:
        ValueError: as :func:`arc_table` (the first system that differs from gold).
    """
    for system in systems:
        check_same_words(gold, system)
    lengths = np.array([len(sentence) for sentence in gold], dtype=np.intp)
    word_sentence = np.repeat(np.arange(len(gold), dtype=np.intp), lengths)
    gold_heads = _concat([s.heads[1:] for s in gold])
    if (gold_heads < 0).any():
        index = int(word_sentence[np.argmax(gold_heads < 0)])
        raise ValueError(f"gold sentence {index + 1} has words without a head")
    starts = np.cumsum(lengths) - lengths  # each sentence's first word in the table
    position = np.arange(1, len(word_sentence) + 1, dtype=np.intp) - np.repeat(starts, lengths)
    gold_deprels = universal_labels(s.deprels for s in gold)
    gold_upos = _labels(list(chain.from_iterable(s.upos[1:] for s in gold)))
    keep = None if not exclude_punct else ~np.array(
        [is_punctuation(u, r) for u, r in zip(gold_upos, gold_deprels, strict=True)], dtype=bool
    )
    tables = []
    for system in systems:
        tagged = all(s.upos is not None for s in system)
        table = ArcTable(
            word_sentence, position, lengths, gold_heads, _concat([s.heads[1:] for s in system]),
            gold_deprels, universal_labels(s.deprels for s in system), gold_upos,
            _labels(list(chain.from_iterable((s.upos or [])[1:] for s in system))) if tagged else None,
        )  # fmt: skip
        tables.append(table if keep is None else _select(table, keep))
    return tables


def _concat(parts: Sequence[NDArray[Any]]) -> IntArray:
    return np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, dtype=np.intp)


def universal_labels(deprels: Iterable[Sequence[str]]) -> StrArray:
    """The universal labels of words 1..n of each sentence's ``deprels`` (ROOT's entry dropped),
    concatenated: shape ``(W,)``. Each distinct label is split once, so this costs one array
    conversion and one sort of the ``W`` labels rather than ``W`` Python calls.

    Examples:
        >>> universal_labels([["", "nmod:poss", "root"], ["", "punct"]]).tolist()
        ['nmod', 'root', 'punct']
    """
    raw = _labels(list(chain.from_iterable(labels[1:] for labels in deprels)))
    if not len(raw):
        return raw
    distinct, inverse = np.unique(raw, return_inverse=True)
    return _labels([universal(str(label)) for label in distinct])[inverse.reshape(-1)]


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
    return evaluate_table(arc_table(gold, system, exclude_punct=exclude_punct), exclude_punct=exclude_punct)


def evaluate_table(table: ArcTable, *, exclude_punct: bool = False) -> Evaluation:
    """:func:`evaluate` of an arc table already made by :func:`arc_table` (with the same
    ``exclude_punct``): a caller that needs the table too lines the words up once."""
    total = attachment(table)
    return Evaluation(
        words=len(table),
        sentences=len(table.sentence_lengths),
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
