"""Training the joint network: Adam (Dozat & Manning's settings), gradient clipping, early stopping
on dev LAS within an epoch limit and a wall-clock budget; seeded and deterministic on a CPU.

Dev LAS here is measured with each word's best-scoring head and label (no tree decoding): a fast
proxy, used only to choose the epoch.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from parsing.biaffine.averaging import WeightAverage, averaging_decay
from parsing.biaffine.batching import IGNORE, Batch, Contextual, encode
from parsing.biaffine.network import JointNetwork
from parsing.biaffine.runtime import adam
from parsing.biaffine.vocab import Vocabulary
from parsing.constraints import Constraints
from parsing.trees import depths
from parsing.types import Sentence

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """How long and how to train (the member's hyperparameters of the same names)."""

    max_epochs: int = 60
    max_seconds: float = 900.0
    patience: int = 8
    batch_size: int = 16
    batch_words: int = 0
    """With > 0, a training batch holds as many sentences of similar length as fit in this many
    words instead of ``batch_size`` sentences (:func:`batches`); 0: ``batch_size`` sentences."""
    learning_rate: float = 2e-3
    clip: float = 5.0
    seed: int = 0
    reveal: float = 0.0
    """Highest rate of revealed gold arcs (:func:`reveal_arcs`); 0: none."""
    reveal_errors: float = 0.0
    """Highest rate at which the network's own wrong heads are revealed too (:func:`reveal_arcs`)."""
    reveal_loss: bool = True
    """Keep the revealed arcs in the loss (False: their head and label targets are ignored)."""
    reveal_order: str = "random"
    """Which arcs are revealed: at random, a top-down prefix of the tree, or either (:func:`reveal_arcs`)."""
    morphology_weight: float = 1.0
    """Weight of the XPOS, FEATS and lemma losses beside UPOS, heads and labels
    (:meth:`~parsing.biaffine.network.JointNetwork.loss`)."""
    anneal: int = 0
    """At most this many more epochs at :data:`ANNEAL_FACTOR` times the learning rate, from the
    best epoch's weights with a fresh optimizer, once the first phase stops by patience or by
    ``max_epochs`` (UDPipe 2 ends with epochs at a tenth of its rate); 0: none. The phase has the
    same patience, ``max_seconds`` bounds both phases together (a first phase out of time is not
    annealed), and the best dev epoch of either phase is kept."""
    label_smoothing: float = 0.0
    """Share of each tag, lemma-script and label target's mass spread over all classes in the loss
    (not heads or FEATS category values; :meth:`~parsing.biaffine.network.JointNetwork.loss`);
    0: plain cross-entropy."""
    average: float = 0.0
    """With > 0, dev is scored, and the best epoch kept, with a running average of the weights
    over about this many epochs of updates (:mod:`parsing.biaffine.averaging`); 0: the weights
    as the last update left them."""


def member_settings(params: Mapping[str, Any], warm: bool) -> TrainSettings:
    """The training settings of a ``biaffine`` member (``params``: its ``get_params()``). A warm
    fit (``warm``: continuing a fitted network) trains at most ``warm_epochs`` epochs at
    ``warm_rate`` times the learning rate and is not annealed."""
    return TrainSettings(max_epochs=params["warm_epochs"] if warm else params["max_epochs"],
                         max_seconds=params["max_seconds"], patience=params["patience"],
                         batch_size=params["batch_size"], batch_words=params["batch_words"],
                         learning_rate=params["learning_rate"] * (params["warm_rate"] if warm else 1.0),
                         seed=params["random_state"], reveal=params["reveal"],
                         reveal_errors=params["reveal_errors"], reveal_loss=params["reveal_loss"],
                         reveal_order=params["reveal_order"], anneal=0 if warm else params["anneal"],
                         morphology_weight=params["morphology_weight"], average=params["average"],
                         label_smoothing=params["label_smoothing"])


ANNEAL_FACTOR = 0.1
"""The annealing phase's learning rate relative to the first phase's (:attr:`TrainSettings.anneal`)."""


def training_phases(learning_rate: float, max_epochs: int, anneal: int) -> list[tuple[float, int]]:
    """Each training phase's learning rate and most epochs: the first, then the annealing phase
    when ``anneal`` > 0 (both neural members train this way).

    Examples:
        >>> training_phases(2e-3, 60, 0)
        [(0.002, 60)]
        >>> [(round(rate, 6), epochs) for rate, epochs in training_phases(2e-3, 60, 10)]
        [(0.002, 60), (0.0002, 10)]
    """
    return [(learning_rate, max_epochs)] + ([(learning_rate * ANNEAL_FACTOR, anneal)] if anneal > 0 else [])


@dataclass(slots=True)
class History:
    """What training did: dev LAS per epoch, the chosen epoch, seconds, why it stopped."""

    dev_las: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0
    stopped: str = ""
    annealed_after: int = 0
    """The epoch after which the annealing phase began (0: none ran)."""


def batches(sentences: Sequence[Sentence], size: int, rng: np.random.Generator | None,
            words: int = 0) -> Iterator[list[Sentence]]:
    """``sentences`` in groups of similar length: ``size`` sentences each, or with ``words`` > 0
    as many as fit in ``words`` words (at least one; a longer sentence is a batch alone). When
    ``rng`` is given they are shuffled: random order, sorted by length within chunks of about 20
    batches, batch order shuffled.

    Examples:
        >>> sentences = [["w"] * n for n in (3, 1, 2, 5)]   # only their lengths are read
        >>> [[len(s) for s in group] for group in batches(sentences, 2, None)]
        [[1, 2], [3, 5]]
        >>> [[len(s) for s in group] for group in batches(sentences, 2, None, words=4)]
        [[1, 2], [3], [5]]
    """
    for group in batch_indices([len(sentence) for sentence in sentences], size, rng, words):
        yield [sentences[i] for i in group]


def batch_indices(lengths: Sequence[int], size: int, rng: np.random.Generator | None,
                  words: int = 0) -> list[list[int]]:
    """The groups of :func:`batches` as positions: ``lengths`` (words per sentence, shape
    ``(N,)``) → lists of indices into it, every index once.

    Examples:
        >>> batch_indices([3, 1, 2, 5], 2, None, words=4)
        [[1, 2], [0], [3]]
    """
    order = np.arange(len(lengths)) if rng is None else rng.permutation(len(lengths))
    costs, budget = (lengths, words) if words > 0 else ([1] * len(lengths), size)
    groups: list[list[int]] = []
    for part in _cut(order.tolist(), costs, budget * 20, keep_over=True):
        groups += _cut(sorted(part, key=lambda i: lengths[i]), costs, budget)
    if rng is not None:
        groups = [groups[i] for i in rng.permutation(len(groups))]
    return groups


def _cut(order: list[int], costs: Sequence[int], budget: int, keep_over: bool = False) -> list[list[int]]:
    """``order`` cut into consecutive runs whose ``costs`` sum to at most ``budget`` (each run at
    least one index), or with ``keep_over`` runs that end once they reach it.

    Examples:
        >>> _cut([0, 1, 2, 3], [2, 2, 1, 3], 4), _cut([0, 1, 2, 3], [2, 2, 1, 3], 3, keep_over=True)
        ([[0, 1], [2, 3]], [[0, 1], [2, 3]])
    """
    runs: list[list[int]] = []
    held = budget
    for index in order:
        if (held >= budget) if keep_over else (held + costs[index] > budget):
            runs.append([])
            held = 0
        runs[-1].append(index)
        held += costs[index]
    return runs


REVEAL_ORDERS = ("random", "top-down", "mixed")
"""Which gold arcs a revealing network is given in training (:func:`reveal_arcs`)."""


def top_down_prefix(heads: Sequence[int] | np.ndarray, count: int) -> set[int]:
    """The first ``count`` words with a known head in top-down reading order (depth in the gold
    tree, then position), the arcs an annotator who reads the skeleton first has confirmed or
    fixed after ``count`` words. ``heads``: ``(n+1,)``, ROOT first, ``-1`` for an unknown head.

    Examples:
        >>> sorted(top_down_prefix([-1, 2, 0, 2, 3], 2))   # the root word 2, then 1 (left of 3)
        [1, 2]
    """
    depth = depths(heads)
    known = [d for d in range(1, len(heads)) if heads[d] >= 0 and depth[d] >= 0]
    return set(sorted(known, key=lambda d: (int(depth[d]), d))[:count])


def reveal_arcs(sentences: Sequence[Sentence], reveal: float, rng: np.random.Generator, *,
                wrong: Sequence[Sequence[int]] | None = None,
                reveal_errors: float = 0.0, order: str = "random") -> list[Constraints]:
    """Gold arcs given as inputs while training a revealing network: per sentence a rate
    ``r ~ U(0, reveal)``, then each word with a known head is revealed (head and label) with
    probability ``r``, as an annotator's arcs would be at any point of a correction. With
    ``order="top-down"`` the revealed words are instead the first ``round(r * n)`` of the gold
    tree in top-down reading order (:func:`top_down_prefix`), as an annotator who fixes the
    skeleton first leaves them; ``"mixed"``: one or the other per sentence, at even odds. With
    ``wrong`` (per sentence the words whose head the network now gets wrong) each of those is
    also revealed with probability ``r_e ~ U(0, reveal_errors)`` (drawn per sentence): the arcs
    an annotator fixes are the parser's errors, and a random one mostly tells it what it knew."""
    if order not in REVEAL_ORDERS:
        raise ValueError(f"reveal_order is one of {', '.join(REVEAL_ORDERS)}, got {order!r}")
    given = []
    for index, sentence in enumerate(sentences):
        rate = rng.uniform(0.0, reveal) if reveal > 0 else 0.0
        draws = rng.random(len(sentence))
        in_order = order == "top-down" or (order == "mixed" and rng.random() < 0.5)
        if in_order:
            words = top_down_prefix(sentence.heads, round(rate * len(sentence)))
        else:
            words = {d for d in range(1, len(sentence) + 1) if draws[d - 1] < rate and sentence.heads[d] >= 0}
        if wrong is not None and reveal_errors > 0:
            error_rate = rng.uniform(0.0, reveal_errors)
            words |= {d for d in wrong[index] if rng.random() < error_rate and sentence.heads[d] >= 0}
        given.append(Constraints({d: int(sentence.heads[d]) for d in sorted(words)},
                                 {d: sentence.deprels[d] for d in sorted(words)}))
    return given


def wrong_heads(network: JointNetwork, batch: Batch) -> list[list[int]]:
    """Per sentence of ``batch`` the words whose best-scoring head (the network in eval mode,
    nothing given) is not the gold one; the network is left in training mode."""
    network.eval()
    with torch.no_grad():
        states, _ = network.encode(batch)
        heads = network.arc_scores(states, batch.lengths).argmax(-1)
    network.train()
    gold = batch.targets["heads"]
    wrong = (heads != gold) & (gold != IGNORE)
    return [torch.nonzero(row).flatten().tolist() for row in wrong]


def greedy_las(network: JointNetwork, sentences: Sequence[Sentence], vocabularies: Mapping[str, Vocabulary],
               size: int = 64, contextual: Contextual | None = None) -> float:
    """LAS (0..1) of the best head and label of each word (no tree constraint) on ``sentences``
    (``contextual``: the encoder whose vectors the network reads, if any), on the network's device."""
    network.eval()
    device = network.device
    right = total = 0
    with torch.inference_mode():
        for group in batches(sentences, size, None):
            batch = encode(group, vocabularies, contextual).to(device)
            states, _ = network.encode(batch)
            heads = network.arc_scores(states, batch.lengths).argmax(-1)
            labels = network.label_scores(states, heads).argmax(-1)
            gold_heads, gold_labels = batch.targets["heads"], batch.targets["deprels"]
            scored = gold_heads != IGNORE
            right += int(((heads == gold_heads) & (labels == gold_labels) & scored).sum())
            total += int(scored.sum())
    return right / max(total, 1)


def train_network(network: JointNetwork, train: Sequence[Sentence], dev: Sequence[Sentence],
                  vocabularies: Mapping[str, Vocabulary], settings: TrainSettings,
                  log: Log | None = None, contextual: Contextual | None = None,
                  device: torch.device | None = None, keep_start: bool = False) -> History:
    """Train ``network`` in place; it ends with the weights of its best dev epoch.

    ``keep_start``: the starting weights compete too, as epoch 0 (a warm fit continuing a fitted
    network keeps them when no epoch on the new trees does better on dev).

    ``device``: where the network trains (moved there first; None: where it is). Batches are
    built on the CPU and moved there; the batch order and revealed arcs come from numpy's
    seeded streams, the same on any device.

    The caller seeds torch (``torch.manual_seed``); batch order comes from ``settings.seed``.
    ``contextual``: the pretrained encoder whose vectors the network reads, if any. Frozen
    weights (pretrained word vectors) are not optimised. With ``settings.reveal`` each batch
    reads randomly revealed gold arcs (:func:`reveal_arcs`); dev LAS is measured with none.
    With ``settings.average`` dev is scored with the averaged weights, and those are kept.
    """
    say = log or (lambda message: None)
    if device is not None:
        network.to(device)
    device = network.device
    rng = np.random.default_rng(settings.seed)
    reveal_rng = np.random.default_rng([settings.seed, 1])  # its own stream: the batch order is unchanged
    trained = [parameter for parameter in network.parameters() if parameter.requires_grad]
    history = History()
    best_state = copy.deepcopy(network.state_dict())
    best = greedy_las(network, dev, vocabularies, contextual=contextual) if keep_start else -1.0
    average = _average(trained, train, settings)
    started = time.perf_counter()
    epoch = 0
    for phase, (rate, epochs) in enumerate(training_phases(settings.learning_rate, settings.max_epochs,
                                                           settings.anneal)):
        if phase:
            if history.stopped == "max_seconds":
                break
            network.load_state_dict(best_state)
            if average is not None:
                average.restart()
            history.annealed_after = epoch
            say(f"annealing from epoch {history.best_epoch}'s weights at learning rate {rate:g}")
        optimizer = adam(trained, rate)
        first = epoch
        for epoch in range(first + 1, first + epochs + 1):
            total, out_of_time = _epoch(network, optimizer, train, vocabularies, settings, (rng, reveal_rng),
                                        contextual, started + settings.max_seconds, average)
            with average.applied() if average is not None else nullcontext():
                las = greedy_las(network, dev, vocabularies, contextual=contextual)
                if las > best:
                    best, history.best_epoch = las, epoch
                    best_state = copy.deepcopy(network.state_dict())
            history.dev_las.append(las)
            say(f"epoch {epoch}: loss {total:.1f}, dev LAS (greedy) {100 * las:.2f}, "
                f"{time.perf_counter() - started:.0f}s")
            if out_of_time:
                history.stopped = "max_seconds"
                break
            if epoch - max(history.best_epoch, first) >= settings.patience:
                history.stopped = "patience"
                break
        else:
            history.stopped = "max_epochs"
    network.load_state_dict(best_state)
    network.eval()
    history.seconds = time.perf_counter() - started
    return history


def _average(trained: list[torch.nn.Parameter], train: Sequence[Sentence],
             settings: TrainSettings) -> WeightAverage | None:
    """The running average of ``trained`` that ``settings.average`` asks for (its decay from the
    number of batches in an epoch over ``train``), or None."""
    if settings.average <= 0:
        return None
    steps = len(batch_indices([len(sentence) for sentence in train], settings.batch_size, None,
                              settings.batch_words))
    return WeightAverage(trained, averaging_decay(settings.average, steps))


def _epoch(network: JointNetwork, optimizer: torch.optim.Optimizer, train: Sequence[Sentence],
           vocabularies: Mapping[str, Vocabulary], settings: TrainSettings,
           streams: tuple[np.random.Generator, np.random.Generator], contextual: Contextual | None,
           deadline: float, average: WeightAverage | None = None) -> tuple[float, bool]:
    """One pass of updates over ``train`` in shuffled batches (``streams``: the batch order's and
    the revealed arcs'); returns the summed loss and whether ``deadline`` (a ``perf_counter``
    time) passed, which ends the pass early. ``average``: updated after every step."""
    rng, reveal_rng = streams
    device = network.device
    network.train()
    total = 0.0
    for group in batches(train, settings.batch_size, rng, settings.batch_words):
        optimizer.zero_grad()
        given = None
        if settings.reveal_errors > 0:
            wrong = wrong_heads(network, encode(group, vocabularies, contextual).to(device))
            given = reveal_arcs(group, settings.reveal, reveal_rng, wrong=wrong,
                                reveal_errors=settings.reveal_errors, order=settings.reveal_order)
        elif settings.reveal > 0:
            given = reveal_arcs(group, settings.reveal, reveal_rng, order=settings.reveal_order)
        batch = encode(group, vocabularies, contextual, given=given, hide_given=not settings.reveal_loss)
        loss = network.loss(batch.to(device), settings.morphology_weight, settings.label_smoothing)
        loss.backward()  # type: ignore[no-untyped-call]
        nn_utils_clip(network, settings.clip)
        optimizer.step()
        if average is not None:
            average.update()
        total += float(loss.detach())
        if time.perf_counter() > deadline:
            return total, True
    return total, False


def nn_utils_clip(network: JointNetwork, clip: float) -> None:
    """Clip the gradients' global norm to ``clip``."""
    torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
