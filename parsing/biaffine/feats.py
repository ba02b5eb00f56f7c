"""FEATS predicted one category at a time (the ``biaffine`` member's ``feats="categories"``).

The whole-string classifier has one class per FEATS combination seen in training, so a word
whose combination is rare or new cannot be right. Here each category (``Case``, ``Number``, ...)
has its own choice among its values seen in training plus ``_`` (the word has no such feature),
and the string is composed from the choices, UD's order (names sorted case-insensitively).

All values live in one vocabulary of ``Name=Value`` strings (``Name=_`` for "absent"), so the
network needs one linear layer; :func:`feature_groups` says which of its rows belong to each
category, absent first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from parsing.biaffine.vocab import Vocabulary

if TYPE_CHECKING:
    import torch

ABSENT = "_"
"""The value of a category the word does not have."""


def split_feats(feats: str) -> dict[str, str]:
    """``"Case=Nom|Number=Sing"`` → ``{"Case": "Nom", "Number": "Sing"}`` (``"_"`` → ``{}``).

    Examples:
        >>> split_feats("Case=Acc,Nom|Number=Sing"), split_feats("_")
        ({'Case': 'Acc,Nom', 'Number': 'Sing'}, {})
    """
    if feats in ("", ABSENT):
        return {}
    return dict(part.split("=", 1) for part in feats.split("|") if "=" in part)


def join_feats(values: Iterable[tuple[str, str]]) -> str:
    """The FEATS string of ``(name, value)`` pairs, absent ones left out, in UD's order.

    Examples:
        >>> join_feats([("Number", "Sing"), ("case", "_"), ("Case", "Nom")])
        'Case=Nom|Number=Sing'
    """
    kept = sorted(((n, v) for n, v in values if v != ABSENT), key=lambda pair: pair[0].lower())
    return "|".join(f"{name}={value}" for name, value in kept) or ABSENT


def build_feature_vocabulary(feats: Iterable[str]) -> Vocabulary:
    """``Name=Value`` for every pair in the training FEATS strings, plus ``Name=_`` per name."""
    pairs = [f"{name}={value}" for string in feats for name, value in split_feats(string).items()]
    names = {pair.split("=", 1)[0] for pair in pairs}
    return Vocabulary.build([*pairs, *(f"{name}={ABSENT}" for name in names)])


def feature_groups(vocabulary: Vocabulary) -> list[tuple[str, list[int]]]:
    """Per category name (sorted) its value ids in ``vocabulary``, the absent value's first."""
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(vocabulary.items):
        if "=" in item:
            groups.setdefault(item.split("=", 1)[0], []).append(index)
    absent = vocabulary.index
    return [(name, sorted(ids, key=lambda i: (i != absent.get(f"{name}={ABSENT}"), i)))
            for name, ids in sorted(groups.items())]


def group_matrix(groups: Sequence[tuple[str, list[int]]], width: int) -> torch.Tensor:
    """:func:`feature_groups` as the network's ``feat_groups`` buffer, ``(K, width)``, -1 padded."""
    import torch

    return torch.tensor([ids + [-1] * (width - len(ids)) for _, ids in groups], dtype=torch.long)


def feature_targets(feats: str, vocabulary: Vocabulary, groups: Sequence[tuple[str, list[int]]],
                    ignore: int) -> list[int]:
    """Per category the position of the word's value within its group (0: absent), or
    ``ignore`` where the value was not seen in training or the word's FEATS are unknown."""
    if feats == "":
        return [ignore] * len(groups)
    values = split_feats(feats)
    targets = []
    for name, ids in groups:
        index = vocabulary.index.get(f"{name}={values.get(name, ABSENT)}")
        targets.append(ids.index(index) if index in ids else ignore)
    return targets
