"""The ``biaffine`` member: a joint tagger, lemmatizer and biaffine parser (:mod:`parsing.biaffine`).

It predicts UPOS, XPOS, FEATS and lemmas (``Parse.extras["upos"]``, ``["xpos"]``, ``["feats"]``,
``["lemmas"]``: ``n+1`` strings each, ROOT's first) from the forms alone. With predicted tags
(``tag_inputs=False``) it parses from them and needs no tagger: ``Parse.upos`` is its UPOS and
``extras["own_tags"]`` is True, so the pipeline keeps them rather than writing the tagger's. With
``tag_inputs=True`` (what the pipeline gives it with gold tags) it also reads the input's UPOS,
XPOS and FEATS, and ``Parse.upos`` stays None like the other members'. Trees are decoded with
Chu-Liu-Edmonds (one ROOT child) over the log-probabilities of the heads; ``arc_scores`` holds
the head probability of each chosen arc (a softmax over the word's candidate heads).

Bring your own representations (where a pretrained model exists for the language; UDPipe 2's
lead over the same architecture is mostly its pretrained representations):

* ``vectors=PATH``: word vectors from a text ``.vec`` file (fastText / word2vec text format,
  :mod:`parsing.biaffine.vectors`), a frozen table beside the learned word embeddings, for the
  training words (looked up exactly, else lower-cased) and the file's first ``vectors_limit``
  words, so words never seen in training get a vector too. The table is saved in the model file.
* ``encoder=DIRECTORY``: a local pretrained encoder (BERT-like, as ``save_pretrained`` wrote it)
  loaded with ``transformers`` and ``local_files_only=True`` (no network); its last layer,
  averaged over each word's subword pieces, is extra word input (:mod:`parsing.biaffine.contextual`).
  The model file records the directory; parsing loads the encoder from it again.

Reading the annotator's arcs (``reveal > 0``): trained with randomly revealed gold arcs as
inputs (:func:`parsing.biaffine.training.reveal_arcs`), the network reads an embedding of each
word's given head offset and label before the BiLSTM; under constraints (the editor's re-parse)
the forced arcs are its inputs as well as forced in decoding, so a human arc changes its
neighbours' scores, not only the tree. Measured in ``docs/library.md`` ("Reading the annotator's
arcs"; Wolof: without ``reveal_cross`` 0.4-6.4% fewer edits than one by one, with it 11-21%).

Saved without pickle (:mod:`parsing.persist`): the configuration and vocabularies as JSON, the
weights as float32 arrays; loading rebuilds the ``torch.nn.Module``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from parsing.base import BaseParser
from parsing.biaffine import TRANSFORMERS_HINT, held_out_split, require_torch
from parsing.biaffine.feats import group_matrix
from parsing.biaffine.runtime import resolve_device, seeded, threads_set
from parsing.constraints import Constraints, finish_parse, force_scores, validate_all
from parsing.decoders.first_order import chu_liu_edmonds
from parsing.types import NO_HEAD, ROOT, Parse, Sentence

if TYPE_CHECKING:
    from parsing.biaffine.batching import Contextual
    from parsing.biaffine.network import JointNetwork
    from parsing.biaffine.vocab import Vocabulary

_PARSE_BATCH = 64


def _annotated_only(sentence: Sentence) -> Sentence:
    """A partial tree's sentence with the arcs nobody set or confirmed unknown (left out of the loss)."""
    if not sentence.partial or sentence.annotated is None:
        return sentence
    heads = np.where(sentence.annotated, sentence.heads, NO_HEAD)
    return replace(sentence, heads=heads, annotated=None)


class BiaffineParser(BaseParser):
    """Joint neural tagger-parser: char + word embeddings, BiLSTM, biaffine arcs and labels.

    Args:
        tag_inputs: read the input's UPOS, XPOS and FEATS (gold tags); False: forms only.
        upos_inputs: with ``tag_inputs`` False, read the input's UPOS (with predicted tags the
            tagger's, :attr:`~parsing.types.Sentence.tagger_upos`; the gold UPOS stay the targets),
            as Stanza's parser reads its tagger's tags; it still predicts all four columns.
        word_dim, char_dim, char_hidden, hidden, layers, arc_dim, label_dim, dropout,
            word_dropout: layer sizes and regularisation (:class:`~parsing.biaffine.network.NetworkConfig`).
        char_encoder: ``"lstm"`` (default: a character BiLSTM) or ``"cnn"`` (convolutions of
            widths 2-4, max-pooled; :class:`~parsing.biaffine.network.CharCNN`).
        feats: ``"whole"`` (default: one class per FEATS string seen in training) or
            ``"categories"`` (each category's value chosen on its own, the string composed:
            :mod:`parsing.biaffine.feats`).
        max_epochs, max_seconds, patience, batch_size, learning_rate: training (``patience``
            epochs without a better dev LAS stop it; :class:`~parsing.biaffine.training.TrainSettings`).
        vectors: a ``.vec`` file of pretrained word vectors (module docstring), or None.
        vectors_limit: how many of the file's first words are kept beyond the training words.
        encoder: a local pretrained encoder directory (module docstring), or None.
        random_state: seeds the weights, dropout and batch order.
        device: ``"auto"`` (default: a CUDA GPU when PyTorch sees one, else the CPU) or ``"cpu"``
            (:func:`~parsing.biaffine.runtime.resolve_device`); model files hold CPU arrays.
        threads: torch threads while fitting and parsing (None: one per core). One by default:
            on our shared 2-core machines two ran 10-20× slower when other processes kept the
            cores busy (spinning threads).
        verbose: print each epoch's dev LAS to stderr.
        reveal: highest rate of gold arcs revealed as inputs in training (module docstring);
            0 (default): the network reads no given arcs and trains exactly as before.
        reveal_errors: highest rate at which the words the network gets wrong (its best heads
            before each training step) are revealed as well (per sentence ``r_e ~ U(0,
            reveal_errors)``): an annotator's fixes are the parser's errors. 0: random arcs only.
        reveal_dim: size of the given-head and given-label embeddings when either rate is > 0.
        reveal_cross: also add a learned bias to every arc by the number of given arcs it
            crosses (0 to 3 or more): a fixed attachment then bounds the words it spans.
        reveal_loss: keep the revealed arcs in the training loss (module docstring).
        reveal_order: which gold arcs are revealed (:func:`~parsing.biaffine.training.reveal_arcs`):
            ``"random"`` (default), ``"top-down"`` (a prefix of the tree) or ``"mixed"``.
        anneal: at most this many more epochs at a tenth of the learning rate once the first
            phase ends (:attr:`~parsing.biaffine.training.TrainSettings.anneal`); 0 (default):
            none (the member alone gains dev LAS with 10, the default ensemble over it did not).
        morphology_weight: weight of the XPOS, FEATS and lemma losses in training beside the
            UPOS, head and label losses (1: all alike, as UDPipe 2 sums them).
        batch_words: with > 0, a training batch holds sentences of similar length up to this
            many words instead of ``batch_size`` sentences (every word weighs alike in the loss);
            0 (default: the member alone gains dev LAS with 256, the ensemble over it did not;
            ``docs/library.md``, "Batches by words").
        warm_start: fitting a fitted member continues its network (a warm round): known words,
            tags and labels keep their weights, new ones are added (:mod:`parsing.biaffine.warm`),
            and at most ``warm_epochs`` epochs on the new trees follow at ``warm_rate`` times
            ``learning_rate`` (0.3: best on dev, ``bench/warm_rate.py``), the starting weights kept
            unless one does better on dev. Not with ``vectors`` or ``encoder``, nor after a change
            of layers: those start afresh.
        average: with > 0 (default 4), dev is scored and the best epoch kept with a running
            average of the weights over about this many epochs (:mod:`parsing.biaffine.averaging`;
            dev LAS gained on all six treebanks measured); 0: the last update's weights.
        label_smoothing: share of each tag or label target spread over all classes (0.03, as UDPipe 2).

    Raises:
        ImportError: PyTorch is not installed, or ``encoder`` is given and ``transformers`` is
            not (the message says what to install).
    """

    name: ClassVar[str] = "biaffine"
    description: ClassVar[str] = ("joint neural tagger-parser: character BiLSTM + word embeddings, "
                                  "BiLSTM encoder, biaffine arcs and labels (Dozat & Manning 2017)")
    parse_cost: ClassVar[float] = 9.0  # Tamil test: 2,400 words/s (one thread), a transition member 21,000
    gives_arc_probabilities: ClassVar[bool] = True  # arc_scores: the chosen head's softmax probability
    vectors: str | None = None  # the defaults of models saved before these settings existed
    vectors_limit: int = 20_000
    encoder: str | None = None
    reveal: float = 0.0
    reveal_dim: int = 32
    reveal_loss: bool = True
    reveal_errors: float = 0.0
    reveal_cross: bool = False
    reveal_order: str = "random"
    anneal: int = 0
    upos_inputs: bool = False
    morphology_weight: float = 1.0
    batch_words: int = 0
    warm_start: bool = False
    warm_epochs: int = 5
    warm_rate: float = 0.3
    average: float = 0.0  # models saved before it trained without averaging
    label_smoothing: float = 0.0  # models saved before it trained without
    device: str = "auto"
    char_encoder: str = "lstm"
    feats: str = "whole"

    def __init__(self, *, tag_inputs: bool = False, upos_inputs: bool = False, word_dim: int = 100,
                 char_dim: int = 50, char_hidden: int = 50, char_encoder: str = "lstm", feats: str = "whole",
                 hidden: int = 200, layers: int = 2,
                 arc_dim: int = 256, label_dim: int = 100, dropout: float = 0.33, word_dropout: float = 0.2,
                 max_epochs: int = 60, max_seconds: float = 900.0, patience: int = 8, batch_size: int = 16,
                 learning_rate: float = 2e-3, vectors: str | None = None, vectors_limit: int = 20_000,
                 encoder: str | None = None, random_state: int = 0, device: str = "auto",
                 threads: int | None = 1,
                 verbose: bool = False, reveal: float = 0.0, reveal_dim: int = 32,
                 reveal_loss: bool = True, reveal_errors: float = 0.0, reveal_cross: bool = False,
                 reveal_order: str = "random", anneal: int = 0, morphology_weight: float = 1.0,
                 batch_words: int = 0, warm_start: bool = False, warm_epochs: int = 5,
                 warm_rate: float = 0.3, average: float = 4.0, label_smoothing: float = 0.03) -> None:
        require_torch()
        if encoder is not None and importlib.util.find_spec("transformers") is None:
            raise ImportError(TRANSFORMERS_HINT)
        self.tag_inputs = tag_inputs
        self.upos_inputs = upos_inputs
        self.word_dim = word_dim
        self.char_dim = char_dim
        self.char_hidden = char_hidden
        self.char_encoder = char_encoder
        self.feats = feats
        self.hidden = hidden
        self.layers = layers
        self.arc_dim = arc_dim
        self.label_dim = label_dim
        self.dropout = dropout
        self.word_dropout = word_dropout
        self.max_epochs = max_epochs
        self.max_seconds = max_seconds
        self.patience = patience
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.vectors = vectors
        self.vectors_limit = vectors_limit
        self.encoder = encoder
        self.random_state = random_state
        self.device = device
        self.threads = threads
        self.verbose = verbose
        self.reveal = reveal
        self.reveal_dim = reveal_dim
        self.reveal_loss = reveal_loss
        self.reveal_errors = reveal_errors
        self.reveal_cross = reveal_cross
        self.reveal_order = reveal_order
        self.anneal = anneal
        self.morphology_weight = morphology_weight
        self.batch_words = batch_words
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.warm_rate = warm_rate
        self.average = average
        self.label_smoothing = label_smoothing

    @property
    def reads_constraints(self) -> bool:
        """The fitted network reads forced arcs as inputs (``reveal > 0``), so a re-parse under
        constraints can move arcs its unconstrained parse already had right or wrong."""
        config = self.__dict__.get("config_")
        return bool(config is not None and config.get("reveal_dim", 0))

    def fit(self, sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None) -> Self:
        """Train on ``sentences``; stop early on ``dev`` (default: a seeded tenth of ``sentences``
        held out). The weights of the best dev epoch are kept."""
        from parsing.biaffine.batching import build_vocabularies, vocabulary_sizes
        from parsing.biaffine.checks import check_settings
        from parsing.biaffine.network import JointNetwork, NetworkConfig
        from parsing.biaffine.training import REVEAL_ORDERS, member_settings, train_network
        from parsing.biaffine.warm import grown_state

        check_settings(self.get_params(), REVEAL_ORDERS)
        device = resolve_device(self.device)
        train = [_annotated_only(s) for s in sentences if len(s) > 0]
        if not train:
            raise ValueError("the biaffine member needs at least one non-empty training sentence")
        train, held = held_out_split(train, dev, self.random_state)
        vocabularies = build_vocabularies(train, feature_categories=self.feats == "categories")
        grown = self._continued(vocabularies)
        vocabularies = grown or vocabularies  # a warm fit: the fitted network's vocabularies, grown
        sizes, groups = vocabulary_sizes(vocabularies)
        table = None
        if self.vectors is not None:
            from parsing.biaffine.vectors import read_vectors

            words = {form for sentence in train for form in sentence.forms[1:]}
            vectors = read_vectors(self.vectors, words, limit=self.vectors_limit)
            vocabularies["pretrained"] = vectors.vocabulary()
            table = vectors.table()
            sizes.update(pretrained=table.shape[0], pretrained_dim=vectors.dim)
        contextual = None
        if self.encoder is not None:
            from parsing.biaffine.contextual import load_encoder

            contextual = load_encoder(self.encoder, cache=True)  # each sentence encoded once
            sizes["encoder_dim"] = contextual.dim
        config = NetworkConfig(**sizes, **self._layer_params())
        log = (lambda message: print(f"[biaffine] {message}", file=sys.stderr)) if self.verbose else None
        with seeded(self.random_state, self.threads, device):
            network = JointNetwork(config)
            state = grown_state(self.__dict__["weights_"], network.state_dict()) if grown else None
            if state is not None:
                network.load_state_dict(state)
            warm = state is not None
            if groups:
                network.get_buffer("feat_groups").copy_(group_matrix(groups, config.feat_width))
            if table is not None:
                import torch

                with torch.no_grad():
                    network.pretrained.weight.copy_(torch.from_numpy(table))
            settings = member_settings(self.get_params(), warm)
            history = train_network(network, train, held, vocabularies, settings, log, contextual, device,
                                    keep_start=warm)
        if contextual is not None:
            contextual.cache = None  # the training sentences' vectors are not kept
        self.config_ = config.as_dict()
        self.vocabularies_ = {name: list(vocabulary.items) for name, vocabulary in vocabularies.items()}
        self.weights_ = {key: value.detach().cpu().numpy().copy()
                         for key, value in network.state_dict().items()}
        self.history_ = {"dev_las": history.dev_las, "best_epoch": history.best_epoch,
                         "seconds": history.seconds, "stopped": history.stopped, "device": device.type,
                         "annealed_after": history.annealed_after, "warm": warm}
        self.network_cache = network
        self.vocabularies_cache = vocabularies
        self.contextual_cache = contextual
        return self

    def _continued(self, vocabularies: dict[str, Vocabulary]) -> dict[str, Vocabulary] | None:
        """With ``warm_start`` on a fitted member whose layers this fit would build again, its
        vocabularies grown by ``vocabularies``' new entries (:mod:`parsing.biaffine.warm`); else
        None: a cold fit (always with ``vectors`` or ``encoder``, whose tables are read afresh)."""
        from parsing.biaffine.batching import vocabulary_sizes
        from parsing.biaffine.network import NetworkConfig
        from parsing.biaffine.warm import grown_vocabularies, same_layers

        if not (self.warm_start and hasattr(self, "weights_")) or self.vectors or self.encoder:
            return None
        grown = grown_vocabularies(self.vocabularies_, vocabularies)
        if grown is None:
            return None
        wanted = NetworkConfig(**vocabulary_sizes(grown)[0], **self._layer_params())
        saved = NetworkConfig(**self.config_)  # type: ignore[arg-type]
        return grown if same_layers(saved.as_dict(), wanted.as_dict()) else None

    def _layer_params(self) -> dict[str, Any]:
        """The :class:`~parsing.biaffine.network.NetworkConfig` fields that no vocabulary sets."""
        names = ("tag_inputs", "word_dim", "char_dim", "char_hidden", "char_encoder", "hidden", "layers",
                 "arc_dim", "label_dim", "dropout", "word_dropout")
        revealing = self.reveal > 0 or self.reveal_errors > 0
        return {**{name: getattr(self, name) for name in names},
                "upos_input": self.upos_inputs and not self.tag_inputs,
                **({"reveal_dim": self.reveal_dim, "reveal_cross": self.reveal_cross} if revealing else {})}

    def _network(self) -> tuple[JointNetwork, dict[str, Vocabulary]]:
        """The network and vocabularies, rebuilt from the saved arrays on first use after loading
        (and the encoder loaded from its directory again, when the network reads one)."""
        if not hasattr(self, "weights_"):
            raise ValueError("this BiaffineParser is not fitted yet; call fit() or load()")
        if "network_cache" not in self.__dict__:
            require_torch()
            import torch

            from parsing.biaffine.network import JointNetwork, NetworkConfig
            from parsing.biaffine.vectors import vectors_vocabulary
            from parsing.biaffine.vocab import SPECIALS, Vocabulary

            config = NetworkConfig(**self.config_)  # type: ignore[arg-type]
            contextual = None
            if config.encoder_dim:
                from parsing.biaffine.contextual import load_encoder

                if self.encoder is None:
                    raise ValueError("this biaffine model reads a pretrained encoder, but names no directory")
                contextual = load_encoder(self.encoder)
                if contextual.dim != config.encoder_dim:
                    raise ValueError(f"the encoder at {self.encoder} gives vectors of size {contextual.dim}; "
                                     f"this model was trained with size {config.encoder_dim}")
            network = JointNetwork(config)
            network.load_state_dict({key: torch.from_numpy(np.array(value))
                                     for key, value in self.weights_.items()})
            network.to(resolve_device(self.device))
            network.eval()
            self.network_cache = network
            self.vocabularies_cache = {name: Vocabulary(list(items)) if name != "pretrained"
                                       else vectors_vocabulary(list(items[SPECIALS:]))
                                       for name, items in self.vocabularies_.items()}
            self.contextual_cache = contextual
        return self.network_cache, self.vocabularies_cache

    def _contextual(self) -> Contextual | None:
        """The encoder the network reads (after :meth:`_network`), or None."""
        contextual: Contextual | None = self.__dict__.get("contextual_cache")
        return contextual

    def predict(self, sentences: Sequence[Sentence]) -> list[Parse]:
        """Trees, labels, tags and lemmas of ``sentences`` (module docstring)."""
        return self._parse(sentences, None)

    def predict_constrained(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints],
                            *, free: Sequence[Parse] | None = None) -> list[Parse]:
        """Trees containing every forced arc (forced rows of the log-probability matrix, then
        Chu-Liu-Edmonds), forced labels written over the predicted ones; a revealing network
        (``reveal > 0``) also reads the forced arcs and labels as inputs."""
        validate_all([len(s) for s in sentences], constraints)
        parses = self._parse(sentences, constraints)
        return [finish_parse(parse, forced) for parse, forced in zip(parses, constraints, strict=True)]

    def _parse(self, sentences: Sequence[Sentence], constraints: Sequence[Constraints] | None) -> list[Parse]:
        with threads_set(self.threads):
            return self._parse_all(sentences, constraints)

    def _parse_all(self, sentences: Sequence[Sentence],
                   constraints: Sequence[Constraints] | None) -> list[Parse]:
        from parsing.biaffine.decoding import decode_batch

        network, vocabularies = self._network()
        results: list[Parse | None] = [None] * len(sentences)
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        for index in order:
            if len(sentences[index]) == 0:
                results[index] = Parse(np.array([NO_HEAD], dtype=np.intp), [""], np.array([np.nan]), [ROOT])
        order = [i for i in order if results[i] is None]
        for start in range(0, len(order), _PARSE_BATCH):
            chunk = order[start:start + _PARSE_BATCH]
            forced = [constraints[i] for i in chunk] if constraints is not None else None
            for i, parse in zip(chunk, decode_batch(network, vocabularies, [sentences[i] for i in chunk],
                                                    forced, tree=_tree, own_tags=not self.tag_inputs,
                                                    contextual=self._contextual()),
                                     strict=True):
                results[i] = parse
        return [parse for parse in results if parse is not None]


def _tree(log_probs: np.ndarray[Any, np.dtype[np.float64]],
          forced: Constraints | None) -> np.ndarray[Any, Any]:
    """Chu-Liu-Edmonds (one ROOT child) over ``log_probs[d, h]``, ``(n+1, n+1)``, forced rows kept."""
    scores = force_scores(log_probs, forced) if forced is not None else log_probs
    heads: np.ndarray[Any, Any] = chu_liu_edmonds(scores)
    return heads
