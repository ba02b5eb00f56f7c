"""Scoring parsers by the CoNLL 2018 shared-task conventions.

* :mod:`parsing.scorer.metrics`: :func:`~parsing.scorer.metrics.evaluate` (UAS, LAS, CLAS,
  UPOS, exact match) and the arc table every other score is a function of.
* :mod:`parsing.scorer.types`: counts, scores and the arc table.
* :mod:`parsing.scorer.breakdowns`: scores by UPOS, relation, arc and sentence length.
* :mod:`parsing.scorer.significance`: paired tests (bootstrap, approximate randomisation,
  McNemar) for two parsers on the same gold sentences.
* :mod:`parsing.scorer.report`: JSON-ready dicts of an evaluation.
* :mod:`parsing.scorer.agreement`: inter-annotator agreement (UAS/LAS agreement, Cohen's kappa
  on labels) of two annotators' trees.
"""
