"""First-order (arc-factored) graph-based parser: McDonald, Crammer & Pereira (2005).

A tree's score is the sum of its arcs' scores; an arc's score is the sum of the weights of its
hashed features (:func:`parsing.graph.templates.arc_features`: head and dependent words,
lemmas, UPOS, XPOS, FEATS, suffixes, the UPOS around them and in between, each alone and
conjoined with direction and distance). The best tree is the maximum spanning tree
(Chu-Liu-Edmonds, non-projective, by default; Eisner with ``projective=True``), with exactly
one word attached to ROOT.

Conventions: index 0 is ROOT; ``scores[dep, head]`` has shape ``(n+1, n+1)``.
"""

from __future__ import annotations

import numpy as np

from parsing.clusters.lexicon import ClusterLexicon
from parsing.constraints import Constraints, decode_forced
from parsing.decoders.first_order import mst
from parsing.graph.model import GraphParser, Weights, _arc_scores
from parsing.graph.templates import IntArray
from parsing.meta.table import MetaTable
from parsing.types import Heads, Scores


class FirstOrderParser(GraphParser):
    """Arc-factored linear parser trained online (averaged perceptron or MIRA).

    Args:
        projective: decode with Eisner (projective trees) instead of Chu-Liu-Edmonds.
        max_iter: training epochs (with ``dev``, the best epoch up to this many is kept).
        warm_start: when fitting an already fitted parser, continue from its weights
            (vocabularies grow, the running average goes on) instead of starting over.
        warm_epochs: epochs of a warm fit (dev, if given, picks among them when more than one).
            One by default: in ``bench/warm_rounds.py`` (Wolof, Welsh; 1000 + 50 sentences) a
            second epoch doubled the warm time for a few hundredths of ensemble LAS.
        learner: ``"perceptron"`` (averaged structured perceptron) or ``"mira"`` (averaged
            1-best MIRA with Hamming loss).
        C: MIRA's cap on the step size (unused by the perceptron).
        patience: with ``dev``, stop after this many epochs without a better dev UAS.
        n_bits: features are hashed into ``2**n_bits`` weights.
        min_count: forms and lemmas seen fewer times in training are unknown words.
        labeller_C: regularisation of the :class:`~parsing.labeller.ArcLabeller`.
        random_state: seeds the order training sentences are visited in.
        clusters: word clusters as extra features (off with ``None``): a
            :class:`~parsing.clusters.lexicon.ClusterLexicon`, a saved one's path, or a spec
            (``"brown"``, ``"context:seed=1"``) learned at fit time from the training words
            plus ``cluster_text`` (:mod:`parsing.graph.cluster_templates`).
        cluster_text: a raw text file (one sentence per line) a clusters spec also learns from.
        meta: meta features (Chen et al. 2013; off with ``None``): a
            :class:`~parsing.meta.table.MetaTable`, a saved one's path, or a spec (``"auto"``,
            ``"auto:min_count=1"``): at fit time a baseline without them is trained, parses the
            training sentences (trees hidden) plus ``meta_text``, and its arcs' base features
            are ranked into classes (:mod:`parsing.meta`); then this parser is trained with base
            + meta features.
        meta_text: unlabelled sentences a meta spec also parses: a CoNLL-U file (tags used)
            or raw text, one sentence per line (tagged by a tagger trained on the training data).

    Attributes:
        encoder_: the :class:`~parsing.graph.templates.TokenEncoder` of the training data.
        weights_: averaged weights, shape ``(2**n_bits + 1,)`` (the last is the null feature).
        n_iter_: epochs the kept weights were trained for (warm fits included).
        raw_weights_, n_steps_: the perceptron's raw weights (float32) and step counter at
            the kept epoch, from which a warm fit resumes the average.
        dev_uas_: dev UAS after each epoch (empty without ``dev``).
        labeller_: the fitted :class:`~parsing.labeller.ArcLabeller`.
        lexicon_: the word clusters used (``None`` without ``clusters``).
        meta_table_: the meta-feature classes used (``None`` without ``meta``).

    Examples:
        >>> from parsing.types import Sentence
        >>> s = Sentence.from_words(["Dogs", "bark"], upos=["NOUN", "VERB"], heads=[2, 0],
        ...                         deprels=["nsubj", "root"])
        >>> parser = FirstOrderParser(max_iter=2, n_bits=16).fit([s, s])
        >>> parser.predict([s])[0].heads.tolist()
        [-1, 2, 0]
    """

    name = "graph1"
    parse_cost = 2.0
    description = "graph-based, first order (McDonald et al. 2005): arc-factored, Chu-Liu-Edmonds"

    def __init__(
        self,
        *,
        projective: bool = False,
        max_iter: int = 10,
        warm_start: bool = False,
        warm_epochs: int = 1,
        learner: str = "mira",
        C: float = 0.1,
        patience: int = 2,
        n_bits: int = 22,
        min_count: int = 2,
        labeller_C: float = 0.05,
        random_state: int | None = 0,
        clusters: ClusterLexicon | str | None = None,
        cluster_text: str | None = None,
        meta: MetaTable | str | None = None,
        meta_text: str | None = None,
    ) -> None:
        self.projective = projective
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.warm_epochs = warm_epochs
        self.learner = learner
        self.C = C
        self.patience = patience
        self.n_bits = n_bits
        self.min_count = min_count
        self.labeller_C = labeller_C
        self.random_state = random_state
        self.clusters = clusters
        self.cluster_text = cluster_text
        self.meta = meta
        self.meta_text = meta_text

    def _decode(self, tokens: IntArray, arcs: IntArray | None, weights: Weights,
                constraints: Constraints | None = None, scores: Scores | None = None) -> tuple[Heads, Scores]:
        if scores is None:
            if arcs is None:
                raise ValueError("_decode needs the arc features or their scores")
            scores = _arc_scores(arcs, weights)
        if constraints is not None:
            return decode_forced(scores, constraints, projective=self.projective), scores
        return mst(scores, projective=self.projective), scores

    def _tree_features(self, tokens: IntArray, arcs: IntArray, heads: Heads) -> IntArray:
        words = np.arange(1, len(heads))
        return arcs[words, heads[1:]].reshape(-1)
