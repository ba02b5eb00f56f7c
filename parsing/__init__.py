"""arcvote's parsing library: dependency parsers, their ensembles and their evaluation.

A pure library (numpy, scikit-learn, conllu): it never imports a web framework or a
database layer, so a researcher can use it without the web application.

Conventions, written once and used by every module:

* A sentence of ``n`` words is indexed ``0..n``; index ``0`` is the artificial ROOT.
* ``heads`` is an integer array of shape ``(n+1,)`` with ``heads[0] == -1``;
  ``heads[d]`` is the head of word ``d`` (``0`` when ``d`` attaches to ROOT).
* ``deprels`` is a list of ``n+1`` strings aligned with ``heads``; ``deprels[0] == ""``.
* Arc scores are a float array ``scores`` of shape ``(n+1, n+1)`` with
  ``scores[dep, head]`` the score of ``head`` governing ``dep``, so
  ``scores.argmax(axis=1)`` is every word's greedy head. Row 0 (ROOT has no head) and the
  diagonal (no self-loops) are ``-inf``.
"""

from parsing.types import ROOT, Heads, Parse, Scores, Sentence

__all__ = ["ROOT", "Heads", "Parse", "Scores", "Sentence"]
__version__ = "0.1.0"
