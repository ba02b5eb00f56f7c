"""Continuing a fitted neural network on more trees (a *warm round*): vocabularies grown, weights kept.

A round adds a few trees to what the previous round trained on. A warm fit keeps every known
word, character, tag, lemma script and label at its index and appends the new ones, so each
weight tensor of the new network holds the old one as its leading block (vocabularies index the
first dimension of embeddings and classifiers). A new entry's input embedding starts as the
unknown entry's (what the network read for it until now; :data:`INPUT_TABLES`), a new output
class's rows as a fresh network draws them. Plain functions over arrays and tensors; the members
call them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from parsing.biaffine.vocab import SPECIALS, Vocabulary


def grown_vocabularies(previous: Mapping[str, Sequence[str]],
                       current: Mapping[str, Vocabulary]) -> dict[str, Vocabulary] | None:
    """Each vocabulary of ``current`` as ``previous``'s items followed by the items only
    ``current`` has (in its order), so every earlier index keeps its meaning; None when the two
    do not hold the same vocabularies (the network reads other inputs: train it afresh).

    Examples:
        >>> old = {"words": ["<pad>", "<unk>", "a", "b"]}
        >>> new = {"words": Vocabulary.build(["c", "b", "c"])}
        >>> grown_vocabularies(old, new)["words"].items
        ['<pad>', '<unk>', 'a', 'b', 'c']
        >>> grown_vocabularies(old, {"chars": Vocabulary.build(["x"])}) is None
        True
    """
    if set(previous) != set(current):
        return None
    grown = {}
    for name, vocabulary in current.items():
        items = list(previous[name])
        known = set(items)
        grown[name] = Vocabulary(items + [item for item in vocabulary.items[SPECIALS:] if item not in known])
    return grown


INPUT_TABLES = ("words.weight", "chars.embed.weight", "tags.weight", "given_labels.weight", "tag_embeddings.")
"""The state names (or name prefixes) of the embedding tables a vocabulary indexes, in both
neural members' networks."""


def grown_state(previous: Mapping[str, np.ndarray[Any, Any]],
                fresh: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor] | None:
    """``fresh`` (a new network's ``state_dict``) with ``previous``'s weights written over the
    leading block of each tensor: ``previous[k]`` of shape ``(a, b, ...)`` fills
    ``fresh[k][:a, :b, ...]``, the rest keeps the fresh values, except the new rows of an input
    embedding table (:data:`INPUT_TABLES`), which copy its unknown entry's row (index 1). None when
    a name is missing on either side or a tensor would shrink or change rank (another architecture).

    Examples:
        >>> old = {"w": np.ones((2, 3), dtype=np.float32)}
        >>> new = grown_state(old, {"w": torch.zeros(3, 3)})
        >>> new["w"].sum().item(), new["w"][2].sum().item()
        (6.0, 0.0)
        >>> grown_state(old, {"w": torch.zeros(1, 3)}) is None
        True
    """
    if set(previous) != set(fresh):
        return None
    state = {}
    for name, tensor in fresh.items():
        old = np.asarray(previous[name])
        if old.ndim != tensor.dim() or any(a > b for a, b in zip(old.shape, tensor.shape, strict=True)):
            return None
        grown = tensor.detach().clone()
        grown[tuple(slice(0, size) for size in old.shape)] = torch.from_numpy(old).to(grown.dtype)
        if name.startswith(INPUT_TABLES) and grown.shape[0] > old.shape[0] > 1:
            grown[old.shape[0]:] = grown[1]
        state[name] = grown
    return state


SIZE_FIELDS = frozenset({"words", "chars", "upos", "xpos", "feats", "lemmas", "deprels", "feat_values",
                         "feat_categories", "feat_width", "pretrained", "pretrained_dim", "encoder_dim"})
"""The fields of a network configuration that a vocabulary sets (they may grow in a warm fit)."""


def same_layers(saved: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether two network configurations (``as_dict()`` of each) differ only in vocabulary
    sizes (:data:`SIZE_FIELDS`), so the saved weights can continue in the wanted network.

    Examples:
        >>> same_layers({"words": 5, "hidden": 200}, {"words": 9, "hidden": 200})
        True
        >>> same_layers({"words": 5, "hidden": 200}, {"words": 5, "hidden": 100})
        False
    """
    return ({key: value for key, value in saved.items() if key not in SIZE_FIELDS}
            == {key: value for key, value in wanted.items() if key not in SIZE_FIELDS})


def grown_actions(previous: np.ndarray[Any, Any], fresh: torch.Tensor, labels: int) -> torch.Tensor:
    """An action classifier's rows (weights ``(A, k)`` or biases ``(A,)``) for more labels:
    the actions are ``[SHIFT, LEFT_1..L, RIGHT_1..L]`` (:class:`parsing.neural.search.ActionSpace`),
    so with labels appended after the ``labels`` known ones the RIGHT rows move down; each known
    action keeps its row, the new ones keep ``fresh``'s.

    Examples:
        >>> grown_actions(np.array([0.0, 1.0, 2.0]), torch.full((5,), 9.0), 1).tolist()
        [0.0, 1.0, 9.0, 2.0, 9.0]
    """
    grown = fresh.detach().clone()
    old = torch.from_numpy(np.asarray(previous)).to(grown.dtype)
    wide = (grown.shape[0] - 1) // 2
    if old.shape[0] != 2 * labels + 1 or wide < labels or old.shape[1:] != grown.shape[1:]:
        raise ValueError(f"{old.shape[0]} action rows do not hold SHIFT, LEFT and RIGHT of {labels} labels "
                         f"within {grown.shape[0]}")
    grown[: 1 + labels] = old[: 1 + labels]
    grown[1 + wide: 1 + wide + labels] = old[1 + labels:]
    return grown


def grown_with_actions(previous: Mapping[str, np.ndarray[Any, Any]], fresh: Mapping[str, torch.Tensor],
                       labels: int, action_layer: str) -> dict[str, torch.Tensor]:
    """:func:`grown_state` for a transition network whose tensors named ``action_layer``...
    score the actions (:func:`grown_actions`; ``labels``: the labels ``previous`` knew).

    Raises:
        ValueError: the two networks' other layers differ.
    """
    actions = {key for key in fresh if key.startswith(action_layer)}
    state = grown_state({k: v for k, v in previous.items() if k not in actions},
                        {k: v for k, v in fresh.items() if k not in actions})
    if state is None:
        raise ValueError("the fitted network's layers differ from the ones to continue")
    return {**state, **{key: grown_actions(previous[key], fresh[key], labels) for key in actions}}
