"""Whose UPOS the members parse with, with predicted tags: the tagger's, or a self-tagging member's
(``biaffine``, :func:`parsing.members.is_self_tagging`) when it tags dev better.

A round with predicted tags trains the tagger and jackknifes the training tags as before. When a
self-tagging member is among the members, :func:`choose_tag_source` compares its UPOS on dev with
the tagger's; if the member's is higher, the model directory's manifest names it
(``"tag_source"``) and every later parse tags with it: the tagger's view first (its other
columns, if it predicts any), then the member's UPOS in place of the tagger's
(:func:`with_member_upos`, which keeps the tagger's in ``Sentence.tagger_upos``). The member's own
parse of those sentences is the one it would give anyway (it reads the forms and, with
``upos_inputs``, the tagger's UPOS, never its own), so it is parsed once.

A member that reads the tagger's UPOS learns from gold sentences paired with the tagger's
jackknifed UPOS (:func:`with_tagger_upos`): the gold tags are its targets, the tagger's its input.

Word by word the two can be combined: the member's UPOS where its probability (``extras["upos_p"]``)
is at least a threshold, the tagger's elsewhere. :func:`choose_tag_source` picks the threshold
among :data:`THRESHOLDS` by dev accuracy (0: the member's everywhere) and chooses the member only
when that beats the tagger on dev; the manifest keeps it (``"upos_threshold"``).

The choice is the tagger setting ``tag_source``: ``"auto"`` (default, the rule above) or
``"tagger"`` (always the tagger).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from parsing.types import Parse, Sentence

TAG_SOURCES: tuple[str, ...] = ("auto", "tagger")
"""The values of the tagger setting ``tag_source``."""

THRESHOLDS: tuple[float, ...] = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.92, 0.95, 0.98)
"""The member's UPOS probabilities at or above which its tag is taken, tried on dev (0: always)."""

COMBINED = "combined"
"""The key of the combined tags' dev accuracy in :attr:`TagChoice.dev_upos`."""


class TagChoice(NamedTuple):
    """What :func:`choose_tag_source` decided."""

    source: str | None
    """The member whose UPOS the others parse with, or None (the tagger's)."""
    dev_upos: dict[str, float]
    """Dev UPOS accuracy (0..1) of ``"tagger"``, of the member alone and of :data:`COMBINED`."""
    threshold: float
    """The member's tag is taken where its probability is at least this (0.0: everywhere)."""


def check_tag_source(value: object) -> str:
    """``value`` when it is a known ``tag_source`` setting.

    Raises:
        ValueError: another value, naming the known ones.
    """
    if value not in TAG_SOURCES:
        raise ValueError(f"tagger.tag_source is one of {', '.join(TAG_SOURCES)}, not {value!r}")
    return str(value)


def member_upos(parse: Parse) -> list[str]:
    """The UPOS a self-tagging member predicted (``extras["upos"]``, ``n+1`` tags, ROOT first).

    Raises:
        ValueError: the parse carries no tags of its own.
    """
    tags = parse.extras.get("upos")
    if not isinstance(tags, list) or len(tags) != len(parse) + 1:
        raise ValueError("the member's parse carries no UPOS of its own (extras['upos'])")
    return [str(tag) for tag in tags]


def combined_upos(tagged: Sentence, parse: Parse, threshold: float = 0.0) -> list[str]:
    """The member's UPOS where its probability is at least ``threshold``, ``tagged``'s elsewhere
    (``n+1`` tags, ROOT first). A parse without probabilities (``extras["upos_p"]``) counts as sure.

    Examples:
        >>> import numpy as np
        >>> s = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["X", "Y"])
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"],
        ...           extras={"upos": ["<ROOT>", "NOUN", "VERB"], "upos_p": [float("nan"), 0.95, 0.6]})
        >>> combined_upos(s, p, 0.9), combined_upos(s, p)
        (['<ROOT>', 'NOUN', 'Y'], ['<ROOT>', 'NOUN', 'VERB'])
    """
    own = member_upos(parse)
    sure = parse.extras.get("upos_p")
    if threshold <= 0.0 or not isinstance(sure, list):
        return own
    return [own[d] if d == 0 or sure[d] >= threshold else tagged.upos[d] for d in range(len(own))]


def with_member_upos(sentences: Sequence[Sentence], parses: Sequence[Parse],
                     threshold: float = 0.0) -> list[Sentence]:
    """Copies of ``sentences`` whose UPOS is the member's (``parses``, one per sentence) where it is
    at least ``threshold`` sure (:func:`combined_upos`); every other column is kept, and the
    UPOS replaced (the tagger's) is kept as ``tagger_upos`` unless one is there already.

    Raises:
        ValueError: a parse of another length, or one without tags of its own.

    Examples:
        >>> import numpy as np
        >>> s = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["X", "X"])
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"],
        ...           extras={"upos": ["<ROOT>", "NOUN", "VERB"]})
        >>> combined = with_member_upos([s], [p])[0]
        >>> combined.upos, combined.tagger_upos
        (['<ROOT>', 'NOUN', 'VERB'], ['<ROOT>', 'X', 'X'])
    """
    if len(parses) != len(sentences):
        raise ValueError(f"{len(parses)} parses for {len(sentences)} sentences")
    for number, (sentence, parse) in enumerate(zip(sentences, parses, strict=True), start=1):
        if len(parse) != len(sentence):
            raise ValueError(f"sentence {number}: the parse has {len(parse)} words, "
                             f"the sentence {len(sentence)}")
    return [replace(sentence, upos=combined_upos(sentence, parse, threshold),
                    tagger_upos=list(sentence.upos) if sentence.tagger_upos is None else sentence.tagger_upos)
            for sentence, parse in zip(sentences, parses, strict=True)]


def with_tagger_upos(gold: Sequence[Sentence], tagged: Sequence[Sentence]) -> list[Sentence]:
    """Copies of ``gold`` carrying ``tagged``'s UPOS (the same sentences as the tagger tagged
    them) as :attr:`~parsing.types.Sentence.tagger_upos`: what a member that reads the tagger's
    UPOS learns from, the gold tags its targets and the tagger's its input.

    Raises:
        ValueError: another number of sentences, or a pair of different lengths.

    Examples:
        >>> gold = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "VERB"])
        >>> tagged = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "NOUN"])
        >>> paired = with_tagger_upos([gold], [tagged])[0]
        >>> paired.upos, paired.tagger_upos
        (['<ROOT>', 'NOUN', 'VERB'], ['<ROOT>', 'NOUN', 'NOUN'])
    """
    if len(tagged) != len(gold):
        raise ValueError(f"{len(tagged)} tagged sentences for {len(gold)} gold ones")
    out = []
    for number, (sentence, view) in enumerate(zip(gold, tagged, strict=True), start=1):
        if len(view) != len(sentence):
            raise ValueError(f"sentence {number}: tagged with {len(view)} words, "
                             f"the gold one has {len(sentence)}")
        out.append(replace(sentence, tagger_upos=list(view.upos)))
    return out


def with_upos(sentences: Sequence[Sentence], upos: Sequence[Sequence[str]]) -> list[Sentence]:
    """Copies of ``sentences`` with ``upos`` (one ``n+1`` list per sentence, ROOT first) in place of
    their UPOS; every other column is kept.

    Raises:
        ValueError: another number of tag lists, or a sentence and its tags of different lengths.
    """
    if len(upos) != len(sentences):
        raise ValueError(f"{len(upos)} tag lists for {len(sentences)} sentences")
    out = []
    for number, (sentence, tags) in enumerate(zip(sentences, upos, strict=True), start=1):
        if len(tags) != len(sentence.upos):
            raise ValueError(f"sentence {number}: {len(tags) - 1} tags for {len(sentence)} words")
        out.append(replace(sentence, upos=list(tags)))
    return out


def upos_accuracy(gold: Sequence[Sentence], tags: Sequence[Sequence[str]]) -> float:
    """Share (0..1) of the words of ``gold`` whose UPOS equals ``tags`` (one ``n+1`` list per
    sentence, ROOT first); 0.0 for no words.

    Examples:
        >>> s = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "VERB"])
        >>> upos_accuracy([s], [["<ROOT>", "NOUN", "ADJ"]])
        0.5
    """
    right = total = 0
    for sentence, predicted in zip(gold, tags, strict=True):
        right += sum(g == t for g, t in zip(sentence.upos[1:], predicted[1:], strict=True))
        total += len(sentence)
    return right / total if total else 0.0


def choose_tag_source(gold_dev: Sequence[Sentence], tagged_dev: Sequence[Sentence], member: str,
                      member_parses: Sequence[Parse], setting: str = "auto") -> TagChoice:
    """Whether ``member`` tags for the others, and where it is sure enough to.

    ``tagged_dev``: dev as the tagger tags it; ``member_parses``: the member's parses of dev.
    Every threshold of :data:`THRESHOLDS` combines the two (:func:`combined_upos`); the best on dev
    (the lowest of equals) is kept, and with ``setting="auto"`` the member is chosen when that
    combination's dev UPOS is strictly higher than the tagger's; with ``"tagger"`` never (the
    accuracies are still returned).

    Examples:
        >>> import numpy as np
        >>> gold = [Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "VERB"])]
        >>> tagged = [Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "NOUN"])]
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"], extras={"upos": ["<ROOT>", "NOUN", "VERB"]})
        >>> choice = choose_tag_source(gold, tagged, "biaffine", [p])
        >>> choice.source, choice.dev_upos, choice.threshold
        ('biaffine', {'tagger': 0.5, 'biaffine': 1.0, 'combined': 1.0}, 0.0)
        >>> choose_tag_source(gold, tagged, "biaffine", [p], "tagger").source is None
        True
    """
    check_tag_source(setting)

    def accuracy(threshold: float) -> float:
        return upos_accuracy(gold_dev, [combined_upos(t, p, threshold)
                                        for t, p in zip(tagged_dev, member_parses, strict=True)])

    tried = {threshold: accuracy(threshold) for threshold in THRESHOLDS}
    threshold = max(THRESHOLDS, key=lambda value: (tried[value], -value))
    dev_upos = {"tagger": upos_accuracy(gold_dev, [s.upos for s in tagged_dev]), member: tried[0.0],
                COMBINED: tried[threshold]}
    chosen = member if setting == "auto" and dev_upos[COMBINED] > dev_upos["tagger"] else None
    return TagChoice(chosen, dev_upos, threshold)


def tagging_summary(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a model directory's manifest says about the tags its members parse with, for a page:
    ``{"source": NAME or "tagger", "dev_upos": {NAME: percent}}`` (with a member as the source,
    also ``"threshold"``: its tags are taken where it is that sure, the tagger's elsewhere), plus,
    when the others trained on the member's own jackknifed tags (:mod:`parsing.member_folds`),
    ``"member_folds": {"folds": k, "seconds": s, "train_upos": {NAME: percent}}``; None when no
    comparison was made (gold tags, no dev split, or no self-tagging member).

    Examples:
        >>> tagging_summary({"tag_source": "biaffine", "dev_upos": {"tagger": 0.9284, "biaffine": 0.94123},
        ...                  "upos_threshold": 0.9})
        {'source': 'biaffine', 'dev_upos': {'tagger': 92.84, 'biaffine': 94.12}, 'threshold': 0.9}
        >>> folds = {"folds": 3, "seconds": 61.0, "train_upos": {"tagger": 0.9, "biaffine": 0.93}}
        >>> tagging_summary({"tag_source": "biaffine", "dev_upos": {"tagger": 0.9, "biaffine": 0.95},
        ...                  "member_folds": folds})["member_folds"]
        {'folds': 3, 'seconds': 61.0, 'train_upos': {'tagger': 90.0, 'biaffine': 93.0}}
        >>> tagging_summary({"tags": "gold"}) is None
        True
    """
    accuracy = manifest.get("dev_upos")
    if not accuracy:
        return None
    source = manifest.get("tag_source") or "tagger"
    summary: dict[str, Any] = {"source": source, "dev_upos": _percent(accuracy)}
    if manifest.get("tag_source"):
        summary["threshold"] = float(manifest.get("upos_threshold", 0.0))
    folds = manifest.get("member_folds")
    if folds:
        summary["member_folds"] = {"folds": int(folds["folds"]), "seconds": float(folds["seconds"]),
                                   "train_upos": _percent(folds["train_upos"])}
    return summary


def _percent(accuracy: Mapping[str, Any]) -> dict[str, float]:
    return {name: round(100 * float(value), 2) for name, value in accuracy.items()}
