"""The neural ensemble member: an arc-hybrid transition parser whose action distribution is
a small feed-forward network in numpy, decoded with beam search into a k-best list with
tree probabilities (Titov 2008 ch. 5, simplified as in its CoNLL 2007 system; Chen &
Manning 2014).

Modules: :mod:`~parsing.neural.network` (the classifier, its gradients, Adam),
:mod:`~parsing.neural.features` (configuration features, vectorised),
:mod:`~parsing.neural.system` (the arc-hybrid wrapper), :mod:`~parsing.neural.search`
(greedy and beam decoding), :mod:`~parsing.neural.decoding` (k-best lists, posteriors,
constrained beams), :mod:`~parsing.neural.parser` (the estimator).
"""

from parsing.neural.parser import NeuralTransitionParser

__all__ = ["NeuralTransitionParser"]
