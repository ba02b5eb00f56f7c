"""The ``lstm-hybrid`` member: arc-hybrid transitions over BiLSTM features (Kiperwasser & Goldberg 2016).

Each word is a word embedding (learned from scratch, with word dropout), a character encoder's
vector and its UPOS embedding (the tags the pipeline gives every member: predicted or gold); a
BiLSTM reads the sentence, and an MLP scores every labelled action of an arc-hybrid
configuration from the vectors of s0, s1, s2 and b0 (:mod:`parsing.lstm_transition.network`).
Its errors differ from the graph-based ``biaffine`` member's (greedy, left to right, local
decisions), which is what a vote needs.

Training: the static oracle of the ``neural`` member (:func:`parsing.neural.system.oracle_move`;
non-projective trees lifted pseudo-projectively, restored after parsing), cross-entropy over the
valid actions of every oracle configuration, whole sentences per mini-batch (one BiLSTM pass
scores all of a sentence's ``2n`` configurations), Adam, early stopping on dev LAS (greedy
parses), a time budget. K&G's training with exploration (a dynamic oracle) is an option,
``explore`` (:mod:`parsing.lstm_transition.explore`), off by default.

Parsing reuses the ``neural`` member's beam search (:class:`parsing.neural.decoding.BeamDecoding`):
``beam_size`` hypotheses per sentence give a k-best list (``extras["kbest"]``, for minimum Bayes
risk), ``arc_scores`` are its posteriors of the chosen arcs, and constrained parsing keeps forced
arcs by pruning the moves that would make one unbuildable (arc-hybrid is arc-decomposable).

Saved without pickle (:mod:`parsing.persist`): configuration, vocabularies and labels as JSON,
weights as float32 arrays; loading rebuilds the network.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from parsing.base import BaseParser
from parsing.biaffine import held_out_split, require_torch
from parsing.lstm_transition.oracle import action_space, oracle_examples
from parsing.neural import system
from parsing.neural.decoding import BeamDecoding
from parsing.neural.search import Scorer
from parsing.scorer.metrics import evaluate
from parsing.types import Sentence

if TYPE_CHECKING:
    from parsing.biaffine.averaging import WeightAverage
    from parsing.biaffine.vocab import Vocabulary
    from parsing.lstm_transition.network import TransitionConfig, TransitionNetwork

IntArray = NDArray[np.int64]
_BATCH_NAMES = ("words", "chars", "upos", "xpos", "feats", "lemmas", "deprels")
_ACTION_LAYER = "mlp.3."
"""The action classifier's state names (a row per action: :func:`parsing.biaffine.warm.grown_actions`)."""


class LSTMTransitionParser(BeamDecoding, BaseParser):
    """Arc-hybrid parser scored by an MLP over BiLSTM vectors (module docstring).

    Args:
        word_dim, char_dim, char_hidden, char_encoder: the word's inputs (``char_encoder``
            ``"lstm"`` or ``"cnn"``, as the ``biaffine`` member's); tag_dim: its UPOS embedding
            (0: forms only).
        hidden, layers: the BiLSTM (``hidden`` units each way); mlp_dim: the action MLP's width.
        dropout, word_dropout: dropout on inputs, states and the MLP; the rate at which a
            training word becomes the unknown word.
        beam_size: hypotheses kept per sentence when parsing (1: greedy, as K&G).
        max_epochs, max_seconds, patience: training stops at the first of them (``patience``
            epochs without a better dev LAS); the best dev epoch's weights are kept.
        batch_size: sentences per update; learning_rate: Adam's step size.
        batch_words: with > 0, an update's sentences are of similar length and hold up to this
            many words (the ``biaffine`` member's batches, :func:`parsing.biaffine.training.batch_indices`);
            0 (the default): ``batch_size`` sentences in random order.
        explore: after the first epoch, train with exploration (:mod:`parsing.lstm_transition.explore`):
            the network parses its training sentences and learns the least-cost moves of the
            configurations it reaches, following its own wrong move with this probability
            (K&G: 0.9); 0 (the default) trains on the static oracle's configurations only (dev,
            gold tags, one seed: Tamil 69.68 -> 70.86 at 0.9, Telugu 84.14 -> 82.63: no reliable gain).
        anneal: at most this many more epochs at a tenth of the learning rate once the first
            phase stops by patience or its epochs, from its best weights with a fresh optimizer
            (as the ``biaffine`` member's ``anneal``); 0 (the default): none. Dev LAS (gold tags,
            greedy, 10 epochs, seeds 0 and 1): Tamil +0.95 and +0.55, Telugu 0 and 0.
        warm_start: fitting a fitted member continues its network (a warm round), as the
            ``biaffine`` member's (:mod:`parsing.biaffine.warm`): new words, tags and labels
            appended, at most ``warm_epochs`` epochs at ``warm_rate`` times ``learning_rate`` (1:
            best on dev, ``bench/warm_rate.py``), the starting weights kept unless one does better
            on dev; other layers start afresh.
        average: with > 0, dev is scored and the best epoch kept with a running average of the
            weights over about this many epochs, as the ``biaffine`` member's; 0: none.
        random_state: seed of initialisation, shuffling and dropout; threads: torch threads.

    Attributes:
        config_, vocabularies_, weights_: the network's sizes, vocabularies and weights.
        labels_, space_: the (pseudo-projective) labels and the labelled action space.
        history_: dev LAS per epoch, the best epoch, seconds and why training stopped.
    """

    name: ClassVar[str] = "lstm-hybrid"
    description: ClassVar[str] = "arc-hybrid over BiLSTM features (Kiperwasser & Goldberg 2016)"
    parse_cost: ClassVar[float] = 3.0
    explore: float = 0.0
    anneal: int = 0
    batch_words: int = 0
    warm_start: bool = False
    warm_epochs: int = 5
    warm_rate: float = 1.0
    average: float = 0.0
    """Settings added after the first models were saved: their defaults when a file lacks them."""

    def __init__(self, *, word_dim: int = 100, char_dim: int = 50, char_hidden: int = 50,
                 char_encoder: str = "lstm", tag_dim: int = 25, hidden: int = 200, layers: int = 2,
                 mlp_dim: int = 100, dropout: float = 0.33, word_dropout: float = 0.25, beam_size: int = 4,
                 max_epochs: int = 40, max_seconds: float = 900.0, patience: int = 5, batch_size: int = 16,
                 learning_rate: float = 1e-3, explore: float = 0.0, anneal: int = 0, random_state: int = 0,
                 threads: int | None = 1, verbose: bool = False, batch_words: int = 0,
                 warm_start: bool = False, warm_epochs: int = 5, warm_rate: float = 1.0,
                 average: float = 0.0) -> None:
        require_torch(self.name)
        self.word_dim = word_dim
        self.char_dim = char_dim
        self.char_hidden = char_hidden
        self.char_encoder = char_encoder
        self.tag_dim = tag_dim
        self.hidden = hidden
        self.layers = layers
        self.mlp_dim = mlp_dim
        self.dropout = dropout
        self.word_dropout = word_dropout
        self.beam_size = beam_size
        self.max_epochs = max_epochs
        self.max_seconds = max_seconds
        self.patience = patience
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.explore = explore
        self.anneal = anneal
        self.batch_words = batch_words
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.warm_rate = warm_rate
        self.average = average
        self.random_state = random_state
        self.threads = threads
        self.verbose = verbose

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Learn from the sentences with a single-rooted tree; ``dev`` (default: a seeded tenth of
        them held out) picks the epoch.

        Raises:
            ValueError: no single-rooted training tree, or a setting out of range.
        """
        import torch

        from parsing.biaffine.averaging import check_average
        from parsing.biaffine.batching import build_vocabularies
        from parsing.biaffine.runtime import seeded, threads_set
        from parsing.biaffine.training import training_phases
        from parsing.biaffine.warm import grown_with_actions
        from parsing.lstm_transition.network import TransitionNetwork

        if not 0.0 <= self.explore <= 1.0:
            raise ValueError(f"explore is a probability in [0, 1], got {self.explore}")
        if self.anneal < 0:
            raise ValueError(f"anneal is a number of epochs (0: none), got {self.anneal}")
        check_average(self.average)
        if self.batch_words < 0:
            raise ValueError(f"batch_words is a number of words per update (0: by batch_size), "
                             f"got {self.batch_words}")
        if self.warm_epochs < 1 or not self.warm_rate > 0.0:
            raise ValueError(f"warm_epochs is at least 1 and warm_rate above 0, got {self.warm_epochs}, "
                             f"{self.warm_rate}")
        if self.beam_size < 1 or self.batch_size < 1:
            raise ValueError(f"beam_size and batch_size are at least 1, got {self.beam_size}, "
                             f"{self.batch_size}")
        trees = [s for s in sentences if s.has_tree and len(s) > 0 and np.count_nonzero(s.heads == 0) == 1]
        if not trees:
            raise ValueError("the lstm-hybrid member needs a training sentence with a single-rooted tree")
        trees, held = held_out_split(trees, dev, self.random_state)
        lifted = [(s, *system.projectivize(s.heads, s.deprels)) for s in trees]
        labels = sorted({label for _, _, labels in lifted for label in labels[1:]})
        vocabularies = {name: v for name, v in build_vocabularies(trees).items() if name in _BATCH_NAMES}
        warm = self._continued(labels, vocabularies)
        if warm is not None:  # the fitted network's labels and vocabularies, new entries appended
            labels, vocabularies = warm[0] + [label for label in labels if label not in warm[0]], warm[1]
        self.labels_ = labels
        self.space_ = action_space(lifted, self.labels_)
        config = self._config(vocabularies, self.space_.n_actions)
        label_ids = {label: number for number, label in enumerate(self.labels_, start=1)}
        examples = [oracle_examples(heads, labels, self.space_, label_ids) for _, heads, labels in lifted]
        self.gold_cache = [(heads, [0, *(label_ids[x] for x in labels[1:])]) for _, heads, labels in lifted]
        rng = np.random.default_rng(self.random_state)
        log = (lambda message: print(f"[lstm-hybrid] {message}", file=sys.stderr)) if self.verbose else None
        device = torch.device("cpu")
        with seeded(self.random_state, self.threads, device), threads_set(self.threads):
            network = TransitionNetwork(config)
            if warm is not None:
                network.load_state_dict(grown_with_actions(warm[2], network.state_dict(), len(warm[0]),
                                                           _ACTION_LAYER))
            self.vocabularies_cache = vocabularies
            self.network_cache = network
            phases = (training_phases(self.learning_rate * self.warm_rate, self.warm_epochs, 0) if warm
                      else training_phases(self.learning_rate, self.max_epochs, self.anneal))
            history = self._train(network, trees, examples, held, rng, log, phases, bool(warm))
        del self.gold_cache
        self.config_ = config.as_dict()
        self.vocabularies_ = {name: list(vocabulary.items) for name, vocabulary in vocabularies.items()
                              if name in _BATCH_NAMES}
        self.weights_ = {key: value.detach().cpu().numpy().copy()
                         for key, value in network.state_dict().items()}
        self.history_ = {**history, "warm": warm is not None}
        network.eval()
        return self

    def _config(self, vocabularies: dict[str, Vocabulary], actions: int) -> TransitionConfig:
        from parsing.lstm_transition.network import TransitionConfig

        layers = ("word_dim", "char_dim", "char_hidden", "char_encoder", "tag_dim", "hidden", "layers",
                  "mlp_dim", "dropout", "word_dropout")
        return TransitionConfig(words=len(vocabularies["words"]), chars=len(vocabularies["chars"]),
                                upos=len(vocabularies["upos"]), actions=actions,
                                **{name: getattr(self, name) for name in layers})

    def _continued(self, labels: list[str], vocabularies: dict[str, Vocabulary]
                   ) -> tuple[list[str], dict[str, Vocabulary], dict[str, Any]] | None:
        """With ``warm_start`` on a fitted member whose layers this fit would build again, its
        labels, its vocabularies grown by ``vocabularies``' new entries, and its weights; else None."""
        from parsing.biaffine.warm import grown_vocabularies, same_layers
        from parsing.lstm_transition.network import TransitionConfig

        if not (self.warm_start and hasattr(self, "weights_") and hasattr(self, "labels_")):
            return None
        grown = grown_vocabularies(self.vocabularies_, vocabularies)
        if grown is None:
            return None
        wanted = self._config(grown, 2 * len(set(self.labels_) | set(labels)) + 1).as_dict()
        saved = {**TransitionConfig(**self.config_).as_dict(), "actions": wanted["actions"]}  # type: ignore[arg-type]
        if not same_layers(saved, wanted):
            return None
        return list(self.labels_), grown, dict(self.weights_)

    def _train(self, network: TransitionNetwork, trees: Sequence[Sentence],
               examples: Sequence[tuple[IntArray, NDArray[np.bool_], IntArray]], held: Sequence[Sentence],
               rng: np.random.Generator, log: Any, phases: list[tuple[float, int]],
               keep_start: bool = False) -> dict[str, Any]:
        """Epochs of mini-batches until the budget, the epochs or the patience run out, per phase
        (learning rate, most epochs: the first, then annealing if ``anneal``); the best dev epoch's
        weights of any phase are left in ``network`` (with ``keep_start``, the starting weights
        compete as epoch 0: a warm fit)."""
        from parsing.biaffine.averaging import WeightAverage, averaging_decay
        from parsing.biaffine.runtime import adam

        average = (WeightAverage(network.parameters(),
                                 averaging_decay(self.average, len(self._updates(trees, None))))
                   if self.average > 0 else None)
        started = time.perf_counter()
        best_state = {key: value.detach().clone() for key, value in network.state_dict().items()}
        start = 100 * evaluate(held, self.predict_greedy(held)).las.f1 if keep_start else -1.0
        scores: list[float] = []
        best_epoch, stopped, annealed_after, epoch = 0, "epochs", 0, 0
        for phase, (rate, epochs) in enumerate(phases):
            if phase:
                if stopped == "time":
                    break
                network.load_state_dict(best_state)
                annealed_after, stopped = epoch, "epochs"
                if average is not None:
                    average.restart()
            optimizer = adam(network.parameters(), rate)
            first = epoch
            for epoch in range(first + 1, first + epochs + 1):
                self._epoch(network, optimizer, trees, examples, rng, explore=self.explore > 0 and epoch > 1,
                            average=average)
                network.eval()
                with average.applied() if average is not None else nullcontext():
                    scores.append(100 * evaluate(held, self.predict_greedy(held)).las.f1)
                    if scores[-1] > max(scores[:-1], default=start):
                        best_epoch = epoch
                        best_state = {key: value.detach().clone()
                                      for key, value in network.state_dict().items()}
                if log is not None:
                    log(f"epoch {epoch}: dev LAS {scores[-1]:.2f} ({time.perf_counter() - started:.0f}s)")
                if best_epoch != epoch and epoch - max(best_epoch, first) >= self.patience:
                    stopped = "patience"
                    break
                if time.perf_counter() - started > self.max_seconds:
                    stopped = "time"
                    break
        network.load_state_dict(best_state)
        return {"dev_las": scores, "best_epoch": best_epoch, "annealed_after": annealed_after,
                "seconds": round(time.perf_counter() - started, 1), "stopped": stopped}

    def _epoch(self, network: TransitionNetwork, optimizer: Any, trees: Sequence[Sentence],
               examples: Sequence[tuple[IntArray, NDArray[np.bool_], IntArray]], rng: np.random.Generator,
               *, explore: bool, average: WeightAverage | None = None) -> None:
        """One pass of updates over ``trees`` in shuffled mini-batches: on the static oracle's
        configurations (``examples``), or with ``explore`` on those the network reaches;
        ``average``, if any, follows every update."""
        import torch

        from parsing.biaffine.batching import encode
        from parsing.lstm_transition.explore import exploration_loss
        from parsing.lstm_transition.network import offsets_of

        network.train()
        for chosen in self._updates(trees, rng):
            batch = encode([trees[i] for i in chosen], self.vocabularies_cache)
            table = network.table(network.states(batch), batch.lengths)
            offsets = offsets_of(batch.lengths).tolist()
            if explore:
                loss = exploration_loss(network, table, offsets, [self.gold_cache[i] for i in chosen],
                                        self.space_, self.explore, rng)
            else:
                rows = torch.from_numpy(np.concatenate([
                    np.where(examples[i][0] > 0, examples[i][0] - 1 + offset, 0)
                    for i, offset in zip(chosen, offsets, strict=True)]))
                valid = torch.from_numpy(np.concatenate([examples[i][1] for i in chosen]))
                gold = torch.from_numpy(np.concatenate([examples[i][2] for i in chosen]))
                logits = network.action_scores(table, rows).masked_fill(~valid, float("-inf"))
                loss = torch.nn.functional.cross_entropy(logits, gold)
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(network.parameters(), 5.0)
            optimizer.step()
            if average is not None:
                average.update()

    def _updates(self, trees: Sequence[Sentence], rng: np.random.Generator | None) -> list[list[int]]:
        """Each update's sentences (positions in ``trees``): ``batch_size`` at a time in random
        order (None: in order), or with ``batch_words`` of similar length up to that many words."""
        if self.batch_words > 0:
            from parsing.biaffine.training import batch_indices

            return batch_indices([len(tree) for tree in trees], self.batch_size, rng, self.batch_words)
        order = rng.permutation(len(trees)) if rng is not None else np.arange(len(trees))
        size = self.batch_size
        return [order[start:start + size].tolist() for start in range(0, len(order), size)]

    def _network(self) -> tuple[TransitionNetwork, dict[str, Vocabulary]]:
        """The network and vocabularies, rebuilt from the saved arrays on first use after loading."""
        if not hasattr(self, "weights_") and "network_cache" not in self.__dict__:
            raise ValueError("this LSTMTransitionParser is not fitted yet; call fit() or load()")
        if "network_cache" not in self.__dict__:
            require_torch(self.name)
            import torch

            from parsing.biaffine.vocab import Vocabulary
            from parsing.lstm_transition.network import TransitionConfig, TransitionNetwork

            network = TransitionNetwork(TransitionConfig(**self.config_))  # type: ignore[arg-type]
            network.load_state_dict({key: torch.from_numpy(np.array(value))
                                     for key, value in self.weights_.items()})
            network.eval()
            self.network_cache = network
            self.vocabularies_cache = {name: Vocabulary(list(items))
                                       for name, items in self.vocabularies_.items()}
        return self.network_cache, self.vocabularies_cache

    def _scorer(self, sentences: Sequence[Sentence]) -> tuple[Scorer, IntArray]:
        """A scorer over the BiLSTM vectors of ``sentences`` (one pass) and each one's ROOT row."""
        import torch

        from parsing.biaffine.batching import encode
        from parsing.biaffine.runtime import threads_set
        from parsing.lstm_transition.network import SLOTS, offsets_of

        network, vocabularies = self._network()
        with torch.inference_mode(), threads_set(self.threads):
            batch = encode(sentences, vocabularies)
            table = network.table(network.states(batch), batch.lengths)
        offsets = offsets_of(batch.lengths).numpy().astype(np.int64)

        def score(rows: IntArray, labels: IntArray, valid: NDArray[np.bool_]) -> NDArray[np.floating]:
            with torch.inference_mode(), threads_set(self.threads):
                logits = network.action_scores(table, torch.from_numpy(np.ascontiguousarray(rows[:, :SLOTS])))
                masked = logits.double().masked_fill(~torch.from_numpy(valid), float("-inf"))
                result: NDArray[np.floating] = torch.log_softmax(masked, dim=-1).numpy()
            return result

        return score, offsets

    def _encode(self, sentences: Sequence[Sentence]) -> tuple[IntArray, IntArray]:
        raise NotImplementedError("the lstm-hybrid member scores from its network (_scorer)")
