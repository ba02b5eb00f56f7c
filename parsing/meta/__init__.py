"""Meta features learned from auto-parsed text (Chen, Zhang & Zhang 2013).

A baseline parser parses unlabelled text; every word-bearing base feature found on the
predicted arcs is counted per template and ranked by frequency into a class (High, Middle,
Low; Other for features never seen or pruned): :mod:`~parsing.meta.table`. A meta parser then
adds, for every base feature on a candidate arc, the class alone, with the head's UPOS and with
the head's word (:mod:`~parsing.meta.templates`). :mod:`~parsing.meta.recipe` runs the whole
recipe from a short spec (``"auto"``, ``"auto:min_count=1"``).
"""

from parsing.meta.table import CLASS_NAMES, HIGH, LOW, MIDDLE, OTHER, MetaTable, rank_classes

__all__ = ["CLASS_NAMES", "HIGH", "LOW", "MIDDLE", "OTHER", "MetaTable", "rank_classes"]
