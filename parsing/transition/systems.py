"""The transition systems by name: arc-eager, arc-standard with SWAP, arc-hybrid.

Each lives in its own module (:mod:`~parsing.transition.arc_eager`,
:mod:`~parsing.transition.arc_swap`, :mod:`~parsing.transition.arc_hybrid`) with one
:class:`~parsing.transition.state.Move` per action.
"""

from __future__ import annotations

from parsing.transition.arc_eager import ArcEager
from parsing.transition.arc_hybrid import ArcHybrid
from parsing.transition.arc_swap import ArcSwap, SwapGold, static_oracle
from parsing.transition.state import TransitionSystem

SYSTEMS: dict[str, TransitionSystem] = {
    ArcEager.name: ArcEager(),
    ArcSwap.name: ArcSwap(),
    ArcHybrid.name: ArcHybrid(),
}
"""The systems, keyed by the ``system`` hyperparameter's values."""


def get_system(name: str) -> TransitionSystem:
    """The system called ``name`` (``"arc-eager"``, ``"arc-standard-swap"``, ``"arc-hybrid"``)."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise ValueError(f"unknown transition system {name!r}; choose from {sorted(SYSTEMS)}") from None


__all__ = ["SYSTEMS", "ArcEager", "ArcHybrid", "ArcSwap", "SwapGold", "get_system", "static_oracle"]
