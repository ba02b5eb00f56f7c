"""From the network's scores to :class:`~parsing.types.Parse` objects: trees over the heads'
log-probabilities, labels at the chosen heads, tags and lemmas by their best class."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from parsing.biaffine.batching import COLUMNS, Contextual, encode
from parsing.biaffine.feats import feature_groups, join_feats
from parsing.biaffine.network import JointNetwork
from parsing.biaffine.vocab import SPECIALS, Vocabulary, apply_script
from parsing.constraints import Constraints
from parsing.types import ROOT, Parse, Sentence

TOP_HEADS = 3
"""How many of each word's most probable heads a parse keeps (``extras["head_top"]``)."""
TreeDecoder = Callable[[np.ndarray[Any, np.dtype[np.float64]], Constraints | None], np.ndarray[Any, Any]]
"""``(log_probs (n+1, n+1) [d, h], constraints or None) -> heads (n+1,)``."""


def _best(logits: torch.Tensor, never: int | None = None) -> torch.Tensor:
    """Best class per position, never a special entry (padding, unknown) nor class ``never``:
    ``(B, T, K)`` → ``(B, T)``. The tag vocabularies hold ROOT's own string (position 0 needs an
    id), which a word must never get: callers pass its index as ``never``."""
    if never is not None and never >= SPECIALS:
        logits = logits.clone()
        logits[..., never] = float("-inf")
    return logits[..., SPECIALS:].argmax(-1) + SPECIALS


def _labels(logits: torch.Tensor, heads: torch.Tensor, deprels: Vocabulary) -> np.ndarray[Any, Any]:
    """Best label per word at its chosen head, ``(B, T, K)`` and heads ``(B, T)`` → ``(B, T)``:
    ``root`` for the word attached to ROOT and for no other word, as UD requires (when the
    training trees had a ``root`` label; an under-trained network otherwise labels the root word
    like its neighbours)."""
    if "root" not in deprels.items:
        return _best(logits).cpu().numpy()
    root = deprels.items.index("root")
    logits = logits.clone()
    logits[..., root] = float("-inf")
    labels = _best(logits)
    labels[heads == 0] = root
    return labels.cpu().numpy()


def _joined_feats(choices: np.ndarray[Any, Any], values: Vocabulary,
                  groups: Sequence[tuple[str, list[int]]]) -> str:
    """The FEATS string of one word's chosen position in each category's group, ``(K,)``."""
    chosen = (values.items[ids[int(choice)]] for (_, ids), choice in zip(groups, choices, strict=True))
    return join_feats((pair[0], pair[1]) for pair in (item.split("=", 1) for item in chosen))


def decode_batch(network: JointNetwork, vocabularies: Mapping[str, Vocabulary], sentences: Sequence[Sentence],
                 constraints: Sequence[Constraints] | None, *, tree: TreeDecoder,
                 own_tags: bool = True, contextual: Contextual | None = None) -> list[Parse]:
    """Parses of non-empty ``sentences`` (one batch), under ``constraints`` when given.

    ``own_tags``: the network parsed from its own tags (not the input's), so its UPOS goes into
    ``Parse.upos`` and ``extras["own_tags"]`` is True; otherwise ``Parse.upos`` stays None (the
    input's tags are the ones parsed with) and the predicted UPOS is ``extras["upos"]``, with
    ``extras["upos_p"]`` its probability (``n+1`` floats, 1.0 at ROOT). ``extras["label_p"]`` is the
    probability of each word's label at its chosen head (``n+1`` floats, 1.0 at ROOT), and
    ``extras["head_top"]`` each word's :data:`TOP_HEADS` most probable heads with their
    probabilities before decoding (``n+1`` lists of ``[head, p]`` pairs, ROOT's empty).
    ``contextual``: the pretrained encoder whose vectors the network reads, if any. A revealing
    network (``config.reveal_dim``) also reads the forced arcs and labels as inputs."""
    network.eval()
    device = network.device
    given = constraints if network.config.reveal_dim and constraints is not None else None
    with torch.inference_mode():
        batch = encode(sentences, vocabularies, contextual, given=given).to(device)
        states, chars = network.encode(batch)
        scores = network.arc_scores(states, batch.lengths, batch.given_positions)
        log_probs = torch.log_softmax(scores, dim=-1).double().cpu().numpy()
        chosen = torch.zeros_like(batch.words)
        trees = []
        for b, sentence in enumerate(sentences):
            size = len(sentence) + 1
            heads = tree(log_probs[b, :size, :size], constraints[b] if constraints is not None else None)
            trees.append(heads)
            chosen[b, 1:size] = torch.from_numpy(heads[1:].astype(np.int64)).to(device)
        label_logits = network.label_scores(states, chosen)
        labels = _labels(label_logits, chosen, vocabularies["deprels"])
        label_p = torch.softmax(label_logits.float(), dim=-1).gather(
            -1, torch.from_numpy(labels.astype(np.int64)).to(device).unsqueeze(-1)).squeeze(-1).cpu().numpy()
        tag_logits = network.tag_logits(states, chars)
        tags = {name: _best(logits, vocabularies[name].index.get(ROOT)).cpu().numpy()
                for name, logits in tag_logits.items()}
        upos_p = torch.softmax(tag_logits["upos"].float(), dim=-1).gather(
            -1, torch.from_numpy(tags["upos"]).to(device).unsqueeze(-1)).squeeze(-1).cpu().numpy()
        feat_choices = (network.feat_logits(states).argmax(-1).cpu().numpy()
                        if network.config.feat_values else None)
        groups = feature_groups(vocabularies["featvals"]) if feat_choices is not None else []
    parses = []
    for b, (sentence, heads) in enumerate(zip(sentences, trees, strict=True)):
        size = len(sentence) + 1
        words = range(1, size)
        probability = np.exp(log_probs[b, np.arange(size), np.maximum(heads, 0)])
        probability[0] = np.nan
        top = np.argsort(-log_probs[b, 1:size, :size], axis=1)[:, :TOP_HEADS]
        columns = {name: [ROOT] + [vocabularies[name].items[tags[name][b, d]] for d in words]
                   for name in COLUMNS}
        if feat_choices is not None:
            columns["feats"] = [ROOT] + [_joined_feats(feat_choices[b, d], vocabularies["featvals"], groups)
                                         for d in words]
        scripts = [vocabularies["lemmas"].items[tags["lemmas"][b, d]] for d in words]
        lemmas = [ROOT, *(apply_script(sentence.forms[d], script)
                          for d, script in zip(words, scripts, strict=True))]
        parses.append(Parse(
            heads=np.asarray(heads, dtype=np.intp),
            deprels=[""] + [vocabularies["deprels"].items[labels[b, d]] for d in words],
            arc_scores=probability,
            upos=columns["upos"] if own_tags else None,
            extras={"upos": columns["upos"], "xpos": columns["xpos"], "feats": columns["feats"],
                    "lemmas": lemmas, "own_tags": own_tags,
                    "upos_p": [1.0, *(float(upos_p[b, d]) for d in words)],
                    "label_p": [1.0, *(float(label_p[b, d]) for d in words)],
                    "head_top": [[], *([[int(h), round(float(np.exp(log_probs[b, d, h])), 6)]
                                        for h in top[d - 1]] for d in words)]},
        ))
    return parses
