"""k-best reranking of the neural member with data-defined kernels (Titov 2008 ch. 6-7).

Modules: :mod:`~parsing.rerank.candidates` (k-best lists with derivations, re-derivation of
trees from other models, per-candidate LAS), :mod:`~parsing.rerank.replay` (hidden states and
action distributions along a derivation), :mod:`~parsing.rerank.features` (Fisher, TOP and
efficient-TOP features of the output layer, adaptation word slots),
:mod:`~parsing.rerank.extract` (feature matrices of candidate lists),
:mod:`~parsing.rerank.perceptron` (loss-scaled averaged perceptron),
:mod:`~parsing.rerank.reranker` (the estimator, saving and loading),
:mod:`~parsing.rerank.adapt` (retraining on reviewed sentences with word slots).
"""

from parsing.rerank.adapt import adapt, adaptation_words
from parsing.rerank.candidates import Candidates, beam_candidates, labelled_accuracy, rederived_candidates
from parsing.rerank.reranker import Reranker

__all__ = ["Candidates", "Reranker", "adapt", "adaptation_words", "beam_candidates", "labelled_accuracy",
           "rederived_candidates"]
