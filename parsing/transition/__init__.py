"""Transition-based dependency parsing: explicit, oracle-backed transition systems.

* :mod:`~parsing.transition.state`: :class:`Action`, :class:`State`, the system contract.
* :mod:`~parsing.transition.arc_eager`, :mod:`~parsing.transition.arc_hybrid` (exact
  dynamic oracles), :mod:`~parsing.transition.arc_swap` (non-projective, static oracle).
* :mod:`~parsing.transition.pseudo_projective`: lifting and its inverse.
* :mod:`~parsing.transition.parser`: :class:`TransitionParser` and the six ensemble
  members (``eager``, ``eager-rtl``, ``swap``, ``swap-rtl``, ``hybrid``, ``hybrid-rtl``).
* :mod:`~parsing.transition.decoding`: its labelled classes and greedy (and constrained)
  prediction.
* :mod:`~parsing.transition.training`: its weight rows and perceptron training epochs.
"""

from parsing.transition.parser import (
    MEMBERS,
    ArcEagerParser,
    ArcHybridParser,
    ArcSwapParser,
    TransitionParser,
    make_member,
)
from parsing.transition.state import Action, State, TransitionSystem
from parsing.transition.systems import SYSTEMS, ArcEager, ArcHybrid, ArcSwap, get_system

__all__ = [
    "MEMBERS",
    "SYSTEMS",
    "Action",
    "ArcEager",
    "ArcEagerParser",
    "ArcHybrid",
    "ArcHybridParser",
    "ArcSwap",
    "ArcSwapParser",
    "State",
    "TransitionParser",
    "TransitionSystem",
    "get_system",
    "make_member",
]
