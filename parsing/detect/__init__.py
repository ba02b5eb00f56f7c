"""Arc error detection: a calibrated probability that each arc of a tree is wrong (issue #32).

The ensemble's vote share cannot see errors its members make alike. The detector adds signals
that can (Che, Guo & Liu 2014's RADAR; Boyd, Dickinson & Meurers 2008; Dickinson 2010): which
members agree and how, the tags, label, length and direction of the arc, the configuration's
rarity in the training trees, and variation n-grams (the same words annotated differently
elsewhere in the treebank), combined by a gradient-boosted classifier trained on trees the
members were not trained on, jackknifed and calibrated.

* :mod:`~parsing.detect.counts`: the training trees' counts (configurations, variation);
* :mod:`~parsing.detect.features`: one feature row per word of a scored tree;
* :mod:`~parsing.detect.boosting`: scikit-learn's boosted trees as arrays (saved without pickle);
* :mod:`~parsing.detect.model`: :class:`ArcDetector`, :func:`fit_detector`, jackknifing, calibration;
* :mod:`~parsing.detect.bundle`: the detector in a model directory (fit, load, score, rank);
* :mod:`~parsing.detect.evaluate`: AUC, share of wrong arcs in the top, random corruption.
"""

from parsing.detect.counts import TreebankCounts
from parsing.detect.model import ArcDetector, ScoredTree, fit_detector, tree_of, wrong_arcs

__all__ = ["ArcDetector", "ScoredTree", "TreebankCounts", "fit_detector", "tree_of", "wrong_arcs"]
