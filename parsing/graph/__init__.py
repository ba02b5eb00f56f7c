"""Graph-based dependency parsers: arc-factored (first order) and with siblings (second order).

* :mod:`parsing.graph.first_order`: :class:`~parsing.graph.first_order.FirstOrderParser`
  (member ``graph1``).
* :mod:`parsing.graph.second_order`: :class:`~parsing.graph.second_order.SecondOrderParser`
  (member ``graph2``).
* :mod:`parsing.graph.templates`: the token encoder and the vectorised feature templates.
* :mod:`parsing.graph.model`: the shared online training (averaged MIRA or perceptron),
  prediction and labelling (:class:`parsing.labeller.ArcLabeller`).

The parsers are imported from their modules (this package does not import them, so that
:mod:`parsing.labeller` can use :mod:`parsing.graph.templates` without an import cycle).
"""
