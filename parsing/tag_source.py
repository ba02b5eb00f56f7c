"""Whose UPOS the members parse with, with predicted tags: the tagger's, or a self-tagging member's
(``biaffine``, :func:`parsing.members.is_self_tagging`) when it tags dev better.

A round with predicted tags trains the tagger and jackknifes the training tags as before. When a
self-tagging member is among the members, :func:`choose_tag_source` compares its UPOS on dev with
the tagger's; if the member's is higher, the model directory's manifest names it
(``"tag_source"``) and every later parse tags with it: the tagger's view first (its other
columns, if it predicts any), then the member's UPOS in place of the tagger's
(:func:`with_member_upos`). The member's own parse of those sentences is the one it would give
anyway (it reads forms, not tags), so it is parsed once.

The choice is the tagger setting ``tag_source``: ``"auto"`` (default, the rule above) or
``"tagger"`` (always the tagger).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from parsing.types import Parse, Sentence

TAG_SOURCES: tuple[str, ...] = ("auto", "tagger")
"""The values of the tagger setting ``tag_source``."""


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


def with_member_upos(sentences: Sequence[Sentence], parses: Sequence[Parse]) -> list[Sentence]:
    """Copies of ``sentences`` whose UPOS is the member's (``parses``, one per sentence); every
    other column is kept.

    Raises:
        ValueError: a parse of another length, or one without tags of its own.

    Examples:
        >>> import numpy as np
        >>> s = Sentence.from_words(["a", "b"], heads=[0, 1], upos=["X", "X"])
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"],
        ...           extras={"upos": ["<ROOT>", "NOUN", "VERB"]})
        >>> with_member_upos([s], [p])[0].upos
        ['<ROOT>', 'NOUN', 'VERB']
    """
    if len(parses) != len(sentences):
        raise ValueError(f"{len(parses)} parses for {len(sentences)} sentences")
    for number, (sentence, parse) in enumerate(zip(sentences, parses, strict=True), start=1):
        if len(parse) != len(sentence):
            raise ValueError(f"sentence {number}: the parse has {len(parse)} words, "
                             f"the sentence {len(sentence)}")
    return with_upos(sentences, [member_upos(parse) for parse in parses])


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
                      member_parses: Sequence[Parse], setting: str = "auto"
                      ) -> tuple[str | None, dict[str, float]]:
    """Whether ``member`` tags for the others: ``(member or None, dev UPOS accuracy by source)``.

    ``tagged_dev``: dev as the tagger tags it; ``member_parses``: the member's parses of dev.
    With ``setting="auto"`` the member is chosen when its dev UPOS is strictly higher than the
    tagger's; with ``"tagger"`` never (the accuracies are still returned).

    Examples:
        >>> import numpy as np
        >>> gold = [Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "VERB"])]
        >>> tagged = [Sentence.from_words(["a", "b"], heads=[0, 1], upos=["NOUN", "NOUN"])]
        >>> p = Parse(np.array([-1, 0, 1]), ["", "root", "dep"], extras={"upos": ["<ROOT>", "NOUN", "VERB"]})
        >>> choose_tag_source(gold, tagged, "biaffine", [p])
        ('biaffine', {'tagger': 0.5, 'biaffine': 1.0})
        >>> choose_tag_source(gold, tagged, "biaffine", [p], "tagger")[0] is None
        True
    """
    check_tag_source(setting)
    accuracy = {"tagger": upos_accuracy(gold_dev, [s.upos for s in tagged_dev]),
                member: upos_accuracy(gold_dev, [member_upos(p) for p in member_parses])}
    chosen = member if setting == "auto" and accuracy[member] > accuracy["tagger"] else None
    return chosen, accuracy


def tagging_summary(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a model directory's manifest says about the tags its members parse with, for a page:
    ``{"source": NAME or "tagger", "dev_upos": {NAME: percent}}``, plus, when the others trained on
    the member's own jackknifed tags (:mod:`parsing.member_folds`), ``"member_folds": {"folds": k,
    "seconds": s, "train_upos": {NAME: percent}}``; None when no comparison was made (gold tags, no
    dev split, or no self-tagging member).

    Examples:
        >>> tagging_summary({"tag_source": "biaffine", "dev_upos": {"tagger": 0.9284, "biaffine": 0.94123}})
        {'source': 'biaffine', 'dev_upos': {'tagger': 92.84, 'biaffine': 94.12}}
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
    folds = manifest.get("member_folds")
    if folds:
        summary["member_folds"] = {"folds": int(folds["folds"]), "seconds": float(folds["seconds"]),
                                   "train_upos": _percent(folds["train_upos"])}
    return summary


def _percent(accuracy: Mapping[str, Any]) -> dict[str, float]:
    return {name: round(100 * float(value), 2) for name, value in accuracy.items()}
