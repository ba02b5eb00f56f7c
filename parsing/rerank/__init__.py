"""k-best reranking with data-defined kernels (Titov 2008 ch. 6-7) of the neural member and of
the ISBN parser.

Modules: :mod:`~parsing.rerank.scoring` (what a reranker needs from the model that defines its
features, for both parsers), :mod:`~parsing.rerank.candidates` (k-best lists with derivations,
re-derivation of trees from other models, per-candidate LAS), :mod:`~parsing.rerank.replay`
and :mod:`~parsing.rerank.isbn_replay` (hidden states and decision distributions along a
derivation of the neural member and of the ISBN parser), :mod:`~parsing.rerank.features`
(Fisher, TOP and efficient-TOP features of the output layer, adaptation word slots),
:mod:`~parsing.rerank.extract` (feature matrices of candidate lists),
:mod:`~parsing.rerank.perceptron` (loss-scaled averaged perceptron),
:mod:`~parsing.rerank.reranker` (the estimator, saving and loading),
:mod:`~parsing.rerank.adapt` (retraining on reviewed sentences with word slots),
:mod:`~parsing.rerank.member` (``neural-rerank`` and ``isbn-rerank``).
"""

from parsing.rerank.adapt import adapt, adaptation_words
from parsing.rerank.candidates import Candidates, beam_candidates, labelled_accuracy, rederived_candidates
from parsing.rerank.reranker import Reranker
from parsing.rerank.scoring import ScoringModel, scoring_model

__all__ = ["Candidates", "Reranker", "ScoringModel", "adapt", "adaptation_words", "beam_candidates",
           "labelled_accuracy", "rederived_candidates", "scoring_model"]
