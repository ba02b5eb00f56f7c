"""Ensembles of dependency parsers: combination by reparsing, and the confidence they give.

Every method is an :class:`~parsing.ensemble.base.Ensemble` (a :class:`~parsing.base.BaseParser`
meta-estimator over member parsers) whose per-sentence combination,
``combine(member_parses, sentence)``, can be run on member parses computed once, so methods
are compared over one set of fitted members (``Method.from_fitted(members, dev)``).

Methods: :class:`ArcVoting` (Sagae & Lavie 2006; Green 2013), :class:`FuzzyPosVoting`
(Green 2013), :class:`ScoreSum` (Razavi 2012), :class:`MetaClassifier` (Green 2013),
:class:`Stacking` (Martins et al. 2008), :class:`MinimumBayesRisk` (Titov 2008). Confidence
and disagreement for annotators: :mod:`parsing.ensemble.confidence`.

Conventions (see :mod:`parsing`): index 0 is ROOT; members' heads stacked as ``(M, n+1)``;
vote and score matrices ``[dep, head]`` of shape ``(n+1, n+1)``.
"""

from parsing.ensemble.base import WEIGHTINGS, Ensemble, member_accuracy, reparse, scheme_weights
from parsing.ensemble.fuzzy import FuzzyPosVoting, fuzzy_cmeans
from parsing.ensemble.mbr import MinimumBayesRisk, mbr_parse
from parsing.ensemble.meta_classifier import MetaClassifier
from parsing.ensemble.score_sum import ScoreSum, sum_scores
from parsing.ensemble.voting import ArcVoting, combine_votes, vote_matrix, vote_share

__all__ = [
    "WEIGHTINGS",
    "ArcVoting",
    "Ensemble",
    "FuzzyPosVoting",
    "MetaClassifier",
    "MinimumBayesRisk",
    "ScoreSum",
    "combine_votes",
    "fuzzy_cmeans",
    "mbr_parse",
    "member_accuracy",
    "reparse",
    "scheme_weights",
    "sum_scores",
    "vote_matrix",
    "vote_share",
]
