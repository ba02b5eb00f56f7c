"""Tree decoders over arc score matrices (conventions in :mod:`parsing`).

* :mod:`parsing.decoders.first_order`: Eisner (projective), Chu-Liu-Edmonds
  (non-projective), :func:`~parsing.decoders.first_order.mst` choosing between them, and the
  last-resort tree.
* :mod:`parsing.decoders.second_order`: adjacent-sibling Eisner and non-projective
  rearrangement.
"""
